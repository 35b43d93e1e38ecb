// vocab.h: the vocabulary mkmodel writes when no tokenizer GGUF is given (-t), so that a
// model made here stands alone: a SentencePiece-style tokenizer ("llama" tokenizer model)
// with <unk>, <s>, </s>, the chat markers <|im_start|> and <|im_end|>, the 256 byte-fallback
// tokens <0x00>..<0xFF>, the printable ASCII characters, and common English words. A word
// comes with each of its prefixes ("▁t", "▁th", "▁the"): SentencePiece merges two pieces
// only when their concatenation is a token, so every step towards the word must be one.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gguf.h"

// Token types of llama.cpp's vocabulary (llama_token_type).
enum { VOCAB_NORMAL = 1, VOCAB_UNKNOWN = 2, VOCAB_CONTROL = 3, VOCAB_UNUSED = 5, VOCAB_BYTE = 6 };

// The control and byte tokens come first: ids 0 .. VOCAB_N_SPECIAL-1.
enum { VOCAB_N_SPECIAL = 5 + 256 };

static const char *const vocab_words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "I", "this", "are", "or", "his", "from", "at", "which", "but",
    "have", "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her",
    "has", "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "she",
    "other", "its", "may", "these", "about", "them", "than", "some", "time", "into", "only",
    "do", "could", "new", "then", "our", "two", "first", "also", "any", "like", "my", "now",
    "over", "such", "what", "out", "most", "me", "very", "made", "many", "after", "before",
    "where", "how", "just", "each", "make", "did", "great", "little", "through", "down",
    "upon", "once", "long", "day", "old", "see", "good", "way", "well", "back", "work",
    "year", "man", "woman", "world", "life", "hand", "place", "house", "home", "water",
    "light", "night", "morning", "story", "king", "queen", "dragon", "forest", "river",
    "mountain", "city", "road", "friend", "child", "children", "people", "name", "word",
    "book", "ship", "sea", "sun", "moon", "star", "stars", "fire", "tree", "garden", "door",
    "window", "heart", "dream", "voice", "song", "color", "red", "blue", "green", "white",
    "black", "small", "big", "young", "happy", "quiet", "bright", "dark", "warm", "cold",
    "fast", "slow", "quick", "brown", "fox", "dog", "cat", "bird", "horse", "fish", "lazy",
    "jumps", "ran", "walked", "said", "asked", "looked", "found", "lived", "wanted", "knew",
    "thought", "came", "went", "saw", "told", "gave", "took", "left", "felt", "began",
    "because", "while", "under", "again", "never", "always", "together", "every", "nothing",
    "something", "everything", "here", "why", "yes", "hello", "thank", "please", "answer",
    "question", "model", "token", "text", "graph", "device", "kernel", "shader", "tensor",
    "matrix", "vector", "compute", "memory", "buffer", "GPU", "CPU", "WebGPU", "ggml",
    "llama", "server", "test", "random", "weights", "The", "Once", "It", "In", "A", "He",
    "She", "They", "We", "You", "What", "How", "Why", "Hello", "Yes", "No", "There", "This",
};

struct vocab_list {
    char **text;
    float *score;
    int32_t *type;
    int64_t n, cap;
};

// vocab_has reports whether s is already a token (the lists are small: a linear scan).
static int vocab_has(const struct vocab_list *v, const char *s) {
    for (int64_t i = 0; i < v->n; i++) {
        if (!strcmp(v->text[i], s)) return 1;
    }
    return 0;
}

// vocab_append appends s, which the caller knows is not a token yet.
static void vocab_append(struct vocab_list *v, const char *s, float score, int32_t type) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->text = realloc(v->text, v->cap * sizeof *v->text);
        v->score = realloc(v->score, v->cap * sizeof *v->score);
        v->type = realloc(v->type, v->cap * sizeof *v->type);
    }
    v->text[v->n] = strdup(s);
    v->score[v->n] = score;
    v->type[v->n] = type;
    v->n++;
}

// vocab_add appends s unless it is already a token.
static void vocab_add(struct vocab_list *v, const char *s, float score, int32_t type) {
    if (!vocab_has(v, s)) vocab_append(v, s, score, type);
}

// builtin_vocab writes the architecture and the tokenizer keys into g and returns the
// number of tokens: at least min_tokens, unused tokens "<unusedN>" filling up to it (the
// output matrix of a benchmark model has as many rows as the tokens).
static int64_t builtin_vocab(struct gguf_context *g, int64_t min_tokens) {
    static const char space[] = "\xe2\x96\x81"; // U+2581, SentencePiece's word boundary
    struct vocab_list v = {0};
    char piece[64];
    vocab_add(&v, "<unk>", 0.0f, VOCAB_UNKNOWN);
    vocab_add(&v, "<s>", 0.0f, VOCAB_CONTROL);
    vocab_add(&v, "</s>", 0.0f, VOCAB_CONTROL);
    vocab_add(&v, "<|im_start|>", 0.0f, VOCAB_CONTROL);
    vocab_add(&v, "<|im_end|>", 0.0f, VOCAB_CONTROL);
    for (int b = 0; b < 256; b++) {
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        vocab_add(&v, piece, 0.0f, VOCAB_BYTE);
    }
    // Pieces that merge earlier score higher; single characters score lowest.
    float score = -1.0f;
    int n_words = (int)(sizeof vocab_words / sizeof vocab_words[0]);
    for (int w = 0; w < n_words; w++) {
        size_t len = strlen(vocab_words[w]);
        for (size_t k = 2; k <= len; k++) { // "▁" + each prefix of two characters or more
            snprintf(piece, sizeof piece, "%s%.*s", space, (int)k, vocab_words[w]);
            vocab_add(&v, piece, score, VOCAB_NORMAL);
            score -= 1.0f;
        }
        for (size_t k = 2; k <= len; k++) { // the word without a boundary, inside others
            snprintf(piece, sizeof piece, "%.*s", (int)k, vocab_words[w]);
            vocab_add(&v, piece, score, VOCAB_NORMAL);
            score -= 1.0f;
        }
    }
    vocab_add(&v, space, score, VOCAB_NORMAL);
    score -= 1.0f;
    for (int c = 0x21; c < 0x7f; c++) {
        snprintf(piece, sizeof piece, "%s%c", space, c);
        vocab_add(&v, piece, score, VOCAB_NORMAL);
        score -= 1.0f;
    }
    for (int c = 0x21; c < 0x7f; c++) {
        snprintf(piece, sizeof piece, "%c", c);
        vocab_add(&v, piece, score, VOCAB_NORMAL);
        score -= 1.0f;
    }
    for (int64_t i = 0; v.n < min_tokens; i++) {
        snprintf(piece, sizeof piece, "<unused%lld>", (long long)i);
        vocab_append(&v, piece, score, VOCAB_UNUSED);
    }

    gguf_set_val_str(g, "general.architecture", "llama");
    gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", (const char **)v.text, (size_t)v.n);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, v.score, (size_t)v.n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v.type, (size_t)v.n);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", 0);
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
    gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", false);
    int64_t n = v.n;
    for (int64_t i = 0; i < v.n; i++) free(v.text[i]);
    free(v.text);
    free(v.score);
    free(v.type);
    return n;
}
