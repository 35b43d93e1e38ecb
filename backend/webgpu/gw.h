// Small C helpers over the wgpu-native API: the parts that need C callbacks (device
// request, error scopes, buffer mapping, completion tracking) so that no Go memory is ever
// held by C code.
#ifndef GGML_WGPU_GW_H
#define GGML_WGPU_GW_H
#include "wgpu_api.h"

typedef struct gw_device {
    WGPUDevice device;
    WGPUQueue queue;
    uint64_t submitted;   // sequence number of the last submission
    uint64_t completed;   // highest sequence number known to be complete
    int error_count;      // uncaptured errors seen so far
    char last_error[1024];
} gw_device;

size_t gw_enumerate(WGPUInstance inst, WGPUAdapter *out, size_t max);
gw_device *gw_open(WGPUAdapter adapter, const WGPULimits *limits, char *err, size_t errlen);
void gw_close(gw_device *d);
// gw_push_scope opens validation and out-of-memory error scopes.
void gw_push_scope(gw_device *d);
// gw_pop_scope returns 0 when the scope saw no error, else copies the message to err.
int gw_pop_scope(gw_device *d, char *err, size_t errlen);
uint64_t gw_submit(gw_device *d, WGPUCommandBuffer cb);
void gw_wait(gw_device *d, uint64_t seq);
void gw_poll(gw_device *d);
// gw_read copies size bytes at offset of src (both multiples of 4) into dst through the
// mappable staging buffer (at least size bytes). Returns 0 on success.
int gw_read(gw_device *d, WGPUBuffer src, uint64_t offset, uint64_t size, WGPUBuffer staging, void *dst);
// gw_dispatch sets the pipeline and bind group (one dynamic offset) and dispatches: one
// call across the cgo boundary per dispatch.
void gw_dispatch(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t offset,
                 uint32_t x, uint32_t y, uint32_t z);
WGPUShaderModule gw_shader(gw_device *d, const char *code);
WGPUBindGroupLayout gw_layout(gw_device *d, uint32_t storage_count);
WGPUComputePipeline gw_pipeline(gw_device *d, WGPUShaderModule module, WGPUBindGroupLayout bgl);
WGPUBindGroup gw_bind_group(gw_device *d, WGPUBindGroupLayout bgl, WGPUBuffer uniform, uint64_t uniform_size,
                            uint32_t n, const WGPUBuffer *bufs, const uint64_t *offsets, const uint64_t *sizes);
#endif
