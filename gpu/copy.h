// A pool of threads of our own that copy out of mapped memory in parallel.
#ifndef GGML_WGPU_COPY_H
#define GGML_WGPU_COPY_H
#include <stddef.h>
#include <stdint.h>

// gw_copy copies n bytes from src to dst (not overlapping) in up to parts pieces of at
// least min_piece bytes, the calling thread taking pieces too, and returns when all are
// copied. Without threads (none could be started) it copies alone. Calls are serialized.
void gw_copy(void *dst, const void *src, size_t n, int parts, size_t min_piece);
// gw_copy_prewake wakes the pool's workers to watch for a copy for spin_ns, or until a
// copy has run, before they sleep again: a copy expected soon then finds them running
// (waking them takes tens of µs).
void gw_copy_prewake(uint64_t spin_ns);
// gw_copy_prewakes returns how many prewakes the pool has had.
uint64_t gw_copy_prewakes(void);
// gw_copy_threads returns how many workers the pool has (started by the first gw_copy
// that needs them).
int gw_copy_threads(void);
#endif
