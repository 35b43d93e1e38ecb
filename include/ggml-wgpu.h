/*
 * ggml-wgpu: a ggml backend on WebGPU (wgpu-native, Vulkan).
 *
 * Load the library like any dynamic ggml backend:
 *   GGML_BACKEND_PATH=/path/to/libggml-wgpu.so   (picked up by ggml_backend_load_all)
 *   ggml_backend_load("/path/to/libggml-wgpu.so")
 * or link it and call ggml_backend_wgpu_reg() / ggml_backend_register().
 *
 * Registry "WGPU", one device per selected WebGPU adapter: "WGPU0", "WGPU1", ...
 */
#ifndef GGML_WGPU_H
#define GGML_WGPU_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_backend_reg;
struct ggml_backend;

/* The entry points every dynamic ggml backend exports. */
struct ggml_backend_reg *ggml_backend_init(void);
/* 0 when no WebGPU adapter can be opened on this machine (hosts then skip the library). */
int ggml_backend_score(void);

/* The registry; the same pointer on every call. */
struct ggml_backend_reg *ggml_backend_wgpu_reg(void);
/* Whether a backend instance belongs to this library. */
bool ggml_backend_is_wgpu(struct ggml_backend *backend);
/* Number of devices the registry exposes. */
size_t ggml_backend_wgpu_device_count(void);

#ifdef __cplusplus
}
#endif
#endif
