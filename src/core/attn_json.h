// attn_json.h — the numbers of one attention example from a lesson's JSON, each
// error naming the JSON path (jsonpath.h): "input" (query, key, value), "mask" (causal,
// sliding window, padding, 0/1 tensors) and "weights" (tensors, or {"init": {"seed": N}}:
// attn_init_value); "model" is model_keys.h's table. lesson.c reads the rest of a lesson
// (title, tokens, narration, notes, questions).
#ifndef ATTNVIZ_ATTN_JSON_H
#define ATTNVIZ_ATTN_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "attention.h"

// Documented limits (README "Lesson format" → "Limits"), with lesson.h's.
#define LESSON_MAX_LAYERS 8          // model.n_layers (= TRACE_MAX_LAYERS)
#define LESSON_LAYER_SEED_STRIDE 64  // weights.init: layer l's slot i is the generator's tensor i + 64·l
#define LESSON_MAX_BATCH 64
#define LESSON_MAX_LEN 1024
#define LESSON_MAX_VOCAB 1024      // a language model's "vocab"
#define LESSON_MAX_POSITION 1048576  // input.position_ids: RoPE positions up to 2^20 (exact in float)
#define LESSON_MAX_D_MODEL 1024
#define LESSON_MAX_HEADS 64
#define LESSON_MAX_D_HEAD 1024
#define LESSON_MAX_FFN 4096
#define LESSON_MAX_ELEMS (1u << 22)          // any one tensor, incl. B·H·Lq·Lk scores (4,194,304)

struct cJSON;
typedef struct JsonCtx JsonCtx;

// The inputs for cfg; the batch and lengths they have are in ai's tensors.
bool attn_json_input(JsonCtx *c, const struct cJSON *in, const AttnConfig *cfg, AttnInputs *ai);
// A language model's input (cfg->vocab_size entries in vocab; bpe: byte-pair encoding,
// else words: the word tokenizer, else one character a token): input.text or input.ids
// into ai->ids (B, L), self-attention.
// The tokenizer of a language model's text: byte-pair encoding (bpe, not NULL: bpe.h),
// else the words between spaces (words), else a character (a Unicode code point) a
// token, each looked up in vocab (V tokens) into ids (may be NULL), at most max. Returns
// how many; -1 when a token is not in vocab (its index from 0 and its bytes
// s[e->at, e->at + e->len) in *e, may be NULL; never with bpe); -2 past max; -3 out of memory.
typedef struct AttnTokenError {
    int index;
    size_t at, len;
} AttnTokenError;
struct Bpe;
int attn_tokenize(const char *s, char *const *vocab, int V, bool words, const struct Bpe *bpe, int *ids, int max,
                  AttnTokenError *e);
// The first `most` tokens of vocab as a reader reads them, "a b c …, space" (the token " "
// last, written as `space`), into out; returns its length.
size_t attn_vocab_list(char *const *vocab, int V, const char *space, int most, char *out, size_t n);
bool attn_json_lm_input(JsonCtx *c, const struct cJSON *in, const AttnConfig *cfg, char *const *vocab, bool words,
                        const struct Bpe *bpe, AttnInputs *ai);
// The mask of a B×Lq×Lk example (absent: none).
bool attn_json_mask(JsonCtx *c, const struct cJSON *m, int B, int Lq, int Lk, AttnInputs *ai);
// The weights of cfg->n_layers layers into w[0 .. n_layers − 1]: one layer's tensors as
// the object's keys, or "layers": [{…}, …] (one object per layer); "init" fills the rest.
bool attn_json_weights(JsonCtx *c, const struct cJSON *jw, const AttnConfig *cfg, AttnWeights *w);
// The floats cfg's weights take: every used tensor of every layer and the model's own
// (what weights.init would generate; the weight budget, lesson.h, counts with it).
size_t attn_json_weight_floats(const AttnConfig *cfg);
// The same at JSON path P ("checkpoints[3].weights": a checkpoint's).
bool attn_json_weights_at(JsonCtx *c, const struct cJSON *jw, const char *P, const AttnConfig *cfg, AttnWeights *w);

#endif
