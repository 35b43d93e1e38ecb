#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "gw.h"

size_t gw_enumerate(WGPUInstance inst, WGPUAdapter *out, size_t max) {
    WGPUInstanceEnumerateAdapterOptions opts = {0};
    opts.backends = WGPUInstanceBackend_Vulkan;
    size_t n = wgpuInstanceEnumerateAdapters(inst, &opts, NULL);
    if (n == 0) return 0;
    WGPUAdapter *all = calloc(n, sizeof(WGPUAdapter));
    n = wgpuInstanceEnumerateAdapters(inst, &opts, all);
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < n; i++) {
        if (i < k) out[i] = all[i]; else wgpuAdapterRelease(all[i]);
    }
    free(all);
    return k;
}

static void copy_msg(char *dst, size_t n, const char *msg) {
    if (!dst || n == 0) return;
    snprintf(dst, n, "%s", msg ? msg : "(no message)");
}

static void on_uncaptured(WGPUEnum type, const char *message, void *userdata) {
    gw_device *d = userdata;
    d->error_count++;
    copy_msg(d->last_error, sizeof d->last_error, message);
    fprintf(stderr, "ggml-wgpu: WebGPU error (type %u): %s\n", type, message ? message : "");
}

static void on_lost(WGPUEnum reason, const char *message, void *userdata) {
    (void)userdata;
    fprintf(stderr, "ggml-wgpu: WebGPU device lost (reason %u): %s\n", reason, message ? message : "");
}

struct request { WGPUDevice device; int done; char *err; size_t errlen; };

static void on_device(WGPUEnum status, WGPUDevice device, const char *message, void *userdata) {
    struct request *r = userdata;
    r->done = 1;
    if (status == WGPURequestDeviceStatus_Success) r->device = device;
    else copy_msg(r->err, r->errlen, message);
}

gw_device *gw_open(WGPUAdapter adapter, const WGPULimits *limits, int timestamps, char *err, size_t errlen) {
    gw_device *d = calloc(1, sizeof *d);
    WGPUEnum feature = WGPUFeatureName_TimestampQuery;
    WGPURequiredLimits req = {0};
    req.limits = *limits;
    WGPUDeviceDescriptor desc = {0};
    desc.label = "ggml-wgpu";
    desc.requiredLimits = &req;
    if (timestamps && wgpuAdapterHasFeature(adapter, feature)) {
        desc.requiredFeatureCount = 1;
        desc.requiredFeatures = &feature;
        d->timestamps = 1;
    }
    desc.deviceLostCallback = on_lost;
    desc.uncapturedErrorCallbackInfo.callback = on_uncaptured;
    desc.uncapturedErrorCallbackInfo.userdata = d;
    struct request r = {0};
    r.err = err; r.errlen = errlen;
    wgpuAdapterRequestDevice(adapter, &desc, on_device, &r);
    if (!r.done || !r.device) {
        if (!r.done) copy_msg(err, errlen, "device request did not complete");
        free(d);
        return NULL;
    }
    d->device = r.device;
    d->queue = wgpuDeviceGetQueue(r.device);
    return d;
}

void gw_close(gw_device *d) {
    if (!d) return;
    gw_wait(d, d->submitted);
    wgpuQueueRelease(d->queue);
    wgpuDeviceRelease(d->device);
    free(d);
}

void gw_push_scope(gw_device *d) {
    wgpuDevicePushErrorScope(d->device, WGPUErrorFilter_Validation);
    wgpuDevicePushErrorScope(d->device, WGPUErrorFilter_OutOfMemory);
}

struct scope { int done; WGPUEnum type; char msg[1024]; };

static void on_scope(WGPUEnum type, const char *message, void *userdata) {
    struct scope *s = userdata;
    s->done = 1;
    s->type = type;
    if (type != WGPUErrorType_NoError) copy_msg(s->msg, sizeof s->msg, message);
}

// Pops the out-of-memory scope, then the validation scope; reports the first error.
int gw_pop_scope(gw_device *d, char *err, size_t errlen) {
    struct scope s[2];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 2; i++) {
        wgpuDevicePopErrorScope(d->device, on_scope, &s[i]);
        if (!s[i].done) wgpuDevicePoll(d->device, 0, NULL);
    }
    for (int i = 0; i < 2; i++) {
        if (s[i].type != WGPUErrorType_NoError) {
            copy_msg(err, errlen, s[i].msg);
            return 1;
        }
    }
    return 0;
}

struct done_note { gw_device *d; uint64_t seq; };

static void on_done(WGPUEnum status, void *userdata) {
    struct done_note *n = userdata;
    (void)status;
    if (n->seq > n->d->completed) n->d->completed = n->seq;
    free(n);
}

uint64_t gw_submit(gw_device *d, WGPUCommandBuffer cb) {
    wgpuQueueSubmitForIndex(d->queue, 1, &cb);
    wgpuCommandBufferRelease(cb);
    struct done_note *n = malloc(sizeof *n);
    n->d = d;
    n->seq = ++d->submitted;
    wgpuQueueOnSubmittedWorkDone(d->queue, on_done, n);
    return n->seq;
}

void gw_poll(gw_device *d) { wgpuDevicePoll(d->device, 0, NULL); }

// wait_until polls without blocking until *flag (or the completion counter) says done.
// wgpuDevicePoll(wait=true) gives up after 5 s and then recycles command pools the driver
// may still be running (CPU drivers crash on long submissions that way), so it is never
// used: the device is polled without waiting, spinning briefly, then sleeping a little.
static void wait_until(gw_device *d, const volatile int *flag, uint64_t seq) {
    for (int spins = 0;; spins++) {
        wgpuDevicePoll(d->device, 0, NULL);
        if (flag ? *flag : d->completed >= seq) return;
        if (spins < 64) sched_yield();
        else {
            struct timespec ts = {0, spins < 1024 ? 20000 : 200000};
            nanosleep(&ts, NULL);
        }
    }
}

