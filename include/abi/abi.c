/*
 * The probe's C side: a registry, a device, two buffer types, their buffers and a backend,
 * all filled through include/ggml-backend-abi.h and driven by the real libggml-base. Every
 * vtable slot counts its calls and records its arguments so that Go can check that ggml
 * called the slot we meant, with the arguments we meant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi_layout.h"
#include "abi_probe.h"

enum { OP_NONE = 0, OP_ADD = 2, OP_RMS_NORM = 25, OP_SCALE = 32, OP_RESHAPE = 36, OP_VIEW = 37, OP_PERMUTE = 38,
       OP_TRANSPOSE = 39 };
enum { TYPE_F32 = 0 };

const char *const abi_slot_names[ABI_SLOT_COUNT] = {
    [ABI_BUFT_GET_NAME] = "buft.get_name",
    [ABI_BUFT_ALLOC_BUFFER] = "buft.alloc_buffer",
    [ABI_BUFT_GET_ALIGNMENT] = "buft.get_alignment",
    [ABI_BUFT_GET_MAX_SIZE] = "buft.get_max_size",
    [ABI_BUFT_GET_ALLOC_SIZE] = "buft.get_alloc_size",
    [ABI_BUFT_IS_HOST] = "buft.is_host",
    [ABI_BUF_FREE_BUFFER] = "buffer.free_buffer",
    [ABI_BUF_GET_BASE] = "buffer.get_base",
    [ABI_BUF_INIT_TENSOR] = "buffer.init_tensor",
    [ABI_BUF_MEMSET_TENSOR] = "buffer.memset_tensor",
    [ABI_BUF_SET_TENSOR] = "buffer.set_tensor",
    [ABI_BUF_GET_TENSOR] = "buffer.get_tensor",
    [ABI_BUF_SET_TENSOR_2D] = "buffer.set_tensor_2d",
    [ABI_BUF_GET_TENSOR_2D] = "buffer.get_tensor_2d",
    [ABI_BUF_CPY_TENSOR] = "buffer.cpy_tensor",
    [ABI_BUF_CLEAR] = "buffer.clear",
    [ABI_BUF_RESET] = "buffer.reset",
    [ABI_BE_GET_NAME] = "backend.get_name",
    [ABI_BE_FREE] = "backend.free",
    [ABI_BE_SET_TENSOR_ASYNC] = "backend.set_tensor_async",
    [ABI_BE_GET_TENSOR_ASYNC] = "backend.get_tensor_async",
    [ABI_BE_SET_TENSOR_2D_ASYNC] = "backend.set_tensor_2d_async",
    [ABI_BE_GET_TENSOR_2D_ASYNC] = "backend.get_tensor_2d_async",
    [ABI_BE_CPY_TENSOR_ASYNC] = "backend.cpy_tensor_async",
    [ABI_BE_SYNCHRONIZE] = "backend.synchronize",
    [ABI_BE_GRAPH_PLAN_CREATE] = "backend.graph_plan_create",
    [ABI_BE_GRAPH_PLAN_FREE] = "backend.graph_plan_free",
    [ABI_BE_GRAPH_PLAN_UPDATE] = "backend.graph_plan_update",
    [ABI_BE_GRAPH_PLAN_COMPUTE] = "backend.graph_plan_compute",
    [ABI_BE_GRAPH_COMPUTE] = "backend.graph_compute",
    [ABI_BE_EVENT_RECORD] = "backend.event_record",
    [ABI_BE_EVENT_WAIT] = "backend.event_wait",
    [ABI_BE_GRAPH_OPTIMIZE] = "backend.graph_optimize",
    [ABI_DEV_GET_NAME] = "device.get_name",
    [ABI_DEV_GET_DESCRIPTION] = "device.get_description",
    [ABI_DEV_GET_MEMORY] = "device.get_memory",
    [ABI_DEV_GET_TYPE] = "device.get_type",
    [ABI_DEV_GET_PROPS] = "device.get_props",
    [ABI_DEV_INIT_BACKEND] = "device.init_backend",
    [ABI_DEV_GET_BUFFER_TYPE] = "device.get_buffer_type",
    [ABI_DEV_GET_HOST_BUFFER_TYPE] = "device.get_host_buffer_type",
    [ABI_DEV_BUFFER_FROM_HOST_PTR] = "device.buffer_from_host_ptr",
    [ABI_DEV_SUPPORTS_OP] = "device.supports_op",
    [ABI_DEV_SUPPORTS_BUFT] = "device.supports_buft",
    [ABI_DEV_OFFLOAD_OP] = "device.offload_op",
    [ABI_DEV_EVENT_NEW] = "device.event_new",
    [ABI_DEV_EVENT_FREE] = "device.event_free",
    [ABI_DEV_EVENT_SYNCHRONIZE] = "device.event_synchronize",
    [ABI_REG_GET_NAME] = "reg.get_name",
    [ABI_REG_GET_DEVICE_COUNT] = "reg.get_device_count",
    [ABI_REG_GET_DEVICE] = "reg.get_device",
    [ABI_REG_GET_PROC_ADDRESS] = "reg.get_proc_address",
};

int abi_calls[ABI_SLOT_COUNT];
struct abi_last abi_last;
int abi_dev_type = GW_DEV_TYPE_GPU;
uint8_t abi_guid[16] = {0xab, 0x10, 0x9e, 0x3c, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};

static int abi_extra;
static int abi_reg_ctx = ABI_REG_CONTEXT_MAGIC;

#define HIT(slot, obj)                                                                                                \
    do {                                                                                                              \
        abi_calls[slot]++;                                                                                            \
        abi_last.self = (obj);                                                                                        \
    } while (0)

void abi_reset(void) {
    memset(abi_calls, 0, sizeof(abi_calls));
    memset(&abi_last, 0, sizeof(abi_last));
    abi_dev_type = GW_DEV_TYPE_GPU;
}

const void *abi_extra_marker(void) { return &abi_extra; }

static char *tdata(const struct ggml_tensor *t) { return (char *)t->data; }

/* ---------------- buffer types ---------------- */

