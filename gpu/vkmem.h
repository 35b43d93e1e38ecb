#ifndef GGML_WGPU_VKMEM_H
#define GGML_WGPU_VKMEM_H
#include <stdint.h>
// gw_vk_memory reports the device-local memory of the Vulkan physical device with the
// given vendor and device IDs: total heap size and free bytes (budget minus usage when
// VK_EXT_memory_budget exists, else the total). Returns 0 when it cannot tell.
int gw_vk_memory(uint32_t vendor, uint32_t device, uint64_t *total, uint64_t *free_bytes);
// gw_vk_pci_bus writes the PCI domain, bus, device and function of the Vulkan physical
// device with the given vendor and device IDs (VK_EXT_pci_bus_info). Returns 0 when it
// cannot tell, or when several physical devices have those IDs (which one is meant is
// then unknown).
int gw_vk_pci_bus(uint32_t vendor, uint32_t device, uint32_t out[4]);
// gw_vk_compute_units writes the multiprocessor count of the Vulkan physical device with
// the given vendor and device IDs (VK_NV_shader_sm_builtins: NVIDIA's SMs). Returns 0 when
// it cannot tell.
int gw_vk_compute_units(uint32_t vendor, uint32_t device, uint32_t *units);
#endif
