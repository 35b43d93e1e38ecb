/*
 * Declarations shared by abi.go and abi.c: the public libggml-base functions the probe calls
 * that include/ggml-backend-abi.h does not declare (written from ggml 0.25.1's public API,
 * with its enums passed as int), and the probe's own C objects: a small host-memory buffer
 * type, device, registry and backend filled through our header, with call counters.
 */
#ifndef GGML_WGPU_ABI_PROBE_H
#define GGML_WGPU_ABI_PROBE_H

#include "ggml-backend-abi.h"

/* ---- public libggml-base API (ggml.h, ggml-backend.h, ggml-alloc.h) ---- */

struct ggml_context;
struct ggml_backend_sched;

struct ggml_init_params {
    size_t mem_size;
    void *mem_buffer;
    bool no_alloc;
};

struct ggml_context *ggml_init(struct ggml_init_params params);
void ggml_free(struct ggml_context *ctx);
size_t ggml_tensor_overhead(void);
size_t ggml_graph_overhead(void);

struct ggml_tensor *ggml_new_tensor_2d(struct ggml_context *ctx, int type, int64_t ne0, int64_t ne1);
struct ggml_tensor *ggml_new_tensor_4d(struct ggml_context *ctx, int type, int64_t ne0, int64_t ne1, int64_t ne2,
                                       int64_t ne3);
struct ggml_tensor *ggml_view_2d(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0, int64_t ne1, size_t nb1,
                                 size_t offset);
struct ggml_tensor *ggml_add(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b);
struct ggml_tensor *ggml_rms_norm(struct ggml_context *ctx, struct ggml_tensor *a, float eps);
struct ggml_tensor *ggml_scale_bias(struct ggml_context *ctx, struct ggml_tensor *a, float s, float b);

struct ggml_tensor *ggml_set_name(struct ggml_tensor *tensor, const char *name);
const char *ggml_get_name(const struct ggml_tensor *tensor);
void *ggml_get_data(const struct ggml_tensor *tensor);
void ggml_set_input(struct ggml_tensor *tensor);
void ggml_set_output(struct ggml_tensor *tensor);
size_t ggml_nbytes(const struct ggml_tensor *tensor);
int64_t ggml_nelements(const struct ggml_tensor *tensor);
const char *ggml_op_name(int op);
const char *ggml_type_name(int type);
const char *ggml_unary_op_name(int op);
const char *ggml_glu_op_name(int op);
int64_t ggml_blck_size(int type);
size_t ggml_type_size(int type);

struct ggml_cgraph *ggml_new_graph(struct ggml_context *ctx);
void ggml_build_forward_expand(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor);

const char *ggml_backend_buft_name(gw_buft_t buft);
gw_buffer_t ggml_backend_buft_alloc_buffer(gw_buft_t buft, size_t size);
size_t ggml_backend_buft_get_alignment(gw_buft_t buft);
size_t ggml_backend_buft_get_max_size(gw_buft_t buft);
size_t ggml_backend_buft_get_alloc_size(gw_buft_t buft, const struct ggml_tensor *tensor);
bool ggml_backend_buft_is_host(gw_buft_t buft);
gw_dev_t ggml_backend_buft_get_device(gw_buft_t buft);

const char *ggml_backend_buffer_name(gw_buffer_t buffer);
void ggml_backend_buffer_free(gw_buffer_t buffer);
void *ggml_backend_buffer_get_base(gw_buffer_t buffer);
size_t ggml_backend_buffer_get_size(gw_buffer_t buffer);
size_t ggml_backend_buffer_get_alignment(gw_buffer_t buffer);
size_t ggml_backend_buffer_get_max_size(gw_buffer_t buffer);
size_t ggml_backend_buffer_get_alloc_size(gw_buffer_t buffer, const struct ggml_tensor *tensor);
void ggml_backend_buffer_clear(gw_buffer_t buffer, uint8_t value);
bool ggml_backend_buffer_is_host(gw_buffer_t buffer);
void ggml_backend_buffer_set_usage(gw_buffer_t buffer, int usage);
int ggml_backend_buffer_get_usage(gw_buffer_t buffer);
gw_buft_t ggml_backend_buffer_get_type(gw_buffer_t buffer);
void ggml_backend_buffer_reset(gw_buffer_t buffer);

