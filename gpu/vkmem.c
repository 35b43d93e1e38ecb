// Device memory through the Vulkan loader: WebGPU has no memory query, so the device-local
// heap sizes (and, with VK_EXT_memory_budget, the budget) of the Vulkan physical device
// behind an adapter are read directly, and so are its PCI bus location
// (VK_EXT_pci_bus_info) and its multiprocessor count (VK_NV_shader_sm_builtins). The
// loader is opened at run time; without it the query reports nothing and callers fall
// back.
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vkmem.h"

typedef int32_t VkResult;
typedef void *VkInstance;
typedef void *VkPhysicalDevice;
typedef void (*PFN_void)(void);

// Layout facts of the few Vulkan structs used here.
typedef struct {
    uint32_t sType; const void *pNext; const char *pApplicationName; uint32_t applicationVersion;
    const char *pEngineName; uint32_t engineVersion; uint32_t apiVersion;
} AppInfo;
typedef struct {
    uint32_t sType; const void *pNext; uint32_t flags; const AppInfo *pApplicationInfo;
    uint32_t enabledLayerCount; const char *const *ppEnabledLayerNames;
    uint32_t enabledExtensionCount; const char *const *ppEnabledExtensionNames;
} InstanceInfo;
typedef struct { uint32_t propertyFlags, heapIndex; } MemType;
typedef struct { uint64_t size; uint32_t flags; } MemHeap;
typedef struct { uint32_t memoryTypeCount; MemType memoryTypes[32]; uint32_t memoryHeapCount; MemHeap memoryHeaps[16]; } MemProps;
typedef struct { uint32_t sType; void *pNext; MemProps memoryProperties; } MemProps2;
typedef struct { uint32_t sType; void *pNext; uint64_t heapBudget[16]; uint64_t heapUsage[16]; } MemBudget;
typedef struct { char extensionName[256]; uint32_t specVersion; } ExtProps;

enum {
    STYPE_APPLICATION_INFO = 0,
    STYPE_INSTANCE_CREATE_INFO = 1,
    STYPE_MEMORY_PROPERTIES_2 = 1000059006,
    STYPE_MEMORY_BUDGET = 1000237000,
    STYPE_PROPERTIES_2 = 1000059001,
    STYPE_PCI_BUS_INFO = 1000212000,
    STYPE_SM_BUILTINS_PROPERTIES = 1000154001,
    HEAP_DEVICE_LOCAL = 1,
    API_1_1 = (1u << 22) | (1u << 12),
};

// Vulkan entry points a query needs, resolved once per instance.
typedef struct {
    PFN_void (*gipa)(VkInstance, const char *);
    VkInstance inst;
    VkResult (*exts)(VkPhysicalDevice, const char *, uint32_t *, ExtProps *);
    void (*mem2)(VkPhysicalDevice, MemProps2 *);
    void (*props2)(VkPhysicalDevice, void *);
} Vk;

typedef void (*query_fn)(const Vk *vk, VkPhysicalDevice pd, void *out);

// has_ext reports whether the physical device offers the named device extension.
static int has_ext(const Vk *vk, VkPhysicalDevice pd, const char *name) {
    uint32_t ne = 0;
    int found = 0;
    if (vk->exts(pd, NULL, &ne, NULL) != 0 || ne == 0) return 0;
    ExtProps *ep = calloc(ne, sizeof *ep);
    if (ep && vk->exts(pd, NULL, &ne, ep) < 0) ne = 0;
    for (uint32_t k = 0; ep && k < ne; k++)
        if (!strcmp(ep[k].extensionName, name)) found = 1;
    free(ep);
    return found;
}

