// mkmodel: writes a llama-architecture GGUF with random weights of a chosen shape, for
// benchmarks and tests. The tokenizer (and every other key) is copied from an existing GGUF
// (-t), or without -t the built-in vocabulary of vocab.h is written; the shape keys are
// overridden. q4_k_m stores the output matrix, attn_v and ffn_down in Q6_K
// and the other matrices in Q4_K (llama-quantize's Q4_K_M mixes them similarly). The IQ
// types quantize every matrix alike (llama-quantize keeps some in other types).
// --dequantize 1 writes the same weights, quantized to the chosen type and read back,
// as F32: a reference whose matrix products need no quantized arithmetic.
// --experts N (with --experts-used K) writes a mixture of experts instead of each layer's
// feed-forward matrices, as llama's architecture reads one (Mixtral): an F32 router
// ffn_gate_inp [embd, N] and the stacked experts ffn_gate_exps, ffn_up_exps [embd, ff, N]
// and ffn_down_exps [ff, embd, N].
// --arch qwen35 writes Qwen3.5's hybrid instead (llama's qwen35 architecture): every second
// layer a gated delta net (attn_qkv, attn_gate, the F32 convolution ssm_conv1d, ssm_dt's
// bias, the negative decays ssm_a, ssm_beta, ssm_alpha, ssm_norm, ssm_out; heads value
// heads and kv-heads key heads of embd / heads elements, a convolution of 4), the others
// full attention with a gated query (attn_q twice as wide), q and k norms and IMROPE
// sections; post_attention_norm before each feed-forward. --arch mamba2 writes a Mamba-2
// (llama's mamba2 architecture: no attention and no feed-forward; each layer ssm_in, the
// convolution ssm_conv1d and its bias, ssm_dt's bias, the decays ssm_a, ssm_d, the grouped
// ssm_norm and ssm_out; an inner size of 2 embd in heads of 64, 2 groups of 64 states).
// --arch lfm2 writes LFM2's hybrid: every second layer a short convolution (shortconv.conv
// of 3 taps, in_proj, out_proj; no KV heads), the others attention with q and k norms;
// the output norm is token_embd_norm.
//
//   mkmodel [-t tokenizer.gguf] -o out.gguf [--embd 2048] [--layers 16] [--heads 32]
//           [--kv-heads 8] [--ff 8192] [--ctx 4096]
//           [--type f16|f32|bf16|q4_0|q8_0|q2_k|q3_k|q4_k|q5_k|q6_k|q4_k_m|tq1_0|tq2_0|mxfp4|nvfp4|q1_0|q2_0|
//                  iq4_nl|iq4_xs|iq3_s|iq3_xxs|iq2_s|iq2_xs|iq2_xxs|iq1_s|iq1_m]
//           [--experts 0] [--experts-used 2] [--dequantize 0|1] [--vocab N] [--arch llama|qwen35|mamba2|lfm2]
// --vocab N (without -t) pads the built-in vocabulary with unused tokens to N tokens, e.g.
// 128256 for the output matrix of llama 3's vocabulary.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include "ggml.h"
#include "gguf.h"
#include "vocab.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) * (1.0 / 16777216.0));
}

// Roughly normal values of the given deviation (sum of four uniforms).
static void fill(float *dst, size_t n, float std) {
    for (size_t i = 0; i < n; i++) {
        float s = uniform() + uniform() + uniform() + uniform() - 2.0f;
        dst[i] = s * std * 1.7320508f;
    }
}

// chunk is up to 64 rows of one tensor on their way to the file: drawn as F32 (row),
// through the --dequantize type and back (quant), converted to the tensor's type (conv).
struct chunk {
    enum ggml_type type, qt;
    int64_t n_per_row, nr;
    const float *imatrix;
    float *row;
    void *conv, *quant;
    size_t bytes;
};

