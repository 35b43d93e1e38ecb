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
    int timestamps;       // the device can write timestamps at compute pass boundaries
    char last_error[1024];
} gw_device;

size_t gw_enumerate(WGPUInstance inst, WGPUAdapter *out, size_t max);
// gw_open requests a device with the given limits, and the timestamp-query feature when
// timestamps is set and the adapter has it (d->timestamps says whether it got it).
gw_device *gw_open(WGPUAdapter adapter, const WGPULimits *limits, int timestamps, char *err, size_t errlen);
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
// gw_dispatch_timed records one dispatch in a compute pass of its own whose start and end
// times go to queries 2*index and 2*index+1 of qs.
void gw_dispatch_timed(WGPUCommandEncoder enc, WGPUQuerySet qs, uint32_t index, WGPUComputePipeline pipeline,
                       WGPUBindGroup group, uint32_t offset, uint32_t x, uint32_t y, uint32_t z);
WGPUQuerySet gw_query_set(gw_device *d, uint32_t count);
WGPUShaderModule gw_shader(gw_device *d, const char *code);
WGPUBindGroupLayout gw_layout(gw_device *d, uint32_t storage_count);
WGPUComputePipeline gw_pipeline(gw_device *d, WGPUShaderModule module, WGPUBindGroupLayout bgl);
WGPUBindGroup gw_bind_group(gw_device *d, WGPUBindGroupLayout bgl, WGPUBuffer uniform, uint64_t uniform_size,
                            uint32_t n, const WGPUBuffer *bufs, const uint64_t *offsets, const uint64_t *sizes);
#endif