// with_device creates a Vulkan instance, calls query on the first physical device with the
// given vendor and device IDs, and returns how many physical devices have those IDs (0
// when the loader or the instance cannot be had).
static int with_device(uint32_t vendor, uint32_t device, query_fn query, void *out) {
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    Vk vk;
    memset(&vk, 0, sizeof vk);
    vk.gipa = (PFN_void (*)(VkInstance, const char *))dlsym(lib, "vkGetInstanceProcAddr");
    if (!vk.gipa) { dlclose(lib); return 0; }
    VkResult (*create)(const InstanceInfo *, const void *, VkInstance *) = (void *)vk.gipa(NULL, "vkCreateInstance");
    AppInfo app = {STYPE_APPLICATION_INFO, NULL, "ggml-wgpu", 1, "ggml-wgpu", 1, API_1_1};
    InstanceInfo ci = {STYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
    if (!create || create(&ci, NULL, &vk.inst) != 0) { dlclose(lib); return 0; }
    void (*destroy)(VkInstance, const void *) = (void *)vk.gipa(vk.inst, "vkDestroyInstance");
    VkResult (*enumerate)(VkInstance, uint32_t *, VkPhysicalDevice *) = (void *)vk.gipa(vk.inst, "vkEnumeratePhysicalDevices");
    void (*props)(VkPhysicalDevice, void *) = (void *)vk.gipa(vk.inst, "vkGetPhysicalDeviceProperties");
    vk.mem2 = (void *)vk.gipa(vk.inst, "vkGetPhysicalDeviceMemoryProperties2");
    vk.props2 = (void *)vk.gipa(vk.inst, "vkGetPhysicalDeviceProperties2");
    vk.exts = (void *)vk.gipa(vk.inst, "vkEnumerateDeviceExtensionProperties");
    int matches = 0;
    uint32_t n = 0;
    if (enumerate && props && vk.mem2 && vk.props2 && vk.exts && enumerate(vk.inst, &n, NULL) == 0 && n > 0) {
        VkPhysicalDevice *pds = calloc(n, sizeof *pds);
        if (pds && enumerate(vk.inst, &n, pds) < 0) n = 0;
        for (uint32_t i = 0; pds && i < n; i++) {
            // VkPhysicalDeviceProperties starts with apiVersion, driverVersion, vendorID, deviceID.
            uint32_t *p = calloc(1, 4096);
            if (!p) break;
            props(pds[i], p);
            if (p[2] == vendor && p[3] == device && matches++ == 0) query(&vk, pds[i], out);
            free(p);
        }
        free(pds);
    }
    if (destroy) destroy(vk.inst, NULL);
    dlclose(lib);
    return matches;
}

typedef struct { uint64_t total, free_bytes; } MemResult;

static void query_memory(const Vk *vk, VkPhysicalDevice pd, void *out) {
    MemResult *r = out;
    int budget_ext = has_ext(vk, pd, "VK_EXT_memory_budget");
    MemBudget b;
    memset(&b, 0, sizeof b);
    b.sType = STYPE_MEMORY_BUDGET;
    MemProps2 m;
    memset(&m, 0, sizeof m);
    m.sType = STYPE_MEMORY_PROPERTIES_2;
    m.pNext = budget_ext ? &b : NULL;
    vk->mem2(pd, &m);
    for (uint32_t h = 0; h < m.memoryProperties.memoryHeapCount && h < 16; h++) {
        if (!(m.memoryProperties.memoryHeaps[h].flags & HEAP_DEVICE_LOCAL)) continue;
        r->total += m.memoryProperties.memoryHeaps[h].size;
        if (budget_ext) {
            uint64_t used = b.heapUsage[h], bud = b.heapBudget[h];
            r->free_bytes += bud > used ? bud - used : 0;
        }
    }
    if (!budget_ext) r->free_bytes = r->total;
}

int gw_vk_memory(uint32_t vendor, uint32_t device, uint64_t *total, uint64_t *free_bytes) {
    MemResult r = {0, 0};
    int found = with_device(vendor, device, query_memory, &r) > 0;
    *total = r.total;
    *free_bytes = r.free_bytes;
    return found && r.total > 0;
}

// VkPhysicalDevicePCIBusInfoPropertiesEXT.
typedef struct { uint32_t sType; void *pNext; uint32_t domain, bus, device, function; } PCIBusInfo;

typedef struct { int ok; uint32_t domain, bus, device, function; } PCIResult;

// chained_props fills ext_props, a properties struct of device extension ext (its sType
// set, the rest zero), through vkGetPhysicalDeviceProperties2; 0 when the physical device
// lacks the extension.
static int chained_props(const Vk *vk, VkPhysicalDevice pd, const char *ext, void *ext_props) {
    if (!has_ext(vk, pd, ext)) return 0;
    // VkPhysicalDeviceProperties2: sType, pNext, then VkPhysicalDeviceProperties (under 1 KiB).
    struct { uint32_t sType; void *pNext; uint64_t properties[512]; } p2;
    memset(&p2, 0, sizeof p2);
    p2.sType = STYPE_PROPERTIES_2;
    p2.pNext = ext_props;
    vk->props2(pd, &p2);
    return 1;
}

static void query_pci(const Vk *vk, VkPhysicalDevice pd, void *out) {
    PCIResult *r = out;
    PCIBusInfo info;
    memset(&info, 0, sizeof info);
    info.sType = STYPE_PCI_BUS_INFO;
    if (!chained_props(vk, pd, "VK_EXT_pci_bus_info", &info)) return;
    r->ok = 1;
    r->domain = info.domain;
    r->bus = info.bus;
    r->device = info.device;
    r->function = info.function;
}

int gw_vk_pci_bus(uint32_t vendor, uint32_t device, uint32_t out[4]) {
    PCIResult r;
    memset(&r, 0, sizeof r);
    if (with_device(vendor, device, query_pci, &r) != 1 || !r.ok) return 0;
    out[0] = r.domain;
    out[1] = r.bus;
    out[2] = r.device;
    out[3] = r.function;
    return 1;
}

// VkPhysicalDeviceShaderSMBuiltinsPropertiesNV.
typedef struct { uint32_t sType; void *pNext; uint32_t smCount, warpsPerSM; } SMBuiltins;

static void query_units(const Vk *vk, VkPhysicalDevice pd, void *out) {
    SMBuiltins sm;
    memset(&sm, 0, sizeof sm);
    sm.sType = STYPE_SM_BUILTINS_PROPERTIES;
    if (chained_props(vk, pd, "VK_NV_shader_sm_builtins", &sm)) *(uint32_t *)out = sm.smCount;
}

int gw_vk_compute_units(uint32_t vendor, uint32_t device, uint32_t *units) {
    uint32_t n = 0;
    if (with_device(vendor, device, query_units, &n) < 1 || n == 0) return 0;
    *units = n;
    return 1;
}
