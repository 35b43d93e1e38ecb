// The C side of the cgo boundary: storage for the ggml structs this library owns and the
// vtables that point at the Go callbacks.
#ifndef GGML_WGPU_SHIM_H
#define GGML_WGPU_SHIM_H
#include "../include/ggml-backend-abi.h"

struct ggml_backend_reg *gw_reg_build(int n_devices);
struct ggml_backend_device *gw_device_at(int i);
struct ggml_backend_buffer_type *gw_buft_at(int i);
int gw_buft_index(struct ggml_backend_buffer_type *buft);
int gw_device_index(struct ggml_backend_device *dev);
struct ggml_backend_buffer *gw_buffer_new(struct ggml_backend_buffer_type *buft, uint64_t id, size_t size);
struct ggml_backend *gw_backend_new(struct ggml_backend_device *dev, uint64_t handle);
void gw_backend_delete(struct ggml_backend *b);
int gw_is_ours(struct ggml_backend *b);
// gw_address turns a fake buffer base into the pointer ggml expects (never dereferenced).
void *gw_address(uint64_t a);
// gw_graph_nodes writes the first n nodes of g to out (one call instead of n).
void gw_graph_nodes(struct ggml_cgraph *g, struct ggml_tensor **out, int n);
void gw_log(int level, const char *msg);
// gw_reg_name is the registry's name, "WGPU" (static storage).
char *gw_reg_name(void);
// shim_strndup copies n bytes of p into a new NUL-terminated C string; NULL when out of
// memory (cgo's C.CString would abort the host instead).
char *shim_strndup(const char *p, size_t n);
// gw_graph_set_node stores t as node i of g (graph_optimize reorders the nodes).
void gw_graph_set_node(struct ggml_cgraph *g, int i, struct ggml_tensor *t);
#endif
