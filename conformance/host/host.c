// A plain C ggml host that uses libggml-wgpu the way any ggml program would: it loads the
// backends with ggml_backend_load_all() (libggml-wgpu.so through GGML_BACKEND_PATH), finds
// the device WGPU0, computes a small graph, y = rms_norm(x) * w + mul_mat(W, x), on it and on
// the CPU backend, and compares the two with NMSE. Exit status 0 means they agree.
//
// Build: gcc host.c -I<ggml include> -L<dir with libggml.so> -lggml -lggml-base -lm
// Run:   GGML_BACKEND_PATH=/path/to/libggml-wgpu.so ./host   (cwd: the ggml library dir,
//        where ggml_backend_load_all finds the libggml-cpu-*.so variants)

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

#define K 32 // row length of x and of W
#define M 32 // rows of W: the length of each mul_mat output row
#define N 6  // rows of x

static float xs[K * N];
static float ws[K];
static float Ws[K * M];

// fill fills v with deterministic pseudo-random numbers in [-1, 1).
static void fill(float * v, int n, uint32_t seed) {
    uint32_t s = seed;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float) ((s >> 8) & 0xFFFFFF) / (float) 0x800000 - 1.0f;
    }
}

// compute builds and runs the graph on backend be and copies the output (M*N floats) to out.
static int compute(ggml_backend_t be, float * out) {
    struct ggml_init_params params = {
        /*.mem_size   =*/ ggml_tensor_overhead() * 16 + ggml_graph_overhead(),
        /*.mem_buffer =*/ NULL,
        /*.no_alloc   =*/ true,
    };
    struct ggml_context * ctx = ggml_init(params);
    if (!ctx) {
        fprintf(stderr, "host: ggml_init failed\n");
        return 1;
    }
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    ggml_set_name(x, "x");
    ggml_set_name(w, "w");
    ggml_set_name(W, "W");

    struct ggml_tensor * y = ggml_add(ctx, ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-6f), w), ggml_mul_mat(ctx, W, x));
    ggml_set_name(y, "y");

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);

    ggml_backend_dev_t dev = ggml_backend_get_device(be);
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(gf, i);
        if (!ggml_backend_dev_supports_op(dev, node)) {
            fprintf(stderr, "host: %s does not support %s\n", ggml_backend_name(be), ggml_op_desc(node));
            ggml_free(ctx);
            return 1;
        }
    }

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (!buf) {
        fprintf(stderr, "host: ggml_backend_alloc_ctx_tensors failed on %s\n", ggml_backend_name(be));
        ggml_free(ctx);
        return 1;
    }
    ggml_backend_tensor_set(x, xs, 0, sizeof(xs));
    ggml_backend_tensor_set(w, ws, 0, sizeof(ws));
    ggml_backend_tensor_set(W, Ws, 0, sizeof(Ws));

    enum ggml_status st = ggml_backend_graph_compute(be, gf);
    if (st != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "host: graph_compute on %s returned %d\n", ggml_backend_name(be), (int) st);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
        return 1;
    }
    ggml_backend_synchronize(be);
    ggml_backend_tensor_get(y, out, 0, ggml_nbytes(y));

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return 0;
}

int main(void) {
    ggml_backend_load_all();

    ggml_backend_dev_t dev = ggml_backend_dev_by_name("WGPU0");
    if (!dev) {
        fprintf(stderr, "host: no device WGPU0 (GGML_BACKEND_PATH=%s); devices:\n",
                getenv("GGML_BACKEND_PATH") ? getenv("GGML_BACKEND_PATH") : "(unset)");
        for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
            fprintf(stderr, "  %s\n", ggml_backend_dev_name(ggml_backend_dev_get(i)));
        }
        return 2;
    }
    size_t mem_free = 0, mem_total = 0;
    ggml_backend_dev_memory(dev, &mem_free, &mem_total);
    printf("host: device %s: %s; memory %zu MiB free of %zu MiB\n", ggml_backend_dev_name(dev),
           ggml_backend_dev_description(dev), mem_free >> 20, mem_total >> 20);
    if (mem_total == 0) {
        fprintf(stderr, "host: WGPU0 reports no memory\n");
        return 3;
    }

    ggml_backend_t gpu = ggml_backend_dev_init(dev, NULL);
    if (!gpu) {
        fprintf(stderr, "host: ggml_backend_dev_init(WGPU0) failed\n");
        return 4;
    }
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    if (!cpu) {
        fprintf(stderr, "host: no CPU backend (run from the ggml library directory)\n");
        ggml_backend_free(gpu);
        return 5;
    }
    printf("host: backends %s and %s\n", ggml_backend_name(gpu), ggml_backend_name(cpu));

    fill(xs, K * N, 1);
    fill(ws, K, 2);
    fill(Ws, K * M, 3);

    static float ref[M * N], got[M * N];
    int rc = compute(cpu, ref);
    if (rc == 0) {
        rc = compute(gpu, got);
    }
    ggml_backend_free(gpu);
    ggml_backend_free(cpu);
    if (rc != 0) {
        return 6;
    }

    double num = 0, den = 0;
    for (int i = 0; i < M * N; i++) {
        if (isnan(ref[i]) || isnan(got[i])) {
            fprintf(stderr, "host: NaN at %d (cpu %g, WGPU0 %g)\n", i, ref[i], got[i]);
            return 7;
        }
        double d = (double) ref[i] - (double) got[i];
        num += d * d;
        den += (double) ref[i] * (double) ref[i];
    }
    double nmse = den > 0 ? num / den : (num > 0 ? INFINITY : 0);
    printf("host: y = rms_norm(x)*w + mul_mat(W, x), %d values: NMSE %.3e (y[0] cpu %g, WGPU0 %g)\n",
           M * N, nmse, ref[0], got[0]);
    if (!(nmse < 1e-6)) {
        fprintf(stderr, "host: FAIL: NMSE %.3e >= 1e-6\n", nmse);
        return 8;
    }
    printf("host: OK\n");
    return 0;
}
