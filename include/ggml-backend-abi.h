/*
 * Our rendition of the ggml backend ABI, API version 2 (ggml 0.25.1), for x86-64 and other
 * LP64 targets: the structs a backend fills and the tensor fields it reads. Written from
 * the published layout facts; abi_test checks it against the real libggml-base at run time.
 */
#ifndef GGML_WGPU_BACKEND_ABI_H
#define GGML_WGPU_BACKEND_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGML_WGPU_ABI_VERSION 2

enum { GW_MAX_DIMS = 4, GW_MAX_SRC = 10, GW_MAX_OP_PARAMS = 64, GW_MAX_NAME = 64 };

/* enum ggml_status */
enum { GW_STATUS_ALLOC_FAILED = -2, GW_STATUS_FAILED = -1, GW_STATUS_SUCCESS = 0, GW_STATUS_ABORTED = 1 };
/* enum ggml_backend_dev_type */
enum { GW_DEV_TYPE_CPU = 0, GW_DEV_TYPE_GPU = 1, GW_DEV_TYPE_IGPU = 2, GW_DEV_TYPE_ACCEL = 3, GW_DEV_TYPE_META = 4 };
/* tensor flags */
enum { GW_FLAG_INPUT = 1, GW_FLAG_OUTPUT = 2, GW_FLAG_PARAM = 4, GW_FLAG_LOSS = 8, GW_FLAG_COMPUTE = 16 };

struct ggml_backend_buffer;
struct ggml_backend_buffer_type;
struct ggml_backend_device;
struct ggml_backend_reg;
struct ggml_backend;
struct ggml_backend_event;
struct ggml_cgraph;

/* 336 bytes */
struct ggml_tensor {
    int32_t type;                         /* @0   */
    struct ggml_backend_buffer *buffer;   /* @8   */
    int64_t ne[GW_MAX_DIMS];              /* @16  */
    size_t nb[GW_MAX_DIMS];               /* @48  */
    int32_t op;                           /* @80  */
    int32_t op_params[GW_MAX_OP_PARAMS / 4]; /* @84 */
    int32_t flags;                        /* @148 */
    struct ggml_tensor *src[GW_MAX_SRC];  /* @152 */
    struct ggml_tensor *view_src;         /* @232 */
    size_t view_offs;                     /* @240 */
    void *data;                           /* @248 */
    char name[GW_MAX_NAME];               /* @256 */
    void *extra;                          /* @320 */
    char padding[8];
};

typedef struct ggml_backend_buffer_type *gw_buft_t;
typedef struct ggml_backend_buffer *gw_buffer_t;
typedef struct ggml_backend_device *gw_dev_t;
typedef struct ggml_backend_reg *gw_reg_t;
typedef struct ggml_backend *gw_backend_t;
typedef struct ggml_backend_event *gw_event_t;

/* 48 bytes */
struct ggml_backend_buffer_type_i {
    const char *(*get_name)(gw_buft_t buft);
    gw_buffer_t (*alloc_buffer)(gw_buft_t buft, size_t size);
    size_t (*get_alignment)(gw_buft_t buft);
    size_t (*get_max_size)(gw_buft_t buft);
    size_t (*get_alloc_size)(gw_buft_t buft, const struct ggml_tensor *tensor);
    bool (*is_host)(gw_buft_t buft);
};

/* 64 bytes */
struct ggml_backend_buffer_type {
    struct ggml_backend_buffer_type_i iface;
    gw_dev_t device;
    void *context;
};

/* 88 bytes */
struct ggml_backend_buffer_i {
    void (*free_buffer)(gw_buffer_t buffer);
    void *(*get_base)(gw_buffer_t buffer);
    int (*init_tensor)(gw_buffer_t buffer, struct ggml_tensor *tensor);
    void (*memset_tensor)(gw_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value, size_t offset, size_t size);
    void (*set_tensor)(gw_buffer_t buffer, struct ggml_tensor *tensor, const void *data, size_t offset, size_t size);
    void (*get_tensor)(gw_buffer_t buffer, const struct ggml_tensor *tensor, void *data, size_t offset, size_t size);
    void (*set_tensor_2d)(gw_buffer_t buffer, struct ggml_tensor *tensor, const void *data, size_t offset, size_t size,
                          size_t n_copies, size_t stride_tensor, size_t stride_data);
    void (*get_tensor_2d)(gw_buffer_t buffer, const struct ggml_tensor *tensor, void *data, size_t offset, size_t size,
                          size_t n_copies, size_t stride_tensor, size_t stride_data);
    bool (*cpy_tensor)(gw_buffer_t buffer, const struct ggml_tensor *src, struct ggml_tensor *dst);
    void (*clear)(gw_buffer_t buffer, uint8_t value);
    void (*reset)(gw_buffer_t buffer);
};

/* 120 bytes; created only by libggml-base's ggml_backend_buffer_init */
struct ggml_backend_buffer {
    struct ggml_backend_buffer_i iface;
    gw_buft_t buft;
    void *context;
    size_t size;
    int usage; /* ANY 0, WEIGHTS 1, COMPUTE 2 */
};

/* What graph_optimize receives: a backend that reorders nodes reports, through
 * add_alloc_dep, that tensor must stay allocated until node `until` has run. */
struct ggml_backend_graph_optimize_params {
    void (*add_alloc_dep)(void *user_data, struct ggml_tensor *tensor, struct ggml_tensor *until);
    void *user_data;
};

