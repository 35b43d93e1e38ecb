// Small C helpers over the wgpu-native API: the parts that need C callbacks (device
// request, error scopes, buffer mapping, completion tracking) so that no Go memory is ever
// held by C code.
//
// Every wait here polls wgpu-native without blocking and gives up at a deadline. A wait
// that runs out of time, like a device-lost callback, marks the device lost: from then on
// no helper calls into wgpu-native with it again (the Go side checks the flag first).
#ifndef GGML_WGPU_GW_H
#define GGML_WGPU_GW_H
#include "wgpu_api.h"

// Results of the helpers that wait or allocate.
enum {
    GW_OK = 0,
    GW_TIMEOUT = -1,    // the deadline passed; the device is now marked lost
    GW_LOST = -2,       // the device was lost (before or during the call)
    GW_NOMEM = -3,      // a host allocation failed; nothing was submitted
    GW_MAP_FAILED = -4, // the staging buffer could not be mapped
};

typedef struct gw_device {
    WGPUDevice device;
    WGPUQueue queue;
    uint64_t submitted;   // sequence number of the last submission
    uint64_t completed;   // highest sequence number known to be complete
    int error_count;      // uncaptured errors seen so far
    int timestamps;       // the device can write timestamps at compute pass boundaries
    volatile int lost;    // set by the device-lost callback or by a wait that timed out
    char lost_reason[512];
    char last_error[1024];
    // Waits that saw their work complete: how many, the polls they made, the time (ns) of
    // the poll that saw it (wgpu-native retiring the work and running its callbacks) and
    // from each wait's start to its end.
    uint64_t waits, wait_polls, done_poll_ns, wait_ns;
    // How long (µs) a wait yields between polls before it sleeps between them.
    uint64_t spin_us;
    // The next wait, once prewake_after_ns have passed since it began and its work is not
    // done, wakes the copy pool to watch for a copy for prewake_spin_ns (gw_copy_prewake):
    // a read out of mapped memory is expected when it ends. Every wait clears it.
    uint64_t prewake_after_ns, prewake_spin_ns;
} gw_device;

// gw_enumerate stores up to max Vulkan adapters in out and returns how many; 0 also when
// memory for the list cannot be had.
size_t gw_enumerate(WGPUInstance inst, WGPUAdapter *out, size_t max);
// gw_open requests a device with the given limits, and the timestamp-query feature when
// timestamps is set and the adapter has it (d->timestamps says whether it got it). It
// gives up after timeout_ms. On failure it returns NULL with a message in err.
gw_device *gw_open(WGPUAdapter adapter, const WGPULimits *limits, int timestamps, uint64_t timeout_ms, char *err,
                   size_t errlen);
// gw_close waits (at most timeout_ms) for submitted work and releases the device. A lost
// device, or one whose work does not finish in time, is left allocated: wgpu-native's
// teardown would wait on it and may abort the process.
void gw_close(gw_device *d, uint64_t timeout_ms);
// gw_mark_lost records that the device is lost, keeping the first reason.
void gw_mark_lost(gw_device *d, const char *reason);
// gw_push_scope opens validation and out-of-memory error scopes.
void gw_push_scope(gw_device *d);
// gw_pop_scope closes the two scopes: 0 when they saw no error, 1 with the message in err,
// or GW_TIMEOUT / GW_LOST.
int gw_pop_scope(gw_device *d, uint64_t timeout_ms, char *err, size_t errlen);
// gw_submit submits cb (and releases it), returning its sequence number, or 0 when host
// memory for the completion note cannot be had (cb is then released unsubmitted).
uint64_t gw_submit(gw_device *d, WGPUCommandBuffer cb);
// gw_submit_n submits count command buffers in one submission, like gw_submit.
uint64_t gw_submit_n(gw_device *d, WGPUCommandBuffer *cbs, size_t count);
// gw_wait waits until submission seq has completed: GW_OK, GW_TIMEOUT or GW_LOST.
int gw_wait(gw_device *d, uint64_t seq, uint64_t timeout_ms);
void gw_poll(gw_device *d);
// gw_read_map copies size bytes at offset of src (both multiples of 4) into the mappable
// staging buffer (at least size bytes), waiting at most timeout_ms for each of the copy
// and the mapping, and returns the mapped range [0, size) as gw_read_ahead_map does: the
// caller reads it and gives it back with gw_unmap. NULL where it failed (*rc: the GW_
// error).
const void *gw_read_map(gw_device *d, WGPUBuffer src, uint64_t offset, uint64_t size, WGPUBuffer staging,
                        uint64_t timeout_ms, int *rc);

