#ifndef GGML_WGPU_VKMEM_H
#define GGML_WGPU_VKMEM_H
#include <stdint.h>
// gw_vk_memory reports the device-local memory of the Vulkan physical device with the
// given vendor and device IDs: total heap size and free bytes (budget minus usage when
// VK_EXT_memory_budget exists, else the total). Returns 0 when it cannot tell.
int gw_vk_memory(uint32_t vendor, uint32_t device, uint64_t *total, uint64_t *free_bytes);
#endif
