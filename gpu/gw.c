#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "gw.h"
#include "copy.h"

size_t gw_enumerate(WGPUInstance inst, WGPUAdapter *out, size_t max) {
    WGPUInstanceEnumerateAdapterOptions opts = {0};
    opts.backends = WGPUInstanceBackend_Vulkan;
    // Counting drops the adapters it finds, so failing after it leaks nothing.
    size_t n = wgpuInstanceEnumerateAdapters(inst, &opts, NULL);
    if (n == 0) return 0;
    // The list has room to spare for an adapter that appears between the two listings
    // (the second one writes as many entries as it finds).
    size_t room = n + 16;
    WGPUAdapter *all = calloc(room, sizeof(WGPUAdapter));
    if (!all) {
        fprintf(stderr, "ggml-wgpu: out of host memory listing %zu adapters\n", n);
        return 0;
    }
    n = wgpuInstanceEnumerateAdapters(inst, &opts, all);
    if (n > room) n = room;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!all[i]) continue;
        if (k < max) out[k++] = all[i];
        else wgpuAdapterRelease(all[i]);
    }
    free(all);
    return k;
}

static void copy_msg(char *dst, size_t n, const char *msg) {
    if (!dst || n == 0) return;
    snprintf(dst, n, "%s", msg ? msg : "(no message)");
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void) { return now_ns() / 1000000; }

static uint64_t deadline_after(uint64_t timeout_ms) {
    uint64_t now = now_ms();
    return timeout_ms > UINT64_MAX - now ? UINT64_MAX : now + timeout_ms;
}

static uint64_t now_us(void) { return now_ns() / 1000; }

// pause_a_little spins briefly, then sleeps for growing (still short) intervals.
static void pause_a_little(int spins) {
    if (spins < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, spins < 1024 ? 20000 : 200000};
    nanosleep(&ts, NULL);
}

// gw_default_spin_us is how long a wait for the GPU yields between polls before it
// sleeps (gw_device.spin_us, which the device's owner may change): a sleep of 20 µs lasts
// ~70 µs (the kernel's timer slack), so a wait that sleeps notices the GPU's end late.
#define gw_default_spin_us 2000

// pause_since is pause_a_little for a wait of device d that began at start (now_us): it
// yields until d->spin_us have passed, then sleeps.
static void pause_since(const gw_device *d, uint64_t start, int spins) {
    if (now_us() - start < d->spin_us) {
        sched_yield();
        return;
    }
    pause_a_little(64 + spins);
}

void gw_mark_lost(gw_device *d, const char *reason) {
    if (d->lost) return;
    copy_msg(d->lost_reason, sizeof d->lost_reason, reason);
    d->lost = 1;
}

static void on_uncaptured(WGPUEnum type, const char *message, void *userdata) {
    gw_device *d = userdata;
    d->error_count++;
    copy_msg(d->last_error, sizeof d->last_error, message);
    fprintf(stderr, "ggml-wgpu: WebGPU error (type %u): %s\n", type, message ? message : "");
}

static void on_lost(WGPUEnum reason, const char *message, void *userdata) {
    gw_device *d = userdata;
    fprintf(stderr, "ggml-wgpu: WebGPU device lost (reason %u): %s\n", reason, message ? message : "");
    if (d) gw_mark_lost(d, message && *message ? message : "the device-lost callback gave no reason");
}

// request receives the result of a device request. It lives on the heap: when the request
// does not complete in time it is left allocated, since the callback may still write it.
struct request {
    volatile int done;
    WGPUDevice device;
    char err[512];
};

static void on_device(WGPUEnum status, WGPUDevice device, const char *message, void *userdata) {
    struct request *r = userdata;
    if (status == WGPURequestDeviceStatus_Success) r->device = device;
    else copy_msg(r->err, sizeof r->err, message);
    r->done = 1;
}