// convert turns a chunk's F32 rows into the tensor's type (a thread's work).
static void *convert(void *arg) {
    struct chunk *c = arg;
    int64_t n = c->n_per_row * c->nr;
    if (c->qt != c->type) {
        // --dequantize: through the chosen type and back to F32
        if (c->qt == GGML_TYPE_F16) ggml_fp32_to_fp16_row(c->row, c->quant, n);
        else if (c->qt == GGML_TYPE_BF16) ggml_fp32_to_bf16_row_ref(c->row, c->quant, n);
        else ggml_quantize_chunk(c->qt, c->row, c->quant, 0, c->nr, c->n_per_row, c->imatrix);
        ggml_get_type_traits(c->qt)->to_float(c->quant, c->row, n);
    }
    if (c->type == GGML_TYPE_F32) { c->bytes = sizeof(float) * n; memcpy(c->conv, c->row, c->bytes); }
    else if (c->type == GGML_TYPE_F16) { ggml_fp32_to_fp16_row(c->row, c->conv, n); c->bytes = 2 * n; }
    else if (c->type == GGML_TYPE_BF16) { ggml_fp32_to_bf16_row_ref(c->row, c->conv, n); c->bytes = 2 * n; }
    else c->bytes = ggml_quantize_chunk(c->type, c->row, c->conv, 0, c->nr, c->n_per_row, c->imatrix);
    return NULL;
}

// kind: MATRIX (random, of the chosen type), NORM (F32 ones), ROUTER (random F32), CONV
// (random F32 of a convolution's size), DECAY (F32 in [-1.5, -0.5]).
enum { MATRIX, NORM, ROUTER, CONV, DECAY };
struct spec { const char *name; int64_t ne0, ne1, ne2; int kind; };