/* 128 bytes */
struct ggml_backend_i {
    const char *(*get_name)(gw_backend_t backend);
    void (*free)(gw_backend_t backend);
    void (*set_tensor_async)(gw_backend_t backend, struct ggml_tensor *tensor, const void *data, size_t offset, size_t size);
    void (*get_tensor_async)(gw_backend_t backend, const struct ggml_tensor *tensor, void *data, size_t offset, size_t size);
    void (*set_tensor_2d_async)(gw_backend_t backend, struct ggml_tensor *tensor, const void *data, size_t offset,
                                size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
    void (*get_tensor_2d_async)(gw_backend_t backend, const struct ggml_tensor *tensor, void *data, size_t offset,
                                size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
    bool (*cpy_tensor_async)(gw_backend_t src, gw_backend_t dst, const struct ggml_tensor *a, struct ggml_tensor *b);
    void (*synchronize)(gw_backend_t backend);
    void *(*graph_plan_create)(gw_backend_t backend, const struct ggml_cgraph *cgraph);
    void (*graph_plan_free)(gw_backend_t backend, void *plan);
    void (*graph_plan_update)(gw_backend_t backend, void *plan, const struct ggml_cgraph *cgraph);
    int (*graph_plan_compute)(gw_backend_t backend, void *plan);
    int (*graph_compute)(gw_backend_t backend, struct ggml_cgraph *cgraph);
    void (*event_record)(gw_backend_t backend, gw_event_t event);
    void (*event_wait)(gw_backend_t backend, gw_event_t event);
    void (*graph_optimize)(gw_backend_t backend, struct ggml_cgraph *cgraph, struct ggml_backend_graph_optimize_params *params);
};

/* 152 bytes */
struct ggml_backend {
    uint8_t *guid; /* points at 16 bytes */
    struct ggml_backend_i iface;
    gw_dev_t device;
    void *context;
};

/* 16 bytes */
struct ggml_backend_event {
    gw_dev_t device;
    void *context;
};

struct ggml_backend_dev_caps {
    bool async, host_buffer, buffer_from_host_ptr, events, mmap_support;
};

/* 56 bytes */
struct ggml_backend_dev_props {
    const char *name;
    const char *description;
    size_t memory_free;
    size_t memory_total;
    int type;
    const char *device_id;
    struct ggml_backend_dev_caps caps;
};

/* 120 bytes */
struct ggml_backend_device_i {
    const char *(*get_name)(gw_dev_t dev);
    const char *(*get_description)(gw_dev_t dev);
    void (*get_memory)(gw_dev_t dev, size_t *free, size_t *total);
    int (*get_type)(gw_dev_t dev);
    void (*get_props)(gw_dev_t dev, struct ggml_backend_dev_props *props);
    gw_backend_t (*init_backend)(gw_dev_t dev, const char *params);
    gw_buft_t (*get_buffer_type)(gw_dev_t dev);
    gw_buft_t (*get_host_buffer_type)(gw_dev_t dev);
    gw_buffer_t (*buffer_from_host_ptr)(gw_dev_t dev, void *ptr, size_t size, size_t max_tensor_size);
    bool (*supports_op)(gw_dev_t dev, const struct ggml_tensor *op);
    bool (*supports_buft)(gw_dev_t dev, gw_buft_t buft);
    bool (*offload_op)(gw_dev_t dev, const struct ggml_tensor *op);
    gw_event_t (*event_new)(gw_dev_t dev);
    void (*event_free)(gw_dev_t dev, gw_event_t event);
    void (*event_synchronize)(gw_dev_t dev, gw_event_t event);
};

/* 136 bytes */
struct ggml_backend_device {
    struct ggml_backend_device_i iface;
    gw_reg_t reg;
    void *context;
};

/* 32 bytes */
struct ggml_backend_reg_i {
    const char *(*get_name)(gw_reg_t reg);
    size_t (*get_device_count)(gw_reg_t reg);
    gw_dev_t (*get_device)(gw_reg_t reg, size_t index);
    void *(*get_proc_address)(gw_reg_t reg, const char *name);
};

/* 48 bytes */
struct ggml_backend_reg {
    int api_version;
    struct ggml_backend_reg_i iface;
    void *context;
};

/* The libggml-base functions a backend calls. */
gw_buffer_t ggml_backend_buffer_init(gw_buft_t buft, struct ggml_backend_buffer_i iface, void *context, size_t size);
int ggml_graph_n_nodes(struct ggml_cgraph *cgraph);
struct ggml_tensor *ggml_graph_node(struct ggml_cgraph *cgraph, int i);
void ggml_log_internal(int level, const char *format, ...);

#define GW_ABI_CHECK(type, size) _Static_assert(sizeof(type) == (size), #type " has the wrong size")
GW_ABI_CHECK(struct ggml_tensor, 336);
GW_ABI_CHECK(struct ggml_backend_buffer_type_i, 48);
GW_ABI_CHECK(struct ggml_backend_buffer_type, 64);
GW_ABI_CHECK(struct ggml_backend_buffer_i, 88);
GW_ABI_CHECK(struct ggml_backend_buffer, 120);
GW_ABI_CHECK(struct ggml_backend_i, 128);
GW_ABI_CHECK(struct ggml_backend, 152);
GW_ABI_CHECK(struct ggml_backend_event, 16);
GW_ABI_CHECK(struct ggml_backend_dev_props, 56);
GW_ABI_CHECK(struct ggml_backend_device_i, 120);
GW_ABI_CHECK(struct ggml_backend_device, 136);
GW_ABI_CHECK(struct ggml_backend_reg_i, 32);
GW_ABI_CHECK(struct ggml_backend_reg, 48);

#endif