/* The buffer type's context: name, alignment, max size and is_host come from here, so that
 * a wrong offset of buft->context shows as wrong answers. */
struct abi_buft_ctx {
    const char *name;
    size_t alignment;
    size_t max_size;
    bool is_host;
};

static struct abi_buft_ctx abi_buft_ctx = {"ABI0", ABI_BUFT_ALIGNMENT, ABI_BUFT_MAX_SIZE, false};
static struct abi_buft_ctx abi_host_buft_ctx = {"ABI0_Host", ABI_HOST_BUFT_ALIGNMENT, ABI_HOST_BUFT_MAX_SIZE, true};

static struct abi_buft_ctx *bctx(gw_buft_t buft) { return (struct abi_buft_ctx *)buft->context; }

static const char *buft_get_name(gw_buft_t buft) {
    HIT(ABI_BUFT_GET_NAME, buft);
    return bctx(buft)->name;
}

static struct ggml_backend_buffer_i abi_buffer_iface;

static gw_buffer_t buft_alloc_buffer(gw_buft_t buft, size_t size) {
    HIT(ABI_BUFT_ALLOC_BUFFER, buft);
    abi_last.size = size;
    size_t align = bctx(buft)->alignment;
    struct abi_buffer_ctx *ctx = calloc(1, sizeof(*ctx));
    ctx->mem = aligned_alloc(align, (size + align - 1) / align * align);
    ctx->size = size;
    ctx->owned = true;
    if (ctx->mem == NULL) {
        free(ctx);
        return NULL;
    }
    return ggml_backend_buffer_init(buft, abi_buffer_iface, ctx, size);
}

static size_t buft_get_alignment(gw_buft_t buft) {
    HIT(ABI_BUFT_GET_ALIGNMENT, buft);
    return bctx(buft)->alignment;
}