int main(int argc, char **argv) {
    const char *tok = NULL, *out = NULL, *type_name = "f16", *arch = "llama";
    int embd = 2048, layers = 16, heads = 32, kv_heads = 8, ff = 8192, ctx_len = 4096, experts = 0, experts_used = 2, dequantize = 0;
    long long min_vocab = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "mkmodel: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "-t")) tok = v;
        else if (!strcmp(a, "-o")) out = v;
        else if (!strcmp(a, "--embd")) embd = atoi(v);
        else if (!strcmp(a, "--layers")) layers = atoi(v);
        else if (!strcmp(a, "--heads")) heads = atoi(v);
        else if (!strcmp(a, "--kv-heads")) kv_heads = atoi(v);
        else if (!strcmp(a, "--ff")) ff = atoi(v);
        else if (!strcmp(a, "--vocab")) min_vocab = atoll(v);
        else if (!strcmp(a, "--ctx")) ctx_len = atoi(v);
        else if (!strcmp(a, "--type")) type_name = v;
        else if (!strcmp(a, "--experts")) experts = atoi(v);
        else if (!strcmp(a, "--experts-used")) experts_used = atoi(v);
        else if (!strcmp(a, "--dequantize")) dequantize = atoi(v);
        else if (!strcmp(a, "--arch")) arch = v;
        else { fprintf(stderr, "mkmodel: unknown flag %s\n", a); return 2; }
        i++;
    }
    int qwen35 = !strcmp(arch, "qwen35"), mamba2 = !strcmp(arch, "mamba2"), lfm2 = !strcmp(arch, "lfm2");
    if (!out || embd % heads || heads % kv_heads || experts < 0 || (experts && (experts_used < 1 || experts_used > experts)) ||
        (!qwen35 && !mamba2 && !lfm2 && strcmp(arch, "llama")) || ((qwen35 || mamba2 || lfm2) && experts)) {
        fprintf(stderr, "usage: mkmodel [-t tokenizer.gguf] -o out.gguf [--embd N --layers N --heads N --kv-heads N --ff N --ctx N --type f16|f32|bf16|q4_0|q8_0|q2_k|q3_k|q4_k|q5_k|q6_k|q4_k_m|tq1_0|tq2_0|mxfp4|nvfp4|q1_0|q2_0|iq4_nl|iq4_xs|iq3_s|iq3_xxs|iq2_s|iq2_xs|iq2_xxs|iq1_s|iq1_m --experts N --experts-used K --dequantize 0|1 --arch llama|qwen35|mamba2|lfm2]\n");
        return 2;
    }
    enum ggml_type wtype, hitype = GGML_TYPE_COUNT; // hitype: the Q4_K_M matrices in Q6_K
    int file_type;
    if (!strcmp(type_name, "f16")) { wtype = GGML_TYPE_F16; file_type = 1; }
    else if (!strcmp(type_name, "f32")) { wtype = GGML_TYPE_F32; file_type = 0; }
    else if (!strcmp(type_name, "q4_0")) { wtype = GGML_TYPE_Q4_0; file_type = 2; }
    else if (!strcmp(type_name, "q8_0")) { wtype = GGML_TYPE_Q8_0; file_type = 7; }
    else if (!strcmp(type_name, "q2_k")) { wtype = GGML_TYPE_Q2_K; file_type = 10; }
    else if (!strcmp(type_name, "q3_k")) { wtype = GGML_TYPE_Q3_K; file_type = 11; }
    else if (!strcmp(type_name, "q4_k")) { wtype = GGML_TYPE_Q4_K; file_type = 14; }
    else if (!strcmp(type_name, "q5_k")) { wtype = GGML_TYPE_Q5_K; file_type = 16; }
    else if (!strcmp(type_name, "q6_k")) { wtype = GGML_TYPE_Q6_K; file_type = 18; }
    else if (!strcmp(type_name, "q4_k_m")) { wtype = GGML_TYPE_Q4_K; hitype = GGML_TYPE_Q6_K; file_type = 15; }
    else if (!strcmp(type_name, "bf16")) { wtype = GGML_TYPE_BF16; file_type = 32; }
    else if (!strcmp(type_name, "tq1_0")) { wtype = GGML_TYPE_TQ1_0; file_type = 36; }
    else if (!strcmp(type_name, "tq2_0")) { wtype = GGML_TYPE_TQ2_0; file_type = 37; }
    else if (!strcmp(type_name, "mxfp4")) { wtype = GGML_TYPE_MXFP4; file_type = 38; }
    else if (!strcmp(type_name, "nvfp4")) { wtype = GGML_TYPE_NVFP4; file_type = 39; }
    else if (!strcmp(type_name, "q1_0")) { wtype = GGML_TYPE_Q1_0; file_type = 40; }
    else if (!strcmp(type_name, "q2_0")) { wtype = GGML_TYPE_Q2_0; file_type = 41; }
    else if (!strcmp(type_name, "iq2_xxs")) { wtype = GGML_TYPE_IQ2_XXS; file_type = 19; }
    else if (!strcmp(type_name, "iq2_xs")) { wtype = GGML_TYPE_IQ2_XS; file_type = 20; }
    else if (!strcmp(type_name, "iq3_xxs")) { wtype = GGML_TYPE_IQ3_XXS; file_type = 23; }
    else if (!strcmp(type_name, "iq1_s")) { wtype = GGML_TYPE_IQ1_S; file_type = 24; }
    else if (!strcmp(type_name, "iq4_nl")) { wtype = GGML_TYPE_IQ4_NL; file_type = 25; }
    else if (!strcmp(type_name, "iq3_s")) { wtype = GGML_TYPE_IQ3_S; file_type = 26; }
    else if (!strcmp(type_name, "iq2_s")) { wtype = GGML_TYPE_IQ2_S; file_type = 28; }
    else if (!strcmp(type_name, "iq4_xs")) { wtype = GGML_TYPE_IQ4_XS; file_type = 30; }
    else if (!strcmp(type_name, "iq1_m")) { wtype = GGML_TYPE_IQ1_M; file_type = 31; }
    else { fprintf(stderr, "mkmodel: unknown type %s\n", type_name); return 2; }

    struct gguf_context *g = gguf_init_empty();
    int64_t vocab;
    if (tok) {
        struct gguf_init_params gp = {true, NULL};
        struct gguf_context *src = gguf_init_from_file(tok, gp);
        if (!src) { fprintf(stderr, "mkmodel: cannot read %s\n", tok); return 1; }
        int64_t tok_key = gguf_find_key(src, "tokenizer.ggml.tokens");
        if (tok_key < 0) { fprintf(stderr, "mkmodel: %s has no tokenizer\n", tok); return 1; }
        vocab = (int64_t)gguf_get_arr_n(src, tok_key);
        gguf_set_kv(g, src);
    } else {
        vocab = builtin_vocab(g, min_vocab);
    }
    gguf_set_val_str(g, "general.name", "ggml-wgpu benchmark model (random weights)");
    gguf_set_val_str(g, "general.architecture", arch);
    char key[96];
    #define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", arch, suffix), key)
    int head = embd / heads;
    gguf_set_val_u32(g, KEY("context_length"), ctx_len);
    gguf_set_val_u32(g, KEY("embedding_length"), embd);
    gguf_set_val_u32(g, KEY("block_count"), layers);
    gguf_set_val_u32(g, KEY("feed_forward_length"), ff);
    gguf_set_val_u32(g, KEY("rope.dimension_count"), head);
    gguf_set_val_u32(g, KEY("attention.head_count"), heads);
    if (lfm2) { // no KV heads in the convolution layers (the even ones)
        int32_t *kvs = calloc(layers, sizeof *kvs);
        for (int l = 0; l < layers; l++) kvs[l] = l % 2 ? kv_heads : 0;
        gguf_set_arr_data(g, KEY("attention.head_count_kv"), GGUF_TYPE_INT32, kvs, layers);
        free(kvs);
        gguf_set_val_u32(g, KEY("shortconv.l_cache"), 3);
    } else {
        gguf_set_val_u32(g, KEY("attention.head_count_kv"), kv_heads);
    }
    gguf_set_val_f32(g, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    gguf_set_val_u32(g, "general.file_type", file_type);
    if (experts) {
        gguf_set_val_u32(g, KEY("expert_count"), experts);
        gguf_set_val_u32(g, KEY("expert_used_count"), experts_used);
    }
    if (qwen35) {
        int half = head / 2, third = head / 2 / 3;
        int32_t sections[4] = {half - 2 * third, third, third, 0};
        gguf_set_arr_data(g, KEY("rope.dimension_sections"), GGUF_TYPE_INT32, sections, 4);
        gguf_set_val_u32(g, KEY("ssm.conv_kernel"), 4);
        gguf_set_val_u32(g, KEY("ssm.state_size"), head);
        gguf_set_val_u32(g, KEY("ssm.group_count"), kv_heads);
        gguf_set_val_u32(g, KEY("ssm.time_step_rank"), heads);
        gguf_set_val_u32(g, KEY("ssm.inner_size"), head * heads);
        gguf_set_val_u32(g, KEY("full_attention_interval"), 2);
    }
    // Mamba-2's shape: inner size 2 embd in heads of 64, 2 groups of 64 states
    const int64_t m_inner = 2 * (int64_t)embd, m_heads = m_inner / 64, m_groups = 2, m_state = 64;
    const int64_t m_conv = m_inner + 2 * m_groups * m_state;
    if (mamba2) {
        gguf_set_val_u32(g, KEY("ssm.conv_kernel"), 4);
        gguf_set_val_u32(g, KEY("ssm.state_size"), m_state);
        gguf_set_val_u32(g, KEY("ssm.group_count"), m_groups);
        gguf_set_val_u32(g, KEY("ssm.time_step_rank"), m_heads);
        gguf_set_val_u32(g, KEY("ssm.inner_size"), m_inner);
    }

    int64_t kv = (int64_t)embd / heads * kv_heads;
    int n_specs = 3 + 16 * layers;
    struct spec *specs = calloc(n_specs, sizeof *specs);
    char (*names)[64] = calloc(n_specs, 64);
    int k = 0;
    #define ADD3(nm, a, b, c, kind) do { snprintf(names[k], 64, "%s", nm); specs[k] = (struct spec){names[k], a, b, c, kind}; k++; } while (0)
    #define ADD(nm, a, b, kind) ADD3(nm, a, b, 1, kind)
    ADD("token_embd.weight", embd, vocab, MATRIX);
    for (int l = 0; l < layers; l++) {
        char nm[64];
        #define LAYER3(suffix, a, b, c, kind) do { snprintf(nm, sizeof nm, "blk.%d.%s", l, suffix); ADD3(nm, a, b, c, kind); } while (0)
        #define LAYER(suffix, a, b, kind) LAYER3(suffix, a, b, 1, kind)
        LAYER("attn_norm.weight", embd, 1, NORM);
        if (mamba2) {
            LAYER("ssm_in.weight", embd, m_inner + m_conv + m_heads, MATRIX);
            LAYER("ssm_conv1d.weight", 4, m_conv, CONV);
            LAYER("ssm_conv1d.bias", m_conv, 1, ROUTER);
            LAYER("ssm_dt.bias", m_heads, 1, ROUTER);
            LAYER("ssm_a", 1, m_heads, DECAY);
            LAYER("ssm_d", 1, m_heads, ROUTER);
            LAYER("ssm_norm.weight", m_inner / m_groups, m_groups, NORM);
            LAYER("ssm_out.weight", m_inner, embd, MATRIX);
            continue; // no feed-forward
        }
        int recurrent = (lfm2 || qwen35) && l % 2 == 0;
        if (recurrent && lfm2) {
            LAYER("shortconv.conv.weight", 3, embd, CONV);
            LAYER("shortconv.in_proj.weight", embd, 3 * embd, MATRIX);
            LAYER("shortconv.out_proj.weight", embd, embd, MATRIX);
        } else if (recurrent) {
            // the gated delta net: value heads of head elements, key heads (kv_heads) alike
            int64_t value = (int64_t)head * heads, keys = (int64_t)head * kv_heads;
            LAYER("attn_qkv.weight", embd, 2 * keys + value, MATRIX);
            LAYER("attn_gate.weight", embd, value, MATRIX);
            LAYER("ssm_conv1d.weight", 4, 2 * keys + value, CONV);
            LAYER("ssm_dt.bias", heads, 1, ROUTER);
            LAYER("ssm_a", heads, 1, DECAY);
            LAYER("ssm_beta.weight", embd, heads, MATRIX);
            LAYER("ssm_alpha.weight", embd, heads, MATRIX);
            LAYER("ssm_norm.weight", head, 1, NORM);
            LAYER("ssm_out.weight", value, embd, MATRIX);
        } else {
            LAYER("attn_q.weight", embd, qwen35 ? 2 * embd : embd, MATRIX); // Qwen3.5's: the query and its gate
            LAYER("attn_k.weight", embd, kv, MATRIX);
            LAYER("attn_v.weight", embd, kv, MATRIX);
            LAYER("attn_output.weight", embd, embd, MATRIX);
            if (lfm2 || qwen35) {
                LAYER("attn_q_norm.weight", head, 1, NORM);
                LAYER("attn_k_norm.weight", head, 1, NORM);
            }
        }
        LAYER(qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight", embd, 1, NORM);
        if (experts) {
            LAYER("ffn_gate_inp.weight", embd, experts, ROUTER);
            LAYER3("ffn_gate_exps.weight", embd, ff, experts, MATRIX);
            LAYER3("ffn_up_exps.weight", embd, ff, experts, MATRIX);
            LAYER3("ffn_down_exps.weight", ff, embd, experts, MATRIX);
        } else {
            LAYER("ffn_gate.weight", embd, ff, MATRIX);
            LAYER("ffn_up.weight", embd, ff, MATRIX);
            LAYER("ffn_down.weight", ff, embd, MATRIX);
        }
    }
    ADD(lfm2 ? "token_embd_norm.weight" : "output_norm.weight", embd, 1, NORM);
    ADD("output.weight", embd, vocab, MATRIX);

    struct ggml_init_params ip = {ggml_tensor_overhead() * (n_specs + 8), NULL, true};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor **ts = calloc(n_specs, sizeof *ts);
    enum ggml_type *qtypes = calloc(n_specs, sizeof *qtypes); // the type each tensor's values pass through
    n_specs = k;
    for (int i = 0; i < n_specs; i++) {
        enum ggml_type t = specs[i].kind != MATRIX ? GGML_TYPE_F32 : wtype;
        const char *nm = specs[i].name;
        if (hitype != GGML_TYPE_COUNT && (!strcmp(nm, "output.weight") || strstr(nm, "attn_v.") || strstr(nm, "ffn_down."))) t = hitype;
        qtypes[i] = t;
        if (dequantize) t = GGML_TYPE_F32;
        if (specs[i].kind != MATRIX && specs[i].ne1 == 1) ts[i] = ggml_new_tensor_1d(ctx, t, specs[i].ne0);
        else if (specs[i].ne2 > 1) ts[i] = ggml_new_tensor_3d(ctx, t, specs[i].ne0, specs[i].ne1, specs[i].ne2);
        else ts[i] = ggml_new_tensor_2d(ctx, t, specs[i].ne0, specs[i].ne1);
        ggml_set_name(ts[i], specs[i].name);
        gguf_add_tensor(g, ts[i]);
    }

    FILE *f = fopen(out, "wb");
    if (!f) { fprintf(stderr, "mkmodel: cannot write %s\n", out); return 1; }
    size_t meta = gguf_get_meta_size(g);
    void *mbuf = malloc(meta);
    gguf_get_meta_data(g, mbuf);
    fwrite(mbuf, 1, meta, f);
    free(mbuf);
    size_t align = gguf_get_alignment(g);
    size_t total = 0;
    static const char zeros[256];
    int nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 64) nthreads = 64;
    struct chunk *ch = calloc((size_t)nthreads, sizeof *ch);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    for (int i = 0; i < n_specs; i++) {
        struct ggml_tensor *t = ts[i];
        int64_t n_per_row = t->ne[0], rows = ggml_nrows(t);
        // the types whose quantizer needs an importance matrix get one of ones (as
        // test-backend-ops passes)
        float *imatrix = NULL;
        enum ggml_type qt = qtypes[i];
        if (ggml_quantize_requires_imatrix(qt)) {
            imatrix = malloc(sizeof(float) * n_per_row);
            for (int64_t j = 0; j < n_per_row; j++) imatrix[j] = 1.0f;
        }
        for (int c = 0; c < nthreads; c++) {
            ch[c] = (struct chunk){.type = t->type, .qt = qt, .n_per_row = n_per_row, .imatrix = imatrix};
            ch[c].row = malloc(sizeof(float) * n_per_row * 64);
            ch[c].conv = malloc(ggml_row_size(t->type, n_per_row) * 64);
            ch[c].quant = malloc(ggml_row_size(qt, n_per_row) * 64); // --dequantize: the quantized rows
        }
        // Batches of up to nthreads chunks of 64 rows: the values drawn in order (the
        // file does not depend on the thread count), converted in parallel, written in order.
        for (int64_t r0 = 0; r0 < rows; r0 += 64 * (int64_t)nthreads) {
            int used = 0;
            for (int64_t r = r0; r < rows && used < nthreads; r += 64, used++) {
                struct chunk *c = &ch[used];
                int64_t nr = rows - r < 64 ? rows - r : 64;
                c->nr = nr;
                if (specs[i].kind == NORM) for (int64_t j = 0; j < n_per_row * nr; j++) c->row[j] = 1.0f;
                else if (specs[i].kind == DECAY) for (int64_t j = 0; j < n_per_row * nr; j++) c->row[j] = -0.5f - uniform();
                else fill(c->row, (size_t)(n_per_row * nr), specs[i].kind == CONV ? 0.3f : 0.02f);
                // The built-in vocabulary: no logit for the control and byte tokens, so that
                // generation goes on in words.
                if (!tok && !strcmp(specs[i].name, "output.weight"))
                    for (int64_t j = r; j < r + nr && j < VOCAB_N_SPECIAL; j++) memset(c->row + (j - r) * n_per_row, 0, sizeof(float) * n_per_row);
            }
            for (int c = 1; c < used; c++) pthread_create(&th[c], NULL, convert, &ch[c]);
            convert(&ch[0]);
            for (int c = 1; c < used; c++) pthread_join(th[c], NULL);
            for (int c = 0; c < used; c++) fwrite(ch[c].conv, 1, ch[c].bytes, f);
        }
        size_t nb = ggml_nbytes(t), pad = (align - nb % align) % align;
        fwrite(zeros, 1, pad, f);
        total += nb + pad;
        for (int c = 0; c < nthreads; c++) {
            free(ch[c].row);
            free(ch[c].conv);
            free(ch[c].quant);
        }
        free(imatrix);
    }
    free(ch);
    free(th);
    fclose(f);
    fprintf(stderr, "mkmodel: wrote %s: %s, %d layers, embd %d, ff %d, heads %d/%d, vocab %lld, %s%s, %.1f MiB\n",
            out, arch, layers, embd, ff, heads, kv_heads, (long long)vocab, type_name, dequantize ? " dequantized to f32" : "", (meta + total) / 1048576.0);
    return 0;
}