int ggml_backend_tensor_alloc(gw_buffer_t buffer, struct ggml_tensor *tensor, void *addr);
void ggml_backend_tensor_set(struct ggml_tensor *tensor, const void *data, size_t offset, size_t size);
void ggml_backend_tensor_get(const struct ggml_tensor *tensor, void *data, size_t offset, size_t size);
void ggml_backend_tensor_set_2d(struct ggml_tensor *tensor, const void *data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data);
void ggml_backend_tensor_get_2d(const struct ggml_tensor *tensor, void *data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data);
void ggml_backend_tensor_memset(struct ggml_tensor *tensor, uint8_t value, size_t offset, size_t size);
void ggml_backend_tensor_copy(const struct ggml_tensor *src, struct ggml_tensor *dst);

const char *ggml_backend_reg_name(gw_reg_t reg);
size_t ggml_backend_reg_dev_count(gw_reg_t reg);
gw_dev_t ggml_backend_reg_dev_get(gw_reg_t reg, size_t index);
void *ggml_backend_reg_get_proc_address(gw_reg_t reg, const char *name);

const char *ggml_backend_dev_name(gw_dev_t device);
const char *ggml_backend_dev_description(gw_dev_t device);
void ggml_backend_dev_memory(gw_dev_t device, size_t *free, size_t *total);
int ggml_backend_dev_type(gw_dev_t device);
void ggml_backend_dev_get_props(gw_dev_t device, struct ggml_backend_dev_props *props);
gw_reg_t ggml_backend_dev_backend_reg(gw_dev_t device);
gw_backend_t ggml_backend_dev_init(gw_dev_t device, const char *params);
gw_buft_t ggml_backend_dev_buffer_type(gw_dev_t device);
gw_buft_t ggml_backend_dev_host_buffer_type(gw_dev_t device);
gw_buffer_t ggml_backend_dev_buffer_from_host_ptr(gw_dev_t device, void *ptr, size_t size, size_t max_tensor_size);
bool ggml_backend_dev_supports_op(gw_dev_t device, const struct ggml_tensor *op);
bool ggml_backend_dev_supports_buft(gw_dev_t device, gw_buft_t buft);
bool ggml_backend_dev_offload_op(gw_dev_t device, const struct ggml_tensor *op);

gw_event_t ggml_backend_event_new(gw_dev_t device);
void ggml_backend_event_free(gw_event_t event);
void ggml_backend_event_record(gw_event_t event, gw_backend_t backend);
void ggml_backend_event_synchronize(gw_event_t event);
void ggml_backend_event_wait(gw_backend_t backend, gw_event_t event);

uint8_t *ggml_backend_guid(gw_backend_t backend);
const char *ggml_backend_name(gw_backend_t backend);
void ggml_backend_free(gw_backend_t backend);
gw_dev_t ggml_backend_get_device(gw_backend_t backend);
gw_buft_t ggml_backend_get_default_buffer_type(gw_backend_t backend);
void ggml_backend_synchronize(gw_backend_t backend);
void ggml_backend_tensor_set_async(gw_backend_t backend, struct ggml_tensor *tensor, const void *data, size_t offset,
                                   size_t size);
void ggml_backend_tensor_get_async(gw_backend_t backend, const struct ggml_tensor *tensor, void *data, size_t offset,
                                   size_t size);
void ggml_backend_tensor_set_2d_async(gw_backend_t backend, struct ggml_tensor *tensor, const void *data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data);
void ggml_backend_tensor_get_2d_async(gw_backend_t backend, const struct ggml_tensor *tensor, void *data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data);
void ggml_backend_tensor_copy_async(gw_backend_t backend_src, gw_backend_t backend_dst, const struct ggml_tensor *src,
                                    struct ggml_tensor *dst);