static size_t buft_get_max_size(gw_buft_t buft) {
    HIT(ABI_BUFT_GET_MAX_SIZE, buft);
    return bctx(buft)->max_size;
}

/* Pads leaves (op NONE, one of the "empty" ops ggml lets a buffer type pad). */
static size_t buft_get_alloc_size(gw_buft_t buft, const struct ggml_tensor *tensor) {
    HIT(ABI_BUFT_GET_ALLOC_SIZE, buft);
    abi_last.tensor = tensor;
    size_t n = ggml_nbytes(tensor);
    return tensor->op == OP_NONE ? n + ABI_LEAF_ALLOC_PAD : n;
}

static bool buft_is_host(gw_buft_t buft) {
    HIT(ABI_BUFT_IS_HOST, buft);
    return bctx(buft)->is_host;
}

#define ABI_BUFT_IFACE                                                                                                \
    {                                                                                                                 \
        .get_name = buft_get_name, .alloc_buffer = buft_alloc_buffer, .get_alignment = buft_get_alignment,            \
        .get_max_size = buft_get_max_size, .get_alloc_size = buft_get_alloc_size, .is_host = buft_is_host,            \
    }

static struct ggml_backend_device abi_dev;

static struct ggml_backend_buffer_type abi_buft_obj = {
    .iface = ABI_BUFT_IFACE,
    .device = &abi_dev,
    .context = &abi_buft_ctx,
};

static struct ggml_backend_buffer_type abi_host_buft_obj = {
    .iface = ABI_BUFT_IFACE,
    .device = &abi_dev,
    .context = &abi_host_buft_ctx,
};

gw_buft_t abi_buft(void) { return &abi_buft_obj; }
gw_buft_t abi_host_buft(void) { return &abi_host_buft_obj; }

/* ---------------- buffers ---------------- */

static struct abi_buffer_ctx *mctx(gw_buffer_t b) { return (struct abi_buffer_ctx *)b->context; }

static void buf_free_buffer(gw_buffer_t b) {
    HIT(ABI_BUF_FREE_BUFFER, b);
    struct abi_buffer_ctx *ctx = mctx(b);
    if (ctx->owned) {
        free(ctx->mem);
    }
    free(ctx);
}

static void *buf_get_base(gw_buffer_t b) {
    HIT(ABI_BUF_GET_BASE, b);
    return mctx(b)->mem;
}

static int buf_init_tensor(gw_buffer_t b, struct ggml_tensor *t) {
    HIT(ABI_BUF_INIT_TENSOR, b);
    abi_last.tensor = t;
    t->extra = &abi_extra;
    return GW_STATUS_SUCCESS;
}

static void buf_memset_tensor(gw_buffer_t b, struct ggml_tensor *t, uint8_t value, size_t offset, size_t size) {
    HIT(ABI_BUF_MEMSET_TENSOR, b);
    abi_last.tensor = t;
    abi_last.value = value;
    abi_last.offset = offset;
    abi_last.size = size;
    memset(tdata(t) + offset, value, size);
}

static void buf_set_tensor(gw_buffer_t b, struct ggml_tensor *t, const void *data, size_t offset, size_t size) {
    HIT(ABI_BUF_SET_TENSOR, b);
    abi_last.tensor = t;
    abi_last.data = data;
    abi_last.offset = offset;
    abi_last.size = size;
    memcpy(tdata(t) + offset, data, size);
}

static void buf_get_tensor(gw_buffer_t b, const struct ggml_tensor *t, void *data, size_t offset, size_t size) {
    HIT(ABI_BUF_GET_TENSOR, b);
    abi_last.tensor = t;
    abi_last.data = data;
    abi_last.offset = offset;
    abi_last.size = size;
    memcpy(data, tdata(t) + offset, size);
}

