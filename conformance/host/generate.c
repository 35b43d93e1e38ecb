// generate: runs a GGUF model through the real llama.cpp library on one ggml device and
// prints the generated text, the logits of the last prompt token (--logits), or the logits
// of every step of a teacher-forced run (--teacher).
//
//   generate -m model.gguf [-p prompt] [-n tokens] [-d WGPU0|CPU] [-L ggml-lib-dir] [-t threads]
//            [--load-first FILE] [--logits] [--fa on|off|auto] [--type-k TYPE] [--type-v TYPE]
//            [--kv-type TYPE] [--teacher N [--seqs S] [--shift W]]
//
// --teacher N feeds a fixed sequence of N tokens: the tokenized prompt, extended by a
// deterministic pseudo-random walk over the vocabulary. The prompt is decoded in one batch
// with the logits of every position, then the rest one token at a time; every position's
// logits are printed as one line "SEQ STEP TOKEN LOGIT...". --seqs S decodes S such
// sequences (ids 0..S-1, each its own extension) together in every batch. --shift W keeps
// at most W positions per sequence: when a sequence is full, half of its positions after
// the first four are removed and the rest moved back (llama_memory_seq_rm and
// llama_memory_seq_add: the KV cache's keys are rotated in place by ROPE at the next
// decode, llama's context shift).
//
// --fa sets llama's flash attention (default auto); --type-k and --type-v the types of the
// K and V caches by ggml's names (default f16; a quantized V cache needs flash attention),
// --kv-type both.
//
// --load-first FILE loads FILE onto the device and frees it before the model of -m, as a
// host that loads several models in turn; when FILE cannot be loaded, that is reported
// and the run goes on.
//
// -t sets the CPU threads (default: llama's four, or fewer on a machine of fewer cores).
//
// ggml's dynamic backends (the CPU variants) are loaded from -L (default: next to the
// executable); the WGPU backend is found through GGML_BACKEND_PATH.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "llama.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* type_of sets *t to the ggml type named name (e.g. "q8_0"); nonzero when none is. */
static int type_of(const char *name, enum ggml_type *t) {
    for (int i = 0; i < GGML_TYPE_COUNT; i++) {
        const char *n = ggml_type_name((enum ggml_type)i);
        if (n && !strcmp(n, name)) { *t = (enum ggml_type)i; return 0; }
    }
    fprintf(stderr, "generate: unknown cache type %s\n", name);
    return 1;
}

/* teacher_token returns token i of sequence seq: the prompt's, then a pseudo-random walk
 * over the vocabulary that skips the control tokens of the first five ids. */
static llama_token teacher_token(const llama_token *prompt, int n_prompt, int n_vocab, int seq, int i) {
    if (i < n_prompt) return prompt[i];
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(seq + 1) + 0xbf58476d1ce4e5b9ull * (uint64_t)(i + 1);
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (llama_token)(5 + x % (uint64_t)(n_vocab - 5));
}

/* print_step prints the logits of batch entry idx as one line "SEQ STEP TOKEN LOGIT...". */
static void print_step(struct llama_context *ctx, int idx, int n_vocab, int seq, int step, llama_token tok) {
    const float *logits = llama_get_logits_ith(ctx, idx);
    printf("%d %d %d", seq, step, tok);
    for (int i = 0; i < n_vocab; i++) printf(" %.9g", logits[i]);
    printf("\n");
}

/* teacher runs --teacher: n_steps tokens of each of n_seqs sequences, positions kept under
 * window (0: no limit) by context shifts. Returns the process's exit status. */