void *ggml_backend_graph_plan_create(gw_backend_t backend, struct ggml_cgraph *cgraph);
void ggml_backend_graph_plan_free(gw_backend_t backend, void *plan);
int ggml_backend_graph_plan_compute(gw_backend_t backend, void *plan);
int ggml_backend_graph_compute(gw_backend_t backend, struct ggml_cgraph *cgraph);
int ggml_backend_graph_compute_async(gw_backend_t backend, struct ggml_cgraph *cgraph);
bool ggml_backend_supports_op(gw_backend_t backend, const struct ggml_tensor *op);
bool ggml_backend_supports_buft(gw_backend_t backend, gw_buft_t buft);
bool ggml_backend_offload_op(gw_backend_t backend, const struct ggml_tensor *op);

gw_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context *ctx, gw_buft_t buft);

struct ggml_backend_sched *ggml_backend_sched_new(gw_backend_t *backends, gw_buft_t *bufts, int n_backends,
                                                  size_t graph_size, bool parallel, bool op_offload);
void ggml_backend_sched_free(struct ggml_backend_sched *sched);
bool ggml_backend_sched_alloc_graph(struct ggml_backend_sched *sched, struct ggml_cgraph *graph);
int ggml_backend_sched_graph_compute(struct ggml_backend_sched *sched, struct ggml_cgraph *graph);
int ggml_backend_sched_get_n_splits(struct ggml_backend_sched *sched);

/* ---- the probe's own objects (abi.c) ---- */

/* Every vtable slot the probe fills; abi_calls[slot] counts the calls ggml made to it. */
enum abi_slot {
    ABI_BUFT_GET_NAME, ABI_BUFT_ALLOC_BUFFER, ABI_BUFT_GET_ALIGNMENT, ABI_BUFT_GET_MAX_SIZE,
    ABI_BUFT_GET_ALLOC_SIZE, ABI_BUFT_IS_HOST,

    ABI_BUF_FREE_BUFFER, ABI_BUF_GET_BASE, ABI_BUF_INIT_TENSOR, ABI_BUF_MEMSET_TENSOR, ABI_BUF_SET_TENSOR,
    ABI_BUF_GET_TENSOR, ABI_BUF_SET_TENSOR_2D, ABI_BUF_GET_TENSOR_2D, ABI_BUF_CPY_TENSOR, ABI_BUF_CLEAR,
    ABI_BUF_RESET,

    ABI_BE_GET_NAME, ABI_BE_FREE, ABI_BE_SET_TENSOR_ASYNC, ABI_BE_GET_TENSOR_ASYNC, ABI_BE_SET_TENSOR_2D_ASYNC,
    ABI_BE_GET_TENSOR_2D_ASYNC, ABI_BE_CPY_TENSOR_ASYNC, ABI_BE_SYNCHRONIZE, ABI_BE_GRAPH_PLAN_CREATE,
    ABI_BE_GRAPH_PLAN_FREE, ABI_BE_GRAPH_PLAN_UPDATE, ABI_BE_GRAPH_PLAN_COMPUTE, ABI_BE_GRAPH_COMPUTE,
    ABI_BE_EVENT_RECORD, ABI_BE_EVENT_WAIT, ABI_BE_GRAPH_OPTIMIZE,

    ABI_DEV_GET_NAME, ABI_DEV_GET_DESCRIPTION, ABI_DEV_GET_MEMORY, ABI_DEV_GET_TYPE, ABI_DEV_GET_PROPS,
    ABI_DEV_INIT_BACKEND, ABI_DEV_GET_BUFFER_TYPE, ABI_DEV_GET_HOST_BUFFER_TYPE, ABI_DEV_BUFFER_FROM_HOST_PTR,
    ABI_DEV_SUPPORTS_OP, ABI_DEV_SUPPORTS_BUFT, ABI_DEV_OFFLOAD_OP, ABI_DEV_EVENT_NEW, ABI_DEV_EVENT_FREE,
    ABI_DEV_EVENT_SYNCHRONIZE,