gw_device *gw_open(WGPUAdapter adapter, const WGPULimits *limits, int timestamps, uint64_t timeout_ms, char *err,
                   size_t errlen) {
    gw_device *d = calloc(1, sizeof *d);
    struct request *r = calloc(1, sizeof *r);
    if (!d || !r) {
        free(d);
        free(r);
        copy_msg(err, errlen, "out of host memory");
        return NULL;
    }
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
    desc.deviceLostUserdata = d;
    desc.uncapturedErrorCallbackInfo.callback = on_uncaptured;
    desc.uncapturedErrorCallbackInfo.userdata = d;
    wgpuAdapterRequestDevice(adapter, &desc, on_device, r);
    // wgpu-native answers within the call; the wait covers an implementation that does not.
    uint64_t deadline = deadline_after(timeout_ms);
    for (int spins = 0; !r->done && now_ms() < deadline; spins++) pause_a_little(spins);
    if (!r->done) {
        char msg[128];
        snprintf(msg, sizeof msg, "device request did not complete within %llu ms", (unsigned long long)timeout_ms);
        copy_msg(err, errlen, msg);
        return NULL; // d and r stay allocated: the callback may still come and use them
    }
    if (!r->device) {
        copy_msg(err, errlen, r->err[0] ? r->err : "device request failed");
        free(r);
        free(d);
        return NULL;
    }
    d->device = r->device;
    free(r);
    d->queue = wgpuDeviceGetQueue(d->device);
    d->spin_us = gw_default_spin_us;
    return d;
}

// wait_until polls without blocking until *flag (or, with no flag, the completion
// counter reaching seq) says done, the device is lost, or timeout_ms pass. wgpuDevicePoll
// (wait=true) gives up after 5 s and then recycles command pools the driver may still be
// running (CPU drivers crash on long submissions that way), so it is never used: the device
// is polled without waiting, yielding for up to d->spin_us, then sleeping a little. what
// names the wait in the reason recorded when it times out.
static int wait_until(gw_device *d, const volatile int *flag, uint64_t seq, uint64_t timeout_ms, const char *what) {
    uint64_t deadline = deadline_after(timeout_ms);
    uint64_t start_ns = now_ns();
    uint64_t start = start_ns / 1000;
    uint64_t prewake = d->prewake_after_ns ? start_ns + d->prewake_after_ns : 0;
    d->prewake_after_ns = 0;
    for (int spins = 0;; spins++) {
        if (d->lost) return GW_LOST;
        uint64_t poll = now_ns();
        if (prewake && poll >= prewake) {
            gw_copy_prewake(d->prewake_spin_ns);
            prewake = 0;
        }
        wgpuDevicePoll(d->device, 0, NULL);
        if (flag ? *flag : d->completed >= seq) {
            uint64_t end = now_ns();
            d->waits++;
            d->wait_polls += (uint64_t)spins + 1;
            d->done_poll_ns += end - poll;
            d->wait_ns += end - start_ns;
            return GW_OK;
        }
        if (d->lost) return GW_LOST;
        if (now_ms() >= deadline) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s did not complete within %llu ms", what, (unsigned long long)timeout_ms);
            gw_mark_lost(d, msg);
            return GW_TIMEOUT;
        }
        pause_since(d, start, spins);
    }
}

int gw_wait(gw_device *d, uint64_t seq, uint64_t timeout_ms) {
    if (d->completed >= seq) return GW_OK;
    if (d->lost) return GW_LOST;
    char what[64];
    snprintf(what, sizeof what, "GPU submission %llu", (unsigned long long)seq);
    return wait_until(d, NULL, seq, timeout_ms, what);
}

void gw_close(gw_device *d, uint64_t timeout_ms) {
    if (!d) return;
    if (d->lost || gw_wait(d, d->submitted, timeout_ms) != GW_OK) return; // left allocated, see gw.h
    wgpuQueueRelease(d->queue);
    wgpuDeviceRelease(d->device);
    free(d);
}

void gw_push_scope(gw_device *d) {
    wgpuDevicePushErrorScope(d->device, WGPUErrorFilter_Validation);
    wgpuDevicePushErrorScope(d->device, WGPUErrorFilter_OutOfMemory);
}

struct scope {
    volatile int done;
    WGPUEnum type;
    char msg[1024];
};