struct map_note;

// gw_map_read asks for the first size bytes of staging to be mapped for reading, after the
// work submitted so far (a read ahead: the submission that copied into staging); the note
// (NULL: out of memory, or the device is lost) goes to gw_read_ahead_map or
// gw_read_ahead_drop.
struct map_note *gw_map_read(gw_device *d, WGPUBuffer staging, uint64_t size);
// gw_map_done reports whether the map of a read-ahead completed (its callback ran).
int gw_map_done(struct map_note *m);
// gw_read_ahead_map waits for the read-ahead's map, frees m (which a wait that runs out of
// time leaves allocated for the callback) and returns the mapped range [0, mapped) of
// staging, which the caller reads and then gives back with gw_unmap; NULL where it failed
// (*rc: the GW_ error).
const void *gw_read_ahead_map(gw_device *d, struct map_note *m, WGPUBuffer staging, uint64_t mapped,
                              uint64_t timeout_ms, int *rc);
// gw_unmap unmaps staging.
void gw_unmap(WGPUBuffer staging);
// gw_read_ahead_drop waits for the read-ahead's map and frees m as gw_read_ahead_map does,
// and unmaps staging unread: GW_OK or the GW_ error.
int gw_read_ahead_drop(gw_device *d, struct map_note *m, WGPUBuffer staging, uint64_t timeout_ms);
// gw_clear zeroes size bytes at offset of b through its own command buffer; returns the
// submission's sequence number, or 0 when it could not be submitted.
uint64_t gw_clear(gw_device *d, WGPUBuffer b, uint64_t offset, uint64_t size);
// gw_dispatch sets the pipeline and bind group (one dynamic offset) and dispatches: one
// call across the cgo boundary per dispatch.
void gw_dispatch(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t offset,
                 uint32_t x, uint32_t y, uint32_t z);
// gw_begin_timed_pass opens a compute pass whose start and end times go to queries
// 2*index and 2*index+1 of qs.
WGPUComputePassEncoder gw_begin_timed_pass(WGPUCommandEncoder enc, WGPUQuerySet qs, uint32_t index);
// gw_dispatch_timed records one dispatch in a compute pass of its own whose start and end
// times go to queries 2*index and 2*index+1 of qs.
void gw_dispatch_timed(WGPUCommandEncoder enc, WGPUQuerySet qs, uint32_t index, WGPUComputePipeline pipeline,
                       WGPUBindGroup group, uint32_t offset, uint32_t x, uint32_t y, uint32_t z);
WGPUQuerySet gw_query_set(gw_device *d, uint32_t count);
WGPUShaderModule gw_shader(gw_device *d, const char *code);
// GW_MAX_STORAGE is the most storage bindings gw_layout and gw_bind_group handle.
#define GW_MAX_STORAGE 15
// gw_layout creates a layout of a dynamic-offset uniform buffer at binding 0 and
// storage_count storage buffers at 1..storage_count; bit i of read_only makes binding i+1
// read-only storage.
WGPUBindGroupLayout gw_layout(gw_device *d, uint32_t storage_count, uint32_t read_only);
WGPUComputePipeline gw_pipeline(gw_device *d, WGPUShaderModule module, WGPUBindGroupLayout bgl);
WGPUBindGroup gw_bind_group(gw_device *d, WGPUBindGroupLayout bgl, WGPUBuffer uniform, uint64_t uniform_size,
                            uint32_t n, const WGPUBuffer *bufs, const uint64_t *offsets, const uint64_t *sizes);
// gw_strndup copies n bytes of p into a new NUL-terminated C string; NULL when out of
// memory (cgo's own C.CString aborts the process instead).
char *gw_strndup(const char *p, size_t n);
#endif