static int teacher(struct llama_context *ctx, const struct llama_vocab *vocab, const char *prompt,
                   int n_steps, int n_seqs, int window) {
    const int n_vocab = llama_vocab_n_tokens(vocab);
    const int n_keep = 4;
    int n_prompt = -llama_tokenize(vocab, prompt, (int)strlen(prompt), NULL, 0, 1, 1);
    llama_token *ptoks = malloc(sizeof(llama_token) * (n_prompt > 0 ? n_prompt : 1));
    if (n_prompt <= 0 || llama_tokenize(vocab, prompt, (int)strlen(prompt), ptoks, n_prompt, 1, 1) < 0) {
        fprintf(stderr, "generate: tokenize failed\n");
        return 1;
    }
    if (n_prompt > n_steps) n_prompt = n_steps;
    if (window && window <= n_prompt + n_keep) {
        fprintf(stderr, "generate: --shift %d must exceed the prompt's %d tokens plus %d\n", window, n_prompt, n_keep);
        return 2;
    }
    struct llama_batch batch = llama_batch_init(n_prompt * n_seqs, 0, 1);
    llama_memory_t mem = llama_get_memory(ctx);
    int n_past = 0, step = 0;
    while (step < n_steps) {
        int n = step == 0 ? n_prompt : 1; /* tokens of each sequence in this batch */
        if (window && n_past + n > window) {
            int n_discard = (n_past - n_keep) / 2;
            for (int s = 0; s < n_seqs; s++) {
                if (!llama_memory_seq_rm(mem, s, n_keep, n_keep + n_discard)) {
                    fprintf(stderr, "generate: llama_memory_seq_rm failed\n");
                    return 1;
                }
                llama_memory_seq_add(mem, s, n_keep + n_discard, n_past, -n_discard);
            }
            n_past -= n_discard;
            fprintf(stderr, "generate: context shift at step %d: %d positions discarded\n", step, n_discard);
        }
        batch.n_tokens = 0;
        for (int s = 0; s < n_seqs; s++) {
            for (int j = 0; j < n; j++) {
                int k = batch.n_tokens++;
                batch.token[k] = teacher_token(ptoks, n_prompt, n_vocab, s, step + j);
                batch.pos[k] = n_past + j;
                batch.n_seq_id[k] = 1;
                batch.seq_id[k][0] = s;
                batch.logits[k] = 1;
            }
        }
        if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "generate: decode failed at step %d\n", step); return 1; }
        for (int k = 0; k < batch.n_tokens; k++) {
            print_step(ctx, k, n_vocab, batch.seq_id[k][0], step + k % n, batch.token[k]);
        }
        step += n;
        n_past += n;
    }
    fprintf(stderr, "generate: teacher-forced %d steps of %d sequences, %d prompt tokens\n", n_steps, n_seqs, n_prompt);
    llama_batch_free(batch);
    free(ptoks);
    return 0;
}