static void on_scope(WGPUEnum type, const char *message, void *userdata) {
    struct scope *s = userdata;
    s->type = type;
    if (type != WGPUErrorType_NoError) copy_msg(s->msg, sizeof s->msg, message);
    s->done = 1;
}

// Pops the out-of-memory scope, then the validation scope; reports the first error. The
// notes live on the heap and are left allocated when a pop does not answer in time.
int gw_pop_scope(gw_device *d, uint64_t timeout_ms, char *err, size_t errlen) {
    if (d->lost) return GW_LOST;
    struct scope *s = calloc(2, sizeof *s);
    if (!s) {
        copy_msg(err, errlen, "out of host memory");
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        wgpuDevicePopErrorScope(d->device, on_scope, &s[i]);
        if (!s[i].done) {
            int rc = wait_until(d, &s[i].done, 0, timeout_ms, "an error scope");
            if (rc != GW_OK) return rc;
        }
    }
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        if (s[i].type != WGPUErrorType_NoError) {
            copy_msg(err, errlen, s[i].msg);
            rc = 1;
        }
    }
    free(s);
    return rc;
}

struct done_note {
    gw_device *d;
    uint64_t seq;
};

static void on_done(WGPUEnum status, void *userdata) {
    struct done_note *n = userdata;
    (void)status;
    if (n->seq > n->d->completed) n->d->completed = n->seq;
    free(n);
}

uint64_t gw_submit(gw_device *d, WGPUCommandBuffer cb) { return gw_submit_n(d, &cb, 1); }

uint64_t gw_submit_n(gw_device *d, WGPUCommandBuffer *cbs, size_t count) {
    struct done_note *n = malloc(sizeof *n);
    if (!n) {
        for (size_t i = 0; i < count; i++) wgpuCommandBufferRelease(cbs[i]);
        return 0;
    }
    wgpuQueueSubmitForIndex(d->queue, count, cbs);
    for (size_t i = 0; i < count; i++) wgpuCommandBufferRelease(cbs[i]);
    n->d = d;
    n->seq = ++d->submitted;
    uint64_t seq = n->seq; // on_done may free n during the call below
    wgpuQueueOnSubmittedWorkDone(d->queue, on_done, n);
    return seq;
}

void gw_poll(gw_device *d) {
    if (!d->lost) wgpuDevicePoll(d->device, 0, NULL);
}

struct map_note {
    volatile int done;
    WGPUEnum status;
};

static void on_map(WGPUEnum status, void *userdata) {
    struct map_note *m = userdata;
    m->status = status;
    m->done = 1;
}

struct map_note *gw_map_read(gw_device *d, WGPUBuffer staging, uint64_t size) {
    if (d->lost) return NULL;
    struct map_note *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, size, on_map, m);
    return m;
}

int gw_map_done(struct map_note *m) { return m->done; }

// map_wait waits for the read-ahead's map and frees m (which a wait that gives up leaves
// to the callback): GW_OK where staging is mapped, else the GW_ error.
static int map_wait(gw_device *d, struct map_note *m, uint64_t timeout_ms) {
    if (d->lost) return GW_LOST;
    if (!m->done) {
        int rc = wait_until(d, &m->done, 0, timeout_ms, "mapping the read-ahead buffer");
        if (rc != GW_OK) return rc;
    }
    int ok = m->status == WGPUBufferMapAsyncStatus_Success;
    free(m);
    return ok ? GW_OK : GW_MAP_FAILED;
}

const void *gw_read_ahead_map(gw_device *d, struct map_note *m, WGPUBuffer staging, uint64_t mapped,
                              uint64_t timeout_ms, int *rc) {
    *rc = map_wait(d, m, timeout_ms);
    if (*rc != GW_OK) return NULL;
    *rc = GW_MAP_FAILED;
    const void *p = wgpuBufferGetConstMappedRange(staging, 0, mapped);
    if (!p) {
        wgpuBufferUnmap(staging);
        return NULL;
    }
    *rc = GW_OK;
    return p;
}

void gw_unmap(WGPUBuffer staging) { wgpuBufferUnmap(staging); }

