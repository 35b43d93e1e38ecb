/*
 * The fields and structs of include/ggml-backend-abi.h whose offsets and sizes the probe
 * reports, as an X-macro: ABI_LAYOUT(X_SZ, X_OFF) expands X_SZ(struct tag) for every struct
 * size and X_OFF(struct tag, field) for every field offset. abi.c builds Layout() from it;
 * the tests compile it again against the header on disk to catch a stale build cache.
 */
#ifndef GGML_WGPU_ABI_LAYOUT_H
#define GGML_WGPU_ABI_LAYOUT_H

#define ABI_LAYOUT(X_SZ, X_OFF) \
    X_SZ(ggml_tensor) \
    X_OFF(ggml_tensor, type) \
    X_OFF(ggml_tensor, buffer) \
    X_OFF(ggml_tensor, ne) \
    X_OFF(ggml_tensor, nb) \
    X_OFF(ggml_tensor, op) \
    X_OFF(ggml_tensor, op_params) \
    X_OFF(ggml_tensor, flags) \
    X_OFF(ggml_tensor, src) \
    X_OFF(ggml_tensor, view_src) \
    X_OFF(ggml_tensor, view_offs) \
    X_OFF(ggml_tensor, data) \
    X_OFF(ggml_tensor, name) \
    X_OFF(ggml_tensor, extra) \
    X_OFF(ggml_tensor, padding) \
    X_SZ(ggml_backend_buffer_type_i) \
    X_OFF(ggml_backend_buffer_type_i, get_name) \
    X_OFF(ggml_backend_buffer_type_i, alloc_buffer) \
    X_OFF(ggml_backend_buffer_type_i, get_alignment) \
    X_OFF(ggml_backend_buffer_type_i, get_max_size) \
    X_OFF(ggml_backend_buffer_type_i, get_alloc_size) \
    X_OFF(ggml_backend_buffer_type_i, is_host) \
    X_SZ(ggml_backend_buffer_type) \
    X_OFF(ggml_backend_buffer_type, iface) \
    X_OFF(ggml_backend_buffer_type, device) \
    X_OFF(ggml_backend_buffer_type, context) \
    X_SZ(ggml_backend_buffer_i) \
    X_OFF(ggml_backend_buffer_i, free_buffer) \
    X_OFF(ggml_backend_buffer_i, get_base) \
    X_OFF(ggml_backend_buffer_i, init_tensor) \
    X_OFF(ggml_backend_buffer_i, memset_tensor) \
    X_OFF(ggml_backend_buffer_i, set_tensor) \
    X_OFF(ggml_backend_buffer_i, get_tensor) \
    X_OFF(ggml_backend_buffer_i, set_tensor_2d) \
    X_OFF(ggml_backend_buffer_i, get_tensor_2d) \
    X_OFF(ggml_backend_buffer_i, cpy_tensor) \
    X_OFF(ggml_backend_buffer_i, clear) \
    X_OFF(ggml_backend_buffer_i, reset) \
    X_SZ(ggml_backend_buffer) \
    X_OFF(ggml_backend_buffer, iface) \
    X_OFF(ggml_backend_buffer, buft) \
    X_OFF(ggml_backend_buffer, context) \
    X_OFF(ggml_backend_buffer, size) \
    X_OFF(ggml_backend_buffer, usage) \
    X_SZ(ggml_backend_i) \
    X_OFF(ggml_backend_i, get_name) \
    X_OFF(ggml_backend_i, free) \
    X_OFF(ggml_backend_i, set_tensor_async) \
    X_OFF(ggml_backend_i, get_tensor_async) \
    X_OFF(ggml_backend_i, set_tensor_2d_async) \
    X_OFF(ggml_backend_i, get_tensor_2d_async) \
    X_OFF(ggml_backend_i, cpy_tensor_async) \
    X_OFF(ggml_backend_i, synchronize) \
    X_OFF(ggml_backend_i, graph_plan_create) \
    X_OFF(ggml_backend_i, graph_plan_free) \
    X_OFF(ggml_backend_i, graph_plan_update) \
    X_OFF(ggml_backend_i, graph_plan_compute) \
    X_OFF(ggml_backend_i, graph_compute) \
    X_OFF(ggml_backend_i, event_record) \
    X_OFF(ggml_backend_i, event_wait) \
    X_OFF(ggml_backend_i, graph_optimize) \
    X_SZ(ggml_backend) \
    X_OFF(ggml_backend, guid) \
    X_OFF(ggml_backend, iface) \
    X_OFF(ggml_backend, device) \
    X_OFF(ggml_backend, context) \
    X_SZ(ggml_backend_event) \
    X_OFF(ggml_backend_event, device) \
    X_OFF(ggml_backend_event, context) \
    X_SZ(ggml_backend_device_i) \
    X_OFF(ggml_backend_device_i, get_name) \
    X_OFF(ggml_backend_device_i, get_description) \
    X_OFF(ggml_backend_device_i, get_memory) \
    X_OFF(ggml_backend_device_i, get_type) \
    X_OFF(ggml_backend_device_i, get_props) \
    X_OFF(ggml_backend_device_i, init_backend) \
    X_OFF(ggml_backend_device_i, get_buffer_type) \
    X_OFF(ggml_backend_device_i, get_host_buffer_type) \
    X_OFF(ggml_backend_device_i, buffer_from_host_ptr) \
    X_OFF(ggml_backend_device_i, supports_op) \
    X_OFF(ggml_backend_device_i, supports_buft) \
    X_OFF(ggml_backend_device_i, offload_op) \
    X_OFF(ggml_backend_device_i, event_new) \
    X_OFF(ggml_backend_device_i, event_free) \
    X_OFF(ggml_backend_device_i, event_synchronize) \
    X_SZ(ggml_backend_device) \
    X_OFF(ggml_backend_device, iface) \
    X_OFF(ggml_backend_device, reg) \
    X_OFF(ggml_backend_device, context) \
    X_SZ(ggml_backend_dev_caps) \
    X_OFF(ggml_backend_dev_caps, async) \
    X_OFF(ggml_backend_dev_caps, host_buffer) \
    X_OFF(ggml_backend_dev_caps, buffer_from_host_ptr) \
    X_OFF(ggml_backend_dev_caps, events) \
    X_OFF(ggml_backend_dev_caps, mmap_support) \
    X_SZ(ggml_backend_dev_props) \
    X_OFF(ggml_backend_dev_props, name) \
    X_OFF(ggml_backend_dev_props, description) \
    X_OFF(ggml_backend_dev_props, memory_free) \
    X_OFF(ggml_backend_dev_props, memory_total) \
    X_OFF(ggml_backend_dev_props, type) \
    X_OFF(ggml_backend_dev_props, device_id) \
    X_OFF(ggml_backend_dev_props, caps) \
    X_SZ(ggml_backend_reg_i) \
    X_OFF(ggml_backend_reg_i, get_name) \
    X_OFF(ggml_backend_reg_i, get_device_count) \
    X_OFF(ggml_backend_reg_i, get_device) \
    X_OFF(ggml_backend_reg_i, get_proc_address) \
    X_SZ(ggml_backend_reg) \
    X_OFF(ggml_backend_reg, api_version) \
    X_OFF(ggml_backend_reg, iface) \
    X_OFF(ggml_backend_reg, context)

#endif