int main(int argc, char **argv) {
    const char *lib_dir = NULL;
    const char *first_path = NULL, *model_path = NULL, *prompt = "Once upon a time", *device = "WGPU0";
    const char *type_k = "f16", *type_v = "f16"; /* cache types by ggml's names */
    int n_gen = 32, logits_only = 0, n_teacher = 0, n_seqs = 1, window = 0, n_threads = 0;
    enum llama_flash_attn_type fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model_path = argv[++i];
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) prompt = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n_gen = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "-L") && i + 1 < argc) lib_dir = argv[++i];
        else if (!strcmp(argv[i], "--logits")) logits_only = 1;
        else if (!strcmp(argv[i], "--load-first") && i + 1 < argc) first_path = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) n_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--teacher") && i + 1 < argc) n_teacher = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seqs") && i + 1 < argc) n_seqs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shift") && i + 1 < argc) window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--type-k") && i + 1 < argc) type_k = argv[++i];
        else if (!strcmp(argv[i], "--type-v") && i + 1 < argc) type_v = argv[++i];
        else if (!strcmp(argv[i], "--kv-type") && i + 1 < argc) type_k = type_v = argv[++i];
        else if (!strcmp(argv[i], "--fa") && i + 1 < argc) {
            const char *v = argv[++i];
            fa = !strcmp(v, "on") ? LLAMA_FLASH_ATTN_TYPE_ENABLED : !strcmp(v, "off") ? LLAMA_FLASH_ATTN_TYPE_DISABLED : LLAMA_FLASH_ATTN_TYPE_AUTO;
        }
        else { fprintf(stderr, "usage: %s -m model.gguf [-p prompt] [-n tokens] [-d WGPU0|CPU] [-L ggml-lib-dir] [-t threads] [--load-first FILE] [--logits] [--fa on|off|auto] [--type-k TYPE] [--type-v TYPE] [--kv-type TYPE] [--teacher N [--seqs S] [--shift W]]\n", argv[0]); return 2; }
    }
    if (!model_path) { fprintf(stderr, "generate: no model (-m)\n"); return 2; }
    if (n_teacher < 0 || n_seqs < 1 || n_seqs > 64 || window < 0) { fprintf(stderr, "generate: bad --teacher, --seqs or --shift\n"); return 2; }

    llama_backend_init();
    if (lib_dir) ggml_backend_load_all_from_path(lib_dir);
    else ggml_backend_load_all();

    ggml_backend_dev_t devs[2] = {NULL, NULL};
    if (strcmp(device, "CPU") != 0) {
        devs[0] = ggml_backend_dev_by_name(device);
        if (!devs[0]) { fprintf(stderr, "generate: device %s not found (is GGML_BACKEND_PATH set?)\n", device); return 1; }
        fprintf(stderr, "generate: device %s: %s\n", device, ggml_backend_dev_description(devs[0]));
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.devices = devs;
    mp.n_gpu_layers = devs[0] ? 999 : 0;
    if (first_path) {
        struct llama_model *first = llama_model_load_from_file(first_path, mp);
        if (first) {
            fprintf(stderr, "generate: loaded %s first\n", first_path);
            llama_model_free(first);
        } else {
            fprintf(stderr, "generate: cannot load %s first; going on\n", first_path);
        }
    }
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) { fprintf(stderr, "generate: cannot load %s\n", model_path); return 1; }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    cp.no_perf = 1;
    cp.n_seq_max = n_seqs;
    /* llama's default of four threads spins against itself on a machine of fewer cores */
    long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (n_threads > 0) n_cpu = n_threads;
    if (n_cpu > 0 && (n_threads > 0 || n_cpu < cp.n_threads)) cp.n_threads = cp.n_threads_batch = (int32_t)n_cpu;
    cp.flash_attn_type = fa;
    if (type_of(type_k, &cp.type_k) || type_of(type_v, &cp.type_v)) return 2;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "generate: cannot create context\n"); return 1; }

    if (n_teacher) {
        int rc = teacher(ctx, vocab, prompt, n_teacher, n_seqs, window);
        llama_free(ctx);
        llama_model_free(model);
        return rc;
    }

    int n_prompt = -llama_tokenize(vocab, prompt, (int)strlen(prompt), NULL, 0, 1, 1);
    llama_token *tokens = malloc(sizeof(llama_token) * (n_prompt + n_gen + 1));
    if (llama_tokenize(vocab, prompt, (int)strlen(prompt), tokens, n_prompt, 1, 1) < 0) {
        fprintf(stderr, "generate: tokenize failed\n");
        return 1;
    }
    struct llama_batch batch = llama_batch_get_one(tokens, n_prompt);
    double t0 = now();
    if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "generate: decode failed\n"); return 1; }
    double t_prompt = now() - t0;

    if (logits_only) {
        const float *logits = llama_get_logits_ith(ctx, -1);
        int n_vocab = llama_vocab_n_tokens(vocab);
        for (int i = 0; i < n_vocab; i++) printf("%.9g\n", logits[i]);
        llama_free(ctx);
        llama_model_free(model);
        free(tokens);
        return 0;
    }

    struct llama_sampler *smpl = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());
    printf("%s", prompt);
    int generated = 0;
    t0 = now();
    for (; generated < n_gen; generated++) {
        llama_token tok = llama_sampler_sample(smpl, ctx, -1);
        if (llama_vocab_is_eog(vocab, tok)) break;
        char piece[256];
        int n = llama_token_to_piece(vocab, tok, piece, sizeof piece, 0, 1);
        if (n > 0) fwrite(piece, 1, n, stdout);
        fflush(stdout);
        batch = llama_batch_get_one(&tok, 1);
        if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "\ngenerate: decode failed\n"); return 1; }
    }
    double t_gen = now() - t0;
    printf("\n");
    fprintf(stderr, "generate: %d prompt tokens in %.3f s, %d tokens generated in %.3f s (%.1f tokens/s) on %s\n",
            n_prompt, t_prompt, generated, t_gen, generated / (t_gen > 0 ? t_gen : 1), device);
    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    free(tokens);
    return 0;
}