void gw_wait(gw_device *d, uint64_t seq) {
    if (d->completed < seq) wait_until(d, NULL, seq);
}

struct map_note { volatile int done; WGPUEnum status; };

static void on_map(WGPUEnum status, void *userdata) {
    struct map_note *m = userdata;
    m->done = 1;
    m->status = status;
}

int gw_read(gw_device *d, WGPUBuffer src, uint64_t offset, uint64_t size, WGPUBuffer staging, void *dst) {
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(d->device, NULL);
    wgpuCommandEncoderCopyBufferToBuffer(enc, src, offset, staging, 0, size);
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, NULL);
    wgpuCommandEncoderRelease(enc);
    uint64_t seq = gw_submit(d, cb);
    struct map_note m = {0};
    wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, size, on_map, &m);
    gw_wait(d, seq);
    if (!m.done) wait_until(d, &m.done, 0);
    if (m.status != WGPUBufferMapAsyncStatus_Success) return 1;
    const void *p = wgpuBufferGetConstMappedRange(staging, 0, size);
    if (!p) { wgpuBufferUnmap(staging); return 2; }
    memcpy(dst, p, size);
    wgpuBufferUnmap(staging);
    return 0;
}

WGPUShaderModule gw_shader(gw_device *d, const char *code) {
    WGPUShaderModuleWGSLDescriptor wgsl = {0};
    wgsl.chain.sType = WGPUSType_ShaderModuleWGSLDescriptor;
    wgsl.code = code;
    WGPUShaderModuleDescriptor desc = {0};
    desc.nextInChain = &wgsl.chain;
    return wgpuDeviceCreateShaderModule(d->device, &desc);
}

WGPUBindGroupLayout gw_layout(gw_device *d, uint32_t storage_count) {
    WGPUBindGroupLayoutEntry e[16];
    memset(e, 0, sizeof e);
    if (storage_count > 15) return NULL;
    e[0].binding = 0;
    e[0].visibility = WGPUShaderStage_Compute;
    e[0].buffer.type = WGPUBufferBindingType_Uniform;
    e[0].buffer.hasDynamicOffset = 1;
    for (uint32_t i = 1; i <= storage_count; i++) {
        e[i].binding = i;
        e[i].visibility = WGPUShaderStage_Compute;
        e[i].buffer.type = WGPUBufferBindingType_Storage;
    }
    WGPUBindGroupLayoutDescriptor desc = {0};
    desc.entryCount = storage_count + 1;
    desc.entries = e;
    return wgpuDeviceCreateBindGroupLayout(d->device, &desc);
}

WGPUComputePipeline gw_pipeline(gw_device *d, WGPUShaderModule module, WGPUBindGroupLayout bgl) {
    WGPUPipelineLayoutDescriptor pl = {0};
    pl.bindGroupLayoutCount = 1;
    pl.bindGroupLayouts = &bgl;
    WGPUPipelineLayout layout = wgpuDeviceCreatePipelineLayout(d->device, &pl);
    WGPUComputePipelineDescriptor desc = {0};
    desc.layout = layout;
    desc.compute.module = module;
    desc.compute.entryPoint = "main";
    WGPUComputePipeline p = wgpuDeviceCreateComputePipeline(d->device, &desc);
    wgpuPipelineLayoutRelease(layout);
    return p;
}

WGPUBindGroup gw_bind_group(gw_device *d, WGPUBindGroupLayout bgl, WGPUBuffer uniform, uint64_t uniform_size,
                            uint32_t n, const WGPUBuffer *bufs, const uint64_t *offsets, const uint64_t *sizes) {
    WGPUBindGroupEntry e[16];
    memset(e, 0, sizeof e);
    if (n > 15) return NULL;
    e[0].binding = 0;
    e[0].buffer = uniform;
    e[0].size = uniform_size;
    for (uint32_t i = 0; i < n; i++) {
        e[i + 1].binding = i + 1;
        e[i + 1].buffer = bufs[i];
        e[i + 1].offset = offsets[i];
        e[i + 1].size = sizes[i];
    }
    WGPUBindGroupDescriptor desc = {0};
    desc.layout = bgl;
    desc.entryCount = n + 1;
    desc.entries = e;
    return wgpuDeviceCreateBindGroup(d->device, &desc);
}

void gw_dispatch(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t offset,
                 uint32_t x, uint32_t y, uint32_t z) {
    wgpuComputePassEncoderSetPipeline(pass, pipeline);
    wgpuComputePassEncoderSetBindGroup(pass, 0, group, 1, &offset);
    wgpuComputePassEncoderDispatchWorkgroups(pass, x, y, z);
}

void gw_dispatch_timed(WGPUCommandEncoder enc, WGPUQuerySet qs, uint32_t index, WGPUComputePipeline pipeline,
                       WGPUBindGroup group, uint32_t offset, uint32_t x, uint32_t y, uint32_t z) {
    WGPUComputePassTimestampWrites tw = {qs, 2 * index, 2 * index + 1};
    WGPUComputePassDescriptor desc = {0};
    desc.timestampWrites = &tw;
    WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(enc, &desc);
    gw_dispatch(pass, pipeline, group, offset, x, y, z);
    wgpuComputePassEncoderEnd(pass);
    wgpuComputePassEncoderRelease(pass);
}

WGPUQuerySet gw_query_set(gw_device *d, uint32_t count) {
    WGPUQuerySetDescriptor desc = {0};
    desc.type = WGPUQueryType_Timestamp;
    desc.count = count;
    return wgpuDeviceCreateQuerySet(d->device, &desc);
}