int gw_read_ahead_drop(gw_device *d, struct map_note *m, WGPUBuffer staging, uint64_t timeout_ms) {
    int rc = map_wait(d, m, timeout_ms);
    if (rc == GW_OK) wgpuBufferUnmap(staging);
    return rc;
}

// copy_and_map copies size bytes at offset of src (multiples of 4) to the start of staging
// in a submission of its own (*seq) and asks for staging to be mapped (gw_map_read).
static struct map_note *copy_and_map(gw_device *d, WGPUBuffer src, uint64_t offset, uint64_t size, WGPUBuffer staging,
                                     uint64_t *seq) {
    if (d->lost) return NULL;
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(d->device, NULL);
    wgpuCommandEncoderCopyBufferToBuffer(enc, src, offset, staging, 0, size);
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, NULL);
    wgpuCommandEncoderRelease(enc);
    *seq = gw_submit(d, cb);
    if (!*seq) return NULL;
    return gw_map_read(d, staging, size);
}

const void *gw_read_map(gw_device *d, WGPUBuffer src, uint64_t offset, uint64_t size, WGPUBuffer staging,
                        uint64_t timeout_ms, int *rc) {
    *rc = GW_LOST;
    if (d->lost) return NULL;
    uint64_t seq;
    struct map_note *m = copy_and_map(d, src, offset, size, staging, &seq);
    if (!m) {
        *rc = d->lost ? GW_LOST : GW_NOMEM;
        return NULL;
    }
    // From here m belongs to the callback until it has run: a wait that gives up leaves
    // it allocated.
    *rc = gw_wait(d, seq, timeout_ms);
    if (*rc != GW_OK) return NULL;
    return gw_read_ahead_map(d, m, staging, size, timeout_ms, rc);
}

uint64_t gw_clear(gw_device *d, WGPUBuffer b, uint64_t offset, uint64_t size) {
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(d->device, NULL);
    wgpuCommandEncoderClearBuffer(enc, b, offset, size);
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, NULL);
    wgpuCommandEncoderRelease(enc);
    return gw_submit(d, cb);
}

WGPUShaderModule gw_shader(gw_device *d, const char *code) {
    WGPUShaderModuleWGSLDescriptor wgsl = {0};
    wgsl.chain.sType = WGPUSType_ShaderModuleWGSLDescriptor;
    wgsl.code = code;
    WGPUShaderModuleDescriptor desc = {0};
    desc.nextInChain = &wgsl.chain;
    return wgpuDeviceCreateShaderModule(d->device, &desc);
}

WGPUBindGroupLayout gw_layout(gw_device *d, uint32_t storage_count, uint32_t read_only) {
    WGPUBindGroupLayoutEntry e[GW_MAX_STORAGE + 1];
    memset(e, 0, sizeof e);
    if (storage_count > GW_MAX_STORAGE) return NULL;
    e[0].binding = 0;
    e[0].visibility = WGPUShaderStage_Compute;
    e[0].buffer.type = WGPUBufferBindingType_Uniform;
    e[0].buffer.hasDynamicOffset = 1;
    for (uint32_t i = 1; i <= storage_count; i++) {
        e[i].binding = i;
        e[i].visibility = WGPUShaderStage_Compute;
        e[i].buffer.type = (read_only >> (i - 1)) & 1 ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
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
    WGPUBindGroupEntry e[GW_MAX_STORAGE + 1];
    memset(e, 0, sizeof e);
    if (n > GW_MAX_STORAGE) return NULL;
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

WGPUComputePassEncoder gw_begin_timed_pass(WGPUCommandEncoder enc, WGPUQuerySet qs, uint32_t index) {
    WGPUComputePassTimestampWrites tw = {qs, 2 * index, 2 * index + 1};
    WGPUComputePassDescriptor desc = {0};
    desc.timestampWrites = &tw;
    return wgpuCommandEncoderBeginComputePass(enc, &desc);
}

WGPUQuerySet gw_query_set(gw_device *d, uint32_t count) {
    WGPUQuerySetDescriptor desc = {0};
    desc.type = WGPUQueryType_Timestamp;
    desc.count = count;
    return wgpuDeviceCreateQuerySet(d->device, &desc);
}

char *gw_strndup(const char *p, size_t n) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}
