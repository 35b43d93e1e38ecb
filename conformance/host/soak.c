// soak: decodes a GGUF model one token at a time for many steps through the real
// llama.cpp library on one ggml device, and reports every few steps the process's
// resident memory and the device's free memory (ggml_backend_dev_memory), so that a test
// can check that neither grows once the first steps have warmed everything up.
//
//   soak -m model.gguf [-n steps] [-k report-every] [-c n_ctx] [-d WGPU0|CPU] [-L ggml-lib-dir]
//
// When the context is full the KV cache is cleared and decoding starts again at position
// 0, as a server reusing one context would. Output, one line per report on stdout:
//   step <n> rss_kib <resident KiB> dev_free <bytes> dev_total <bytes>
// then "done <steps> nonfinite <count of non-finite logits seen>". ggml-wgpu's own log
// lines and warnings go to stderr; other llama.cpp logging is dropped.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if ((level >= GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_CONT) || !strncmp(text, "ggml-wgpu:", 10)) fputs(text, stderr);
}

// rss_kib returns the resident set size of this process in KiB (from /proc/self/statm).
static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *lib_dir = NULL, *device = "WGPU0";
    int steps = 300, every = 25, n_ctx = 256;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "soak: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "-m")) model_path = v;
        else if (!strcmp(a, "-n")) steps = atoi(v);
        else if (!strcmp(a, "-k")) every = atoi(v);
        else if (!strcmp(a, "-c")) n_ctx = atoi(v);
        else if (!strcmp(a, "-d")) device = v;
        else if (!strcmp(a, "-L")) lib_dir = v;
        else { fprintf(stderr, "soak: unknown flag %s\n", a); return 2; }
        i++;
    }
    if (!model_path || steps <= 0 || every <= 0 || n_ctx < 8) {
        fprintf(stderr, "usage: soak -m model.gguf [-n steps] [-k every] [-c n_ctx] [-d WGPU0|CPU] [-L ggml-lib-dir]\n");
        return 2;
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    if (lib_dir) ggml_backend_load_all_from_path(lib_dir);
    else ggml_backend_load_all();

    ggml_backend_dev_t devs[2] = {NULL, NULL}, mem_dev = NULL;
    if (strcmp(device, "CPU") != 0) {
        devs[0] = ggml_backend_dev_by_name(device);
        if (!devs[0]) { fprintf(stderr, "soak: device %s not found (is GGML_BACKEND_PATH set?)\n", device); return 1; }
        mem_dev = devs[0];
    } else {
        mem_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.devices = devs;
    mp.n_gpu_layers = devs[0] ? 999 : 0;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) { fprintf(stderr, "soak: cannot load %s\n", model_path); return 1; }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    cp.no_perf = 1;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "soak: cannot create context\n"); return 1; }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    int n_vocab = llama_vocab_n_tokens(vocab);
    int ctx_len = (int)llama_n_ctx(ctx);

    long nonfinite = 0;
    llama_token tok = 1;
    int pos = 0;
    for (int step = 1; step <= steps; step++) {
        if (pos >= ctx_len) {
            llama_memory_clear(llama_get_memory(ctx), true);
            pos = 0;
        }
        struct llama_batch b = llama_batch_get_one(&tok, 1);
        if (llama_decode(ctx, b) != 0) { fprintf(stderr, "soak: decode failed at step %d\n", step); return 1; }
        pos++;
        const float *logits = llama_get_logits_ith(ctx, -1);
        int best = 0;
        for (int i = 0; i < n_vocab; i++) {
            if (!isfinite(logits[i])) nonfinite++;
            else if (logits[i] > logits[best]) best = i;
        }
        // Greedy, but never the same token twice in a row, so the inputs keep changing.
        tok = best == tok ? (tok * 31 + 7) % n_vocab : best;
        if (step % every == 0 || step == steps) {
            size_t free_b = 0, total_b = 0;
            ggml_backend_dev_memory(mem_dev, &free_b, &total_b);
            printf("step %d rss_kib %ld dev_free %zu dev_total %zu\n", step, rss_kib(), free_b, total_b);
            fflush(stdout);
        }
    }
    printf("done %d nonfinite %ld\n", steps, nonfinite);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
