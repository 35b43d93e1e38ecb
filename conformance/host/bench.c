// bench: llama-bench's method on several ggml devices in one run, printed side by side:
// pp (one batch of N prompt tokens) and tg (N tokens decoded one at a time), each the
// mean of several repetitions after a warm-up, on a model loaded with every layer on the
// device. With -s S, tg decodes S sequences side by side (each step one batch of S tokens,
// one per sequence, as several users or speculative drafts do) and reports the tokens of
// all of them per second (test "tgN xS").
//
//   bench -m model.gguf [-d WGPU0 -d Vulkan0 ...] [-L ggml-lib-dir] [--load lib.so ...]
//         [-p 512] [-n 128] [-r 3] [-s 1] [-fa on|off|auto]
//
// -fa sets llama's flash attention (default auto: on where the device supports it); the
// table shows the requested mode.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "llama.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void quiet(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if ((level >= GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_CONT) || !strncmp(text, "ggml-wgpu:", 10)) fputs(text, stderr);
}

// run_pp decodes n_tokens prompt tokens in one batch; run_tg decodes n_tokens one by one.
static int run_pp(struct llama_context *ctx, int n_tokens, int n_vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    struct llama_batch b = llama_batch_init(n_tokens, 0, 1);
    for (int i = 0; i < n_tokens; i++) {
        b.token[i] = (i * 7919 + 13) % n_vocab;
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = i == n_tokens - 1;
    }
    b.n_tokens = n_tokens;
    int rc = llama_decode(ctx, b);
    llama_synchronize(ctx);
    llama_batch_free(b);
    return rc;
}

// run_tg decodes n_tokens steps of n_seq sequences: each step one batch of a token per
// sequence, each token's logits requested.
static int run_tg(struct llama_context *ctx, int n_tokens, int n_seq, int n_vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    struct llama_batch b = llama_batch_init(n_seq, 0, 1);
    llama_token t = 1;
    int rc = 0;
    for (int i = 0; i < n_tokens && rc == 0; i++) {
        for (int s = 0; s < n_seq; s++) {
            b.token[s] = (t + s * 7919) % n_vocab;
            b.pos[s] = i;
            b.n_seq_id[s] = 1;
            b.seq_id[s][0] = s;
            b.logits[s] = 1;
        }
        b.n_tokens = n_seq;
        rc = llama_decode(ctx, b) != 0;
        llama_synchronize(ctx);
        t = (t * 31 + 7) % n_vocab;
    }
    llama_batch_free(b);
    return rc;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *lib_dir = NULL;
    const char *devices[8], *loads[8];
    int n_dev = 0, n_load = 0, n_pp = 512, n_tg = 128, reps = 3, n_seq = 1;
    enum llama_flash_attn_type fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "bench: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "-m")) model_path = v;
        else if (!strcmp(a, "-d") && n_dev < 8) devices[n_dev++] = v;
        else if (!strcmp(a, "-L")) lib_dir = v;
        else if (!strcmp(a, "--load") && n_load < 8) loads[n_load++] = v;
        else if (!strcmp(a, "-p")) n_pp = atoi(v);
        else if (!strcmp(a, "-n")) n_tg = atoi(v);
        else if (!strcmp(a, "-r")) reps = atoi(v);
        else if (!strcmp(a, "-s")) n_seq = atoi(v);
        else if (!strcmp(a, "-fa")) fa = !strcmp(v, "on") ? LLAMA_FLASH_ATTN_TYPE_ENABLED : !strcmp(v, "off") ? LLAMA_FLASH_ATTN_TYPE_DISABLED : LLAMA_FLASH_ATTN_TYPE_AUTO;
        else { fprintf(stderr, "bench: unknown flag %s\n", a); return 2; }
        i++;
    }
    if (!model_path) { fprintf(stderr, "usage: bench -m model.gguf [-d DEV ...] [-L dir] [--load lib.so ...] [-p N] [-n N] [-r N] [-s N] [-fa on|off|auto]\n"); return 2; }
    if (n_seq < 1 || n_seq > 64) { fprintf(stderr, "bench: -s takes 1 to 64 sequences\n"); return 2; }
    if (n_dev == 0) devices[n_dev++] = "WGPU0";
    llama_log_set(quiet, NULL);
    llama_backend_init();
    if (lib_dir) ggml_backend_load_all_from_path(lib_dir);
    else ggml_backend_load_all();
    for (int i = 0; i < n_load; i++) ggml_backend_load(loads[i]);

    printf("| device | description | model | size MiB | fa | test | t/s |\n|---|---|---|---|---|---|---|\n");
    int failed = 0;
    for (int d = 0; d < n_dev; d++) {
        ggml_backend_dev_t devs[2] = {ggml_backend_dev_by_name(devices[d]), NULL};
        if (!devs[0]) { fprintf(stderr, "bench: device %s not found\n", devices[d]); failed = 1; continue; }
        struct llama_model_params mp = llama_model_default_params();
        mp.devices = devs;
        mp.n_gpu_layers = 999;
        struct llama_model *model = llama_model_load_from_file(model_path, mp);
        if (!model) { fprintf(stderr, "bench: cannot load %s on %s\n", model_path, devices[d]); failed = 1; continue; }
        struct llama_context_params cp = llama_context_default_params();
        cp.n_ctx = n_seq * (n_pp + n_tg + 16); // each sequence its share
        cp.n_seq_max = n_seq;
        cp.n_batch = n_pp > 0 ? n_pp : 512;
        cp.n_ubatch = cp.n_batch;
        cp.no_perf = 1;
        cp.flash_attn_type = fa;
        struct llama_context *ctx = llama_init_from_model(model, cp);
        if (!ctx) { fprintf(stderr, "bench: no context on %s\n", devices[d]); failed = 1; llama_model_free(model); continue; }
        int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
        /* the requested mode (llama resolves auto per device when it builds the context) */
        const char *fa_name = fa == LLAMA_FLASH_ATTN_TYPE_ENABLED ? "on" : fa == LLAMA_FLASH_ATTN_TYPE_DISABLED ? "off" : "auto";
        char desc[128];
        llama_model_desc(model, desc, sizeof desc);
        double mib = llama_model_size(model) / 1048576.0;
        const char *ddesc = ggml_backend_dev_description(devs[0]);
        for (int test = 0; test < 2; test++) {
            int n = test == 0 ? n_pp : n_tg;
            if (n <= 0) continue;
            int rc = test == 0 ? run_pp(ctx, n, n_vocab) : run_tg(ctx, n, n_seq, n_vocab); // warm-up
            double total = 0;
            for (int r = 0; r < reps && rc == 0; r++) {
                double t0 = now();
                rc = test == 0 ? run_pp(ctx, n, n_vocab) : run_tg(ctx, n, n_seq, n_vocab);
                total += now() - t0;
            }
            if (rc != 0) { fprintf(stderr, "bench: decode failed on %s\n", devices[d]); failed = 1; break; }
            int seqs = test == 0 ? 1 : n_seq;
            char name[32];
            snprintf(name, sizeof name, seqs > 1 ? "%s%d x%d" : "%s%d", test == 0 ? "pp" : "tg", n, seqs);
            printf("| %s | %s | %s | %.0f | %s | %s | %.2f |\n", devices[d], ddesc, desc, mib, fa_name, name, (double)n * seqs * reps / total);
            fflush(stdout);
        }
        llama_free(ctx);
        llama_model_free(model);
    }
    return failed;
}
