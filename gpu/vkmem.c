// Device memory through the Vulkan loader: WebGPU has no memory query, so the device-local
// heap sizes (and, with VK_EXT_memory_budget, the budget) of the Vulkan physical device
// behind an adapter are read directly. The loader is opened at run time; without it the
// query reports nothing and callers fall back.
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
    HEAP_DEVICE_LOCAL = 1,
    API_1_1 = (1u << 22) | (1u << 12),
};

int gw_vk_memory(uint32_t vendor, uint32_t device, uint64_t *total, uint64_t *free_bytes) {
    *total = 0;
    *free_bytes = 0;
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    PFN_void (*gipa)(VkInstance, const char *) = (PFN_void (*)(VkInstance, const char *))dlsym(lib, "vkGetInstanceProcAddr");
    if (!gipa) { dlclose(lib); return 0; }
    VkResult (*create)(const InstanceInfo *, const void *, VkInstance *) = (void *)gipa(NULL, "vkCreateInstance");
    AppInfo app = {STYPE_APPLICATION_INFO, NULL, "ggml-wgpu", 1, "ggml-wgpu", 1, API_1_1};
    InstanceInfo ci = {STYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
    VkInstance inst = NULL;
    if (!create || create(&ci, NULL, &inst) != 0) { dlclose(lib); return 0; }
    void (*destroy)(VkInstance, const void *) = (void *)gipa(inst, "vkDestroyInstance");
    VkResult (*enumerate)(VkInstance, uint32_t *, VkPhysicalDevice *) = (void *)gipa(inst, "vkEnumeratePhysicalDevices");
    void (*props)(VkPhysicalDevice, void *) = (void *)gipa(inst, "vkGetPhysicalDeviceProperties");
    void (*mem2)(VkPhysicalDevice, MemProps2 *) = (void *)gipa(inst, "vkGetPhysicalDeviceMemoryProperties2");
    VkResult (*exts)(VkPhysicalDevice, const char *, uint32_t *, ExtProps *) = (void *)gipa(inst, "vkEnumerateDeviceExtensionProperties");
    int found = 0;
    uint32_t n = 0;
    if (enumerate && props && mem2 && exts && enumerate(inst, &n, NULL) == 0 && n > 0) {
        VkPhysicalDevice *pds = calloc(n, sizeof *pds);
        if (pds && enumerate(inst, &n, pds) < 0) n = 0;
        for (uint32_t i = 0; pds && i < n && !found; i++) {
            // VkPhysicalDeviceProperties starts with apiVersion, driverVersion, vendorID, deviceID.
            uint32_t *p = calloc(1, 4096);
            if (!p) break;
            props(pds[i], p);
            if (p[2] == vendor && p[3] == device) {
                found = 1;
                uint32_t ne = 0;
                int budget_ext = 0;
                if (exts(pds[i], NULL, &ne, NULL) == 0 && ne > 0) {
                    ExtProps *ep = calloc(ne, sizeof *ep);
                    if (ep && exts(pds[i], NULL, &ne, ep) < 0) ne = 0;
                    for (uint32_t k = 0; ep && k < ne; k++)
                        if (!strcmp(ep[k].extensionName, "VK_EXT_memory_budget")) budget_ext = 1;
                    free(ep);
                }
                MemBudget b;
                memset(&b, 0, sizeof b);
                b.sType = STYPE_MEMORY_BUDGET;
                MemProps2 m;
                memset(&m, 0, sizeof m);
                m.sType = STYPE_MEMORY_PROPERTIES_2;
                m.pNext = budget_ext ? &b : NULL;
                mem2(pds[i], &m);
                for (uint32_t h = 0; h < m.memoryProperties.memoryHeapCount && h < 16; h++) {
                    if (!(m.memoryProperties.memoryHeaps[h].flags & HEAP_DEVICE_LOCAL)) continue;
                    *total += m.memoryProperties.memoryHeaps[h].size;
                    if (budget_ext) {
                        uint64_t used = b.heapUsage[h], bud = b.heapBudget[h];
                        *free_bytes += bud > used ? bud - used : 0;
                    }
                }
                if (!budget_ext) *free_bytes = *total;
            }
            free(p);
        }
        free(pds);
    }
    if (destroy) destroy(inst, NULL);
    dlclose(lib);
    return found && *total > 0;
}
