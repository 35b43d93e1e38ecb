#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "_cgo_export.h"

// The cast gives each Go callback the exact pointer type of its vtable field (cgo's
// prototypes drop const).
#define FN(iface, field, fn) .field = (__typeof__(((struct iface *)0)->field))(fn)

static struct ggml_backend_reg_i reg_iface = {
    FN(ggml_backend_reg_i, get_name, gwRegGetName),
    FN(ggml_backend_reg_i, get_device_count, gwRegDeviceCount),
    FN(ggml_backend_reg_i, get_device, gwRegGetDevice),
    FN(ggml_backend_reg_i, get_proc_address, gwRegGetProcAddress),
};

static struct ggml_backend_device_i device_iface = {
    FN(ggml_backend_device_i, get_name, gwDevGetName),
    FN(ggml_backend_device_i, get_description, gwDevGetDescription),
    FN(ggml_backend_device_i, get_memory, gwDevGetMemory),
    FN(ggml_backend_device_i, get_type, gwDevGetType),
    FN(ggml_backend_device_i, get_props, gwDevGetProps),
    FN(ggml_backend_device_i, init_backend, gwDevInitBackend),
    FN(ggml_backend_device_i, get_buffer_type, gwDevGetBufferType),
    FN(ggml_backend_device_i, supports_op, gwDevSupportsOp),
    FN(ggml_backend_device_i, supports_buft, gwDevSupportsBuft),
};

static struct ggml_backend_buffer_type_i buft_iface = {
    FN(ggml_backend_buffer_type_i, get_name, gwBuftGetName),
    FN(ggml_backend_buffer_type_i, alloc_buffer, gwBuftAllocBuffer),
    FN(ggml_backend_buffer_type_i, get_alignment, gwBuftGetAlignment),
    FN(ggml_backend_buffer_type_i, get_max_size, gwBuftGetMaxSize),
};

static struct ggml_backend_buffer_i buffer_iface = {
    FN(ggml_backend_buffer_i, free_buffer, gwBufferFree),
    FN(ggml_backend_buffer_i, get_base, gwBufferGetBase),
    FN(ggml_backend_buffer_i, memset_tensor, gwBufferMemsetTensor),
    FN(ggml_backend_buffer_i, set_tensor, gwBufferSetTensor),
    FN(ggml_backend_buffer_i, get_tensor, gwBufferGetTensor),
    FN(ggml_backend_buffer_i, cpy_tensor, gwBufferCpyTensor),
    FN(ggml_backend_buffer_i, clear, gwBufferClear),
};

static struct ggml_backend_i backend_iface = {
    FN(ggml_backend_i, get_name, gwBackendGetName),
    FN(ggml_backend_i, free, gwBackendFree),
    FN(ggml_backend_i, synchronize, gwBackendSynchronize),
    FN(ggml_backend_i, graph_compute, gwBackendGraphCompute),
    FN(ggml_backend_i, graph_optimize, gwBackendGraphOptimize),
};

static struct ggml_backend_reg reg;
static struct ggml_backend_device *devices;
static struct ggml_backend_buffer_type *bufts;
static int n_dev;

// A fixed guid for every backend instance of this library.
static uint8_t guid[16] = {0x9a, 0x3c, 0x57, 0x0e, 0x21, 0x4b, 0x4f, 0x1d, 0xb6, 0x08, 0x77, 0xe3, 0x5d, 0xc2, 0x91, 0x4a};

struct ggml_backend_reg *gw_reg_build(int n_devices) {
    devices = calloc(n_devices > 0 ? n_devices : 1, sizeof *devices);
    bufts = calloc(n_devices > 0 ? n_devices : 1, sizeof *bufts);
    if (!devices || !bufts) {
        free(devices);
        free(bufts);
        devices = NULL;
        bufts = NULL;
        return NULL;
    }
    n_dev = n_devices;
    for (int i = 0; i < n_devices; i++) {
        devices[i].iface = device_iface;
        devices[i].reg = &reg;
        devices[i].context = (void *)(intptr_t)i;
        bufts[i].iface = buft_iface;
        bufts[i].device = &devices[i];
        bufts[i].context = (void *)(intptr_t)i;
    }
    reg.api_version = GGML_WGPU_ABI_VERSION;
    reg.iface = reg_iface;
    reg.context = NULL;
    return &reg;
}

struct ggml_backend_device *gw_device_at(int i) { return i >= 0 && i < n_dev ? &devices[i] : NULL; }
struct ggml_backend_buffer_type *gw_buft_at(int i) { return i >= 0 && i < n_dev ? &bufts[i] : NULL; }

int gw_buft_index(struct ggml_backend_buffer_type *buft) {
    if (!buft || !bufts || buft < bufts || buft >= bufts + n_dev) return -1;
    return (int)(buft - bufts);
}

int gw_device_index(struct ggml_backend_device *dev) {
    if (!dev || !devices || dev < devices || dev >= devices + n_dev) return -1;
    return (int)(dev - devices);
}

struct ggml_backend_buffer *gw_buffer_new(struct ggml_backend_buffer_type *buft, uint64_t id, size_t size) {
    return ggml_backend_buffer_init(buft, buffer_iface, (void *)(uintptr_t)id, size);
}

struct ggml_backend *gw_backend_new(struct ggml_backend_device *dev, uint64_t handle) {
    struct ggml_backend *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->guid = guid;
    b->iface = backend_iface;
    b->device = dev;
    b->context = (void *)(uintptr_t)handle;
    return b;
}

void gw_backend_delete(struct ggml_backend *b) { free(b); }

int gw_is_ours(struct ggml_backend *b) { return b && b->guid && memcmp(b->guid, guid, 16) == 0; }

void gw_log(int level, const char *msg) { ggml_log_internal(level, "%s", msg); }

void *gw_address(uint64_t a) { return (void *)(uintptr_t)a; }

void gw_graph_nodes(struct ggml_cgraph *g, struct ggml_tensor **out, int n) {
    for (int i = 0; i < n; i++) out[i] = ggml_graph_node(g, i);
}

char *shim_strndup(const char *p, size_t n) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

char *gw_reg_name(void) {
    static char name[] = "WGPU";
    return name;
}

// The pointer to a graph's node array lies at offset 16 of struct ggml_cgraph
// (docs/ARCHITECTURE.md; include/abi checks it against the real library).
void gw_graph_set_node(struct ggml_cgraph *g, int i, struct ggml_tensor *t) {
    struct ggml_tensor **nodes = *(struct ggml_tensor ***)((char *)g + 16);
    nodes[i] = t;
}