static void record_2d(const struct ggml_tensor *t, const void *data, size_t offset, size_t size, size_t n_copies,
                      size_t stride_tensor, size_t stride_data) {
    abi_last.tensor = t;
    abi_last.data = data;
    abi_last.offset = offset;
    abi_last.size = size;
    abi_last.n_copies = n_copies;
    abi_last.stride_tensor = stride_tensor;
    abi_last.stride_data = stride_data;
}

static void copy_2d_in(struct ggml_tensor *t, const void *data, size_t offset, size_t size, size_t n_copies,
                       size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; i++) {
        memcpy(tdata(t) + offset + i * stride_tensor, (const char *)data + i * stride_data, size);
    }
}

static void copy_2d_out(const struct ggml_tensor *t, void *data, size_t offset, size_t size, size_t n_copies,
                        size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; i++) {
        memcpy((char *)data + i * stride_data, tdata(t) + offset + i * stride_tensor, size);
    }
}

static void buf_set_tensor_2d(gw_buffer_t b, struct ggml_tensor *t, const void *data, size_t offset, size_t size,
                              size_t n_copies, size_t stride_tensor, size_t stride_data) {
    HIT(ABI_BUF_SET_TENSOR_2D, b);
    record_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    copy_2d_in(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

static void buf_get_tensor_2d(gw_buffer_t b, const struct ggml_tensor *t, void *data, size_t offset, size_t size,
                              size_t n_copies, size_t stride_tensor, size_t stride_data) {
    HIT(ABI_BUF_GET_TENSOR_2D, b);
    record_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    copy_2d_out(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

/* Copies only from tensors in a probe buffer (src->buffer->buft->device is ours). */
static bool buf_cpy_tensor(gw_buffer_t b, const struct ggml_tensor *src, struct ggml_tensor *dst) {
    HIT(ABI_BUF_CPY_TENSOR, b);
    abi_last.tensor = src;
    abi_last.tensor2 = dst;
    const struct ggml_tensor *s = src->view_src ? src->view_src : src;
    if (s->buffer == NULL || s->buffer->buft == NULL || s->buffer->buft->device != &abi_dev) {
        return false;
    }
    memcpy(tdata(dst), tdata(src), ggml_nbytes(src));
    return true;
}

static void buf_clear(gw_buffer_t b, uint8_t value) {
    HIT(ABI_BUF_CLEAR, b);
    abi_last.value = value;
    memset(mctx(b)->mem, value, b->size);
}

static void buf_reset(gw_buffer_t b) { HIT(ABI_BUF_RESET, b); }

static struct ggml_backend_buffer_i abi_buffer_iface = {
    .free_buffer = buf_free_buffer,
    .get_base = buf_get_base,
    .init_tensor = buf_init_tensor,
    .memset_tensor = buf_memset_tensor,
    .set_tensor = buf_set_tensor,
    .get_tensor = buf_get_tensor,
    .set_tensor_2d = buf_set_tensor_2d,
    .get_tensor_2d = buf_get_tensor_2d,
    .cpy_tensor = buf_cpy_tensor,
    .clear = buf_clear,
    .reset = buf_reset,
};

/* ---------------- backend ---------------- */

static struct ggml_backend_i abi_backend_iface;

static struct abi_backend_ctx *ectx(gw_backend_t be) { return (struct abi_backend_ctx *)be->context; }

static const char *be_get_name(gw_backend_t be) {
    HIT(ABI_BE_GET_NAME, be);
    return ectx(be)->name;
}

static void be_free(gw_backend_t be) {
    HIT(ABI_BE_FREE, be);
    free(be->context);
    free(be);
}

static void be_set_tensor_async(gw_backend_t be, struct ggml_tensor *t, const void *data, size_t offset, size_t size) {
    HIT(ABI_BE_SET_TENSOR_ASYNC, be);
    record_2d(t, data, offset, size, 1, 0, 0);
    memcpy(tdata(t) + offset, data, size);
}

static void be_get_tensor_async(gw_backend_t be, const struct ggml_tensor *t, void *data, size_t offset, size_t size) {
    HIT(ABI_BE_GET_TENSOR_ASYNC, be);
    record_2d(t, data, offset, size, 1, 0, 0);
    memcpy(data, tdata(t) + offset, size);
}

static void be_set_tensor_2d_async(gw_backend_t be, struct ggml_tensor *t, const void *data, size_t offset,
                                   size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    HIT(ABI_BE_SET_TENSOR_2D_ASYNC, be);
    record_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    copy_2d_in(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

static void be_get_tensor_2d_async(gw_backend_t be, const struct ggml_tensor *t, void *data, size_t offset,
                                   size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    HIT(ABI_BE_GET_TENSOR_2D_ASYNC, be);
    record_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    copy_2d_out(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

static bool be_cpy_tensor_async(gw_backend_t src_be, gw_backend_t dst_be, const struct ggml_tensor *src,
                                struct ggml_tensor *dst) {
    HIT(ABI_BE_CPY_TENSOR_ASYNC, src_be);
    abi_last.backend2 = dst_be;
    abi_last.tensor = src;
    abi_last.tensor2 = dst;
    memcpy(tdata(dst), tdata(src), ggml_nbytes(src));
    return true;
}

static void be_synchronize(gw_backend_t be) { HIT(ABI_BE_SYNCHRONIZE, be); }

static float f32_at(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *)(tdata(t) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

static float *f32_ptr(struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (float *)(tdata(t) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

static float op_param_f32(const struct ggml_tensor *t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof(f));
    return f;
}

/* A tiny f32 interpreter over our struct ggml_tensor: ADD (src1 broadcast), SCALE, RMS_NORM. */
static int compute_graph(struct ggml_cgraph *g) {
    int n = ggml_graph_n_nodes(g);
    abi_last.graph = g;
    abi_last.graph_n_nodes = n;
    abi_last.n_seen = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *t = ggml_graph_node(g, i);
        if ((t->flags & GW_FLAG_COMPUTE) == 0) {
            continue;
        }
        if (t->op == OP_NONE || t->op == OP_RESHAPE || t->op == OP_VIEW || t->op == OP_PERMUTE ||
            t->op == OP_TRANSPOSE) {
            continue;
        }
        if (abi_last.n_seen < ABI_MAX_SEEN) {
            abi_last.seen[abi_last.n_seen++] = t;
        }
        const struct ggml_tensor *a = t->src[0];
        const struct ggml_tensor *b = t->src[1];
        if (t->type != TYPE_F32 || a == NULL || a->type != TYPE_F32) {
            return GW_STATUS_FAILED;
        }
        for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
            for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
                for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                    switch (t->op) {
                    case OP_ADD:
                        if (b == NULL || b->type != TYPE_F32) {
                            return GW_STATUS_FAILED;
                        }
                        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                            *f32_ptr(t, i0, i1, i2, i3) =
                                f32_at(a, i0, i1, i2, i3) +
                                f32_at(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
                        }
                        break;
                    case OP_SCALE: {
                        float s = op_param_f32(t, 0), bias = op_param_f32(t, 1);
                        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                            *f32_ptr(t, i0, i1, i2, i3) = f32_at(a, i0, i1, i2, i3) * s + bias;
                        }
                        break;
                    }
                    case OP_RMS_NORM: {
                        float eps = op_param_f32(t, 0);
                        double sum = 0;
                        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                            double v = f32_at(a, i0, i1, i2, i3);
                            sum += v * v;
                        }
                        float scale = (float)(1.0 / sqrt(sum / (double)t->ne[0] + eps));
                        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                            *f32_ptr(t, i0, i1, i2, i3) = f32_at(a, i0, i1, i2, i3) * scale;
                        }
                        break;
                    }
                    default:
                        return GW_STATUS_FAILED;
                    }
                }
            }
        }
    }
    return GW_STATUS_SUCCESS;
}

struct abi_plan {
    struct ggml_cgraph *graph;
};

static void *be_graph_plan_create(gw_backend_t be, const struct ggml_cgraph *g) {
    HIT(ABI_BE_GRAPH_PLAN_CREATE, be);
    abi_last.graph = g;
    struct abi_plan *p = calloc(1, sizeof(*p));
    p->graph = (struct ggml_cgraph *)g;
    abi_last.plan = p;
    return p;
}

static void be_graph_plan_free(gw_backend_t be, void *plan) {
    HIT(ABI_BE_GRAPH_PLAN_FREE, be);
    abi_last.plan = plan;
    free(plan);
}

static void be_graph_plan_update(gw_backend_t be, void *plan, const struct ggml_cgraph *g) {
    HIT(ABI_BE_GRAPH_PLAN_UPDATE, be);
    abi_last.plan = plan;
    abi_last.graph = g;
    ((struct abi_plan *)plan)->graph = (struct ggml_cgraph *)g;
}

static int be_graph_plan_compute(gw_backend_t be, void *plan) {
    HIT(ABI_BE_GRAPH_PLAN_COMPUTE, be);
    abi_last.plan = plan;
    return compute_graph(((struct abi_plan *)plan)->graph);
}

static int be_graph_compute(gw_backend_t be, struct ggml_cgraph *g) {
    HIT(ABI_BE_GRAPH_COMPUTE, be);
    return compute_graph(g);
}

static void be_event_record(gw_backend_t be, gw_event_t ev) {
    HIT(ABI_BE_EVENT_RECORD, be);
    abi_last.event = ev;
}

static void be_event_wait(gw_backend_t be, gw_event_t ev) {
    HIT(ABI_BE_EVENT_WAIT, be);
    abi_last.event = ev;
}

static void be_graph_optimize(gw_backend_t be, struct ggml_cgraph *g, struct ggml_backend_graph_optimize_params *params) {
    HIT(ABI_BE_GRAPH_OPTIMIZE, be);
    abi_last.graph = g;
    abi_last.opt_params = params;
    abi_last.graph_n_nodes = ggml_graph_n_nodes(g);
}

static struct ggml_backend_i abi_backend_iface = {
    .get_name = be_get_name,
    .free = be_free,
    .set_tensor_async = be_set_tensor_async,
    .get_tensor_async = be_get_tensor_async,
    .set_tensor_2d_async = be_set_tensor_2d_async,
    .get_tensor_2d_async = be_get_tensor_2d_async,
    .cpy_tensor_async = be_cpy_tensor_async,
    .synchronize = be_synchronize,
    .graph_plan_create = be_graph_plan_create,
    .graph_plan_free = be_graph_plan_free,
    .graph_plan_update = be_graph_plan_update,
    .graph_plan_compute = be_graph_plan_compute,
    .graph_compute = be_graph_compute,
    .event_record = be_event_record,
    .event_wait = be_event_wait,
    .graph_optimize = be_graph_optimize,
};

/* ---------------- device ---------------- */

struct abi_dev_ctx {
    const char *name;
    const char *description;
    const char *device_id;
};

static struct abi_dev_ctx abi_dev_ctx = {"ABI0", "ABI probe device", "0000:c1:00.0"};

static struct abi_dev_ctx *dctx(gw_dev_t dev) { return (struct abi_dev_ctx *)dev->context; }

static const char *dev_get_name(gw_dev_t dev) {
    HIT(ABI_DEV_GET_NAME, dev);
    return dctx(dev)->name;
}

static const char *dev_get_description(gw_dev_t dev) {
    HIT(ABI_DEV_GET_DESCRIPTION, dev);
    return dctx(dev)->description;
}

static void dev_get_memory(gw_dev_t dev, size_t *free_mem, size_t *total) {
    HIT(ABI_DEV_GET_MEMORY, dev);
    *free_mem = ABI_MEM_FREE;
    *total = ABI_MEM_TOTAL;
}

static int dev_get_type(gw_dev_t dev) {
    HIT(ABI_DEV_GET_TYPE, dev);
    return abi_dev_type;
}

static void dev_get_props(gw_dev_t dev, struct ggml_backend_dev_props *props) {
    HIT(ABI_DEV_GET_PROPS, dev);
    memcpy(abi_last.props_seen, props, sizeof(abi_last.props_seen)); /* see union abi_props_buf */
    props->name = dctx(dev)->name;
    props->description = dctx(dev)->description;
    props->memory_free = ABI_MEM_FREE;
    props->memory_total = ABI_MEM_TOTAL;
    props->type = abi_dev_type;
    props->device_id = dctx(dev)->device_id;
    props->caps.async = true;
    props->caps.host_buffer = false;
    props->caps.buffer_from_host_ptr = true;
    props->caps.events = true;
    props->caps.mmap_support = false;
}

void abi_dev_get_props(gw_dev_t dev, union abi_props_buf *buf) {
    memset(buf->bytes, 0xCC, sizeof(buf->bytes));
    ggml_backend_dev_get_props(dev, &buf->props);
}

static gw_backend_t dev_init_backend(gw_dev_t dev, const char *params) {
    HIT(ABI_DEV_INIT_BACKEND, dev);
    abi_last.params = params;
    struct abi_backend_ctx *ctx = calloc(1, sizeof(*ctx));
    strcpy(ctx->name, dctx(dev)->name);
    ctx->params_null = params == NULL;
    if (params != NULL) {
        strncpy(ctx->params, params, sizeof(ctx->params) - 1);
    }
    gw_backend_t be = calloc(1, sizeof(*be));
    be->guid = abi_guid;
    be->iface = abi_backend_iface;
    be->device = dev;
    be->context = ctx;
    return be;
}

static gw_buft_t dev_get_buffer_type(gw_dev_t dev) {
    HIT(ABI_DEV_GET_BUFFER_TYPE, dev);
    return &abi_buft_obj;
}

static gw_buft_t dev_get_host_buffer_type(gw_dev_t dev) {
    HIT(ABI_DEV_GET_HOST_BUFFER_TYPE, dev);
    return &abi_host_buft_obj;
}

static gw_buffer_t dev_buffer_from_host_ptr(gw_dev_t dev, void *ptr, size_t size, size_t max_tensor_size) {
    HIT(ABI_DEV_BUFFER_FROM_HOST_PTR, dev);
    abi_last.data = ptr;
    abi_last.size = size;
    abi_last.max_tensor_size = max_tensor_size;
    struct abi_buffer_ctx *ctx = calloc(1, sizeof(*ctx));
    ctx->mem = ptr;
    ctx->size = size;
    ctx->owned = false;
    return ggml_backend_buffer_init(&abi_host_buft_obj, abi_buffer_iface, ctx, size);
}

static bool dev_supports_op(gw_dev_t dev, const struct ggml_tensor *op) {
    HIT(ABI_DEV_SUPPORTS_OP, dev);
    abi_last.tensor = op;
    switch (op->op) {
    case OP_NONE:
    case OP_ADD:
    case OP_SCALE:
    case OP_RMS_NORM:
    case OP_RESHAPE:
    case OP_VIEW:
    case OP_PERMUTE:
    case OP_TRANSPOSE:
        return op->type == TYPE_F32;
    default:
        return false;
    }
}

/* Reads buft->device: true only for the probe's own buffer types. */
static bool dev_supports_buft(gw_dev_t dev, gw_buft_t buft) {
    HIT(ABI_DEV_SUPPORTS_BUFT, dev);
    abi_last.buft = buft;
    return buft->device == dev;
}

static bool dev_offload_op(gw_dev_t dev, const struct ggml_tensor *op) {
    HIT(ABI_DEV_OFFLOAD_OP, dev);
    abi_last.tensor = op;
    return op->op == OP_RMS_NORM;
}

static gw_event_t dev_event_new(gw_dev_t dev) {
    HIT(ABI_DEV_EVENT_NEW, dev);
    gw_event_t ev = calloc(1, sizeof(*ev));
    ev->device = dev;
    ev->context = &abi_extra;
    abi_last.event = ev;
    return ev;
}

static void dev_event_free(gw_dev_t dev, gw_event_t ev) {
    HIT(ABI_DEV_EVENT_FREE, dev);
    abi_last.event = ev;
    free(ev);
}

static void dev_event_synchronize(gw_dev_t dev, gw_event_t ev) {
    HIT(ABI_DEV_EVENT_SYNCHRONIZE, dev);
    abi_last.event = ev;
}

static struct ggml_backend_reg abi_reg_obj;

static struct ggml_backend_device abi_dev = {
    .iface =
        {
            .get_name = dev_get_name,
            .get_description = dev_get_description,
            .get_memory = dev_get_memory,
            .get_type = dev_get_type,
            .get_props = dev_get_props,
            .init_backend = dev_init_backend,
            .get_buffer_type = dev_get_buffer_type,
            .get_host_buffer_type = dev_get_host_buffer_type,
            .buffer_from_host_ptr = dev_buffer_from_host_ptr,
            .supports_op = dev_supports_op,
            .supports_buft = dev_supports_buft,
            .offload_op = dev_offload_op,
            .event_new = dev_event_new,
            .event_free = dev_event_free,
            .event_synchronize = dev_event_synchronize,
        },
    .reg = &abi_reg_obj,
    .context = &abi_dev_ctx,
};

gw_dev_t abi_device(void) { return &abi_dev; }

/* ---------------- registry ---------------- */

static int abi_probe_fn(void) { return 42; }

void *abi_probe_proc(void) { return (void *)abi_probe_fn; }

static const char *reg_get_name(gw_reg_t reg) {
    HIT(ABI_REG_GET_NAME, reg);
    return *(int *)reg->context == ABI_REG_CONTEXT_MAGIC ? "ABI" : "bad-context";
}

static size_t reg_get_device_count(gw_reg_t reg) {
    HIT(ABI_REG_GET_DEVICE_COUNT, reg);
    return 1;
}

static gw_dev_t reg_get_device(gw_reg_t reg, size_t index) {
    HIT(ABI_REG_GET_DEVICE, reg);
    abi_last.index = index;
    return index == 0 ? &abi_dev : NULL;
}

static void *reg_get_proc_address(gw_reg_t reg, const char *name) {
    HIT(ABI_REG_GET_PROC_ADDRESS, reg);
    strncpy(abi_last.proc_name, name, sizeof(abi_last.proc_name) - 1);
    return strcmp(name, "abi_probe") == 0 ? abi_probe_proc() : NULL;
}

static struct ggml_backend_reg abi_reg_obj = {
    .api_version = GGML_WGPU_ABI_VERSION,
    .iface =
        {
            .get_name = reg_get_name,
            .get_device_count = reg_get_device_count,
            .get_device = reg_get_device,
            .get_proc_address = reg_get_proc_address,
        },
    .context = &abi_reg_ctx,
};

gw_reg_t abi_reg(void) { return &abi_reg_obj; }

/* ---------------- layout ---------------- */

#define LAYOUT_SZ(T) {"sizeof(" #T ")", sizeof(struct T)},
#define LAYOUT_OFF(T, F) {#T "." #F, offsetof(struct T, F)},

static const struct abi_layout_entry abi_layout_table[] = {ABI_LAYOUT(LAYOUT_SZ, LAYOUT_OFF)};

const struct abi_layout_entry *abi_layout(int *n) {
    *n = (int)(sizeof(abi_layout_table) / sizeof(abi_layout_table[0]));
    return abi_layout_table;
}

/* ---------------- graph internals ---------------- */

int abi_graph_raw_n_nodes(const struct ggml_cgraph *g) { return *(const int *)((const char *)g + 4); }

struct ggml_tensor *abi_graph_raw_node(const struct ggml_cgraph *g, int i) {
    struct ggml_tensor **nodes = *(struct ggml_tensor **const *)((const char *)g + 16);
    return nodes[i];
}