    ABI_REG_GET_NAME, ABI_REG_GET_DEVICE_COUNT, ABI_REG_GET_DEVICE, ABI_REG_GET_PROC_ADDRESS,

    ABI_SLOT_COUNT
};

enum { ABI_MAX_SEEN = 32 };

/* The arguments of the latest calls into the probe's vtables. */
struct abi_last {
    const void *self;    /* the buffer, buffer type, backend, device or reg the call was made on */
    const void *tensor;  /* tensor / op / src */
    const void *tensor2; /* dst of a copy */
    const void *data;
    size_t offset, size, n_copies, stride_tensor, stride_data, max_tensor_size, index;
    int value;
    const void *backend2; /* dst backend of cpy_tensor_async */
    const void *graph;
    const void *plan;
    const void *event;
    const void *buft;
    const void *opt_params;
    const char *params; /* init_backend params (pointer as passed) */
    char proc_name[64]; /* the name get_proc_address was asked for */
    uint8_t props_seen[128];         /* the props memory as get_props received it */
    int graph_n_nodes;               /* ggml_graph_n_nodes of the latest compute / optimize */
    int n_seen;                      /* nodes the latest compute executed */
    const void *seen[ABI_MAX_SEEN];  /* ... and which, in order */
};

extern const char *const abi_slot_names[ABI_SLOT_COUNT];
extern int abi_calls[ABI_SLOT_COUNT];
extern struct abi_last abi_last;
extern int abi_dev_type; /* what the device's get_type reports */
extern uint8_t abi_guid[16];

/* Constants the probe's objects report, checked from Go. */
enum {
    ABI_BUFT_ALIGNMENT = 64,
    ABI_HOST_BUFT_ALIGNMENT = 32,
    ABI_LEAF_ALLOC_PAD = 256, /* get_alloc_size pads tensors whose op is NONE by this much */
    ABI_REG_CONTEXT_MAGIC = 0x5EC0,
};
#define ABI_BUFT_MAX_SIZE ((size_t)1 << 40)
#define ABI_HOST_BUFT_MAX_SIZE ((size_t)1 << 36)
#define ABI_MEM_FREE ((size_t)3 << 30)
#define ABI_MEM_TOTAL ((size_t)8 << 30)

gw_reg_t abi_reg(void);
gw_dev_t abi_device(void);
gw_buft_t abi_buft(void);
gw_buft_t abi_host_buft(void);
void *abi_probe_proc(void); /* the address get_proc_address returns for "abi_probe" */
const void *abi_extra_marker(void); /* what init_tensor stores in tensor->extra */
void abi_reset(void);

/* Host memory behind a probe buffer (its context). */
struct abi_buffer_ctx {
    void *mem;
    size_t size;
    bool owned;
};

/* Context of a probe backend. */
struct abi_backend_ctx {
    char name[32];
    char params[64];
    bool params_null;
};

/* Storage for ggml_backend_dev_get_props with room past the struct: abi_dev_get_props fills
 * it with 0xCC first, and the probe's get_props snapshots it into abi_last.props_seen, so the
 * bytes ggml's memset(props, 0, sizeof(*props)) cleared show libggml-base's sizeof. */
union abi_props_buf {
    struct ggml_backend_dev_props props;
    uint8_t bytes[128];
};
void abi_dev_get_props(gw_dev_t dev, union abi_props_buf *buf);

/* Field offsets and struct sizes of include/ggml-backend-abi.h, computed with offsetof/sizeof. */
struct abi_layout_entry {
    const char *name;
    size_t value;
};
const struct abi_layout_entry *abi_layout(int *n);

/* Internal ggml_cgraph fields at the offsets docs/ARCHITECTURE.md section 3 names (n_nodes int @4, nodes @16). */
int abi_graph_raw_n_nodes(const struct ggml_cgraph *g);
struct ggml_tensor *abi_graph_raw_node(const struct ggml_cgraph *g, int i);

#endif
