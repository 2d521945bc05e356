// model_keys.h — the keys of a lesson's "model" object, one row each in MODEL_KEY_TABLE:
// the JSON name, the AttnConfig field, its type, range, default, whether --set and the lab
// may edit it and whether only a language model takes it. From it come the reader's allowed
// keys and each value's checks (model_keys_read), the writer (model_keys_write, for
// lesson_write), the edits' keys, parsing and ranges (edit.c, EditKind), and the round-trip
// test over every row (tests/test_model_keys.c).
//
// Adding a model key is one row; a default that depends on the keys before it, a check
// across keys or an object's reading and writing is a hook in model_keys.c's HOOKS.
#ifndef ATTNVIZ_MODEL_KEYS_H
#define ATTNVIZ_MODEL_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "attention.h"

struct cJSON;
typedef struct JsonCtx JsonCtx;

// Flags of a row.
#define MK_REQUIRED 1u  // the file must give it
#define MK_ALWAYS 2u    // always written (otherwise only when set and not its default)
#define MK_LM 4u        // a language model's (a lesson with a "vocab"): refused without one, not written
#define MK_FFN 8u       // the feed-forward block's: refused, and not written, with ffn_hidden 0
#define MK_NEWLINE 16u  // the writer starts a new line before it
#define MK_ABOVE 32u    // FLOAT: above lo (lo itself out of range)

// X(ID, JSON name, AttnConfig field, type, lo, hi, default, flags, EDITABLE or FIXED), in the
// order the writer writes them and the reader checks them (a key's checks read the keys
// before it). Types: INT (range [lo, hi]), BOOL, FLOAT ([lo, hi], (lo, hi] with MK_ABOVE),
// ENUM (its names: HOOKS' names), OBJECT (read and written by its HOOKS). The limits are
// attn_json.h's (expanded where the table is). An INT row may be EDITABLE too (its value
// a whole number in range; a default outside the range, as top_k's 0, is "off": its
// HOOKS word, "off", sets it).
#define MODEL_KEY_TABLE(X)                                                                                              \
    X(N_LAYERS, "n_layers", n_layers, INT, 1, LESSON_MAX_LAYERS, 1, 0, FIXED)                                          \
    X(D_MODEL, "d_model", d_model, INT, 1, LESSON_MAX_D_MODEL, 0, MK_REQUIRED | MK_ALWAYS, FIXED)                      \
    X(N_HEADS, "n_heads", n_heads, INT, 1, LESSON_MAX_HEADS, 0, MK_REQUIRED | MK_ALWAYS, FIXED)                        \
    X(D_K, "d_k", d_k, INT, 1, LESSON_MAX_D_HEAD, 0 /* d_model / n_heads */, MK_ALWAYS, FIXED)                         \
    X(D_V, "d_v", d_v, INT, 1, LESSON_MAX_D_HEAD, 0 /* d_k */, MK_ALWAYS, FIXED)                                       \
    X(QKV_BIAS, "qkv_bias", qkv_bias, BOOL, 0, 1, 1, MK_ALWAYS, FIXED)                                                  \
    X(OUT_BIAS, "out_bias", out_bias, BOOL, 0, 1, 1, MK_ALWAYS, FIXED)                                                  \
    X(QUERY_PRE_ATTN_SCALAR, "query_pre_attn_scalar", query_pre_attn_scalar, FLOAT, 0, INFINITY, 0, MK_ABOVE, FIXED)   \
    X(SCALE, "scale", scale, FLOAT, 0, INFINITY, 0 /* sqrt(d_k) */, MK_ALWAYS | MK_NEWLINE | MK_ABOVE, EDITABLE)       \
    X(MASK_FILL, "mask_fill", mask_fill, FLOAT, -INFINITY, INFINITY, -1e9, MK_ALWAYS, EDITABLE)                         \
    X(RESIDUAL_NORM, "residual_norm", residual_norm, BOOL, 0, 1, 0, MK_ALWAYS, FIXED)                                   \
    X(NORM_EPS, "norm_eps", norm_eps, FLOAT, 0, INFINITY, 1e-5, MK_ALWAYS | MK_ABOVE, EDITABLE)                         \
    X(FFN_HIDDEN, "ffn_hidden", ffn_hidden, INT, 0, LESSON_MAX_FFN, 0, MK_ALWAYS, FIXED)                                \
    X(NORM, "norm", norm, ENUM, 0, 0, NORM_LAYER, 0, FIXED)                                                              \
    X(NORM_FIRST, "norm_first", norm_first, BOOL, 0, 1, 0, 0, FIXED)                                                     \
    X(ACTIVATION, "activation", ffn_act, ENUM, 0, 0, FFN_RELU, MK_FFN, FIXED)                                           \
    X(FFN_BIAS, "ffn_bias", ffn_bias, BOOL, 0, 1, 1, MK_FFN, FIXED)                                                     \
    X(ATTN_SINKS, "attn_sinks", attn_sinks, BOOL, 0, 1, 0, 0, FIXED)                                                     \
    X(N_KV_HEADS, "n_kv_heads", n_kv_heads, INT, 1, LESSON_MAX_HEADS, 0 /* n_heads */, 0, FIXED)                       \
    X(Q_LORA_RANK, "q_lora_rank", q_lora_rank, INT, 1, LESSON_MAX_D_MODEL, 0, 0, FIXED)                      \
    X(KV_LORA_RANK, "kv_lora_rank", kv_lora_rank, INT, 1, LESSON_MAX_D_MODEL, 0, 0, FIXED)                             \
    X(QK_ROPE_HEAD_DIM, "qk_rope_head_dim", qk_rope_head_dim, INT, 2, LESSON_MAX_D_HEAD, 0, 0, FIXED)                 \
    X(ROPE, "rope", rope, OBJECT, 0, 0, 0, MK_NEWLINE, FIXED)                                                            \
    X(ALIBI, "alibi", alibi, BOOL, 0, 1, 0, 0, FIXED)                                                                    \
    X(DECODE, "decode", decode, BOOL, 0, 1, 0, 0, FIXED)                                                                 \
    X(FLASH, "flash", flash_block_q, OBJECT, 0, 0, 0, 0, FIXED)                                                          \
    X(QK_NORM, "qk_norm", qk_norm, BOOL, 0, 1, 0, MK_NEWLINE, FIXED)                                                     \
    X(SOFTCAP, "attn_logit_softcapping", softcap, FLOAT, 0, INFINITY, 0, MK_ABOVE, FIXED)                                \
    X(ATTN_GATE, "attn_gate", attn_gate, BOOL, 0, 1, 0, 0, FIXED)                                                        \
    X(LAYER_TYPES, "layer_types", n_layer_types, OBJECT, 0, 0, 0, MK_NEWLINE, FIXED)                                     \
    X(SLIDING_WINDOW, "sliding_window", sliding_window, INT, 1, LESSON_MAX_LEN, 0, 0, FIXED)                            \
    X(ROPE_LOCAL_BASE_FREQ, "rope_local_base_freq", rope_local_theta, FLOAT, 1, INFINITY, 0, MK_ABOVE, FIXED)           \
    X(INDEX_N_HEADS, "index_n_heads", index_n_heads, INT, 1, LESSON_MAX_HEADS, 0, MK_NEWLINE, FIXED)                  \
    X(INDEX_HEAD_DIM, "index_head_dim", index_head_dim, INT, 1, LESSON_MAX_D_HEAD, 0, 0, FIXED)                       \
    X(INDEX_TOPK, "index_topk", index_topk, INT, 1, LESSON_MAX_LEN, 0 /* off */, 0, EDITABLE)                         \
    X(POSITIONS, "positions", positions, ENUM, 0, 0, POS_NONE, MK_LM | MK_ALWAYS | MK_NEWLINE, FIXED)                   \
    X(MAX_POSITIONS, "max_positions", max_positions, INT, 1, LESSON_MAX_LEN, 0, MK_LM, FIXED)                           \
    X(FINAL_NORM, "final_norm", final_norm, BOOL, 0, 1, 1, MK_LM | MK_ALWAYS, FIXED)                                    \
    X(TIE_EMBEDDINGS, "tie_embeddings", tie_embeddings, BOOL, 0, 1, 0, MK_LM | MK_ALWAYS, FIXED)                        \
    X(TEMPERATURE, "temperature", temperature, FLOAT, 1e-3, 1e3, 1, MK_LM | MK_ALWAYS, EDITABLE)                      \
    X(TOP_K, "top_k", top_k, INT, 1, LESSON_MAX_VOCAB, 0 /* off */, MK_LM, EDITABLE)                                  \
    X(TOP_P, "top_p", top_p, FLOAT, 0, 1, 1, MK_LM | MK_ABOVE, EDITABLE) \
    X(WINDOW_CONVENTION, "window_convention", window_conv, ENUM, 0, 0, WINDOW_INCLUSIVE, MK_NEWLINE, EDITABLE)        \
    X(MASKED_ROWS, "masked_rows", masked_rows, ENUM, 0, 0, MASKED_ROWS_SOFTMAX, 0, EDITABLE)                          \
    X(ALIBI_FORM, "alibi_form", alibi_form, ENUM, 0, 0, ALIBI_RELATIVE, 0, EDITABLE)                                  \
    X(FLASH_ACCUMULATOR, "flash_accumulator", flash_acc, ENUM, 0, 0, FLASH_ACC_FA2, 0, EDITABLE)                      \
    X(STREAMING_POSITIONS, "streaming_positions", stream_pos, ENUM, 0, 0, STREAM_POS_TEXT, 0, EDITABLE)          \
    X(DECODER_LAYERS, "decoder_layers", decoder_layers, INT, 1, LESSON_MAX_LAYERS / 2, 0 /* none */, MK_NEWLINE, FIXED) \
    X(LINEAR_RULE, "linear_rule", linear_rule, ENUM, 0, 0, LINEAR_GATED_DELTA, MK_NEWLINE, FIXED)                    \
    X(LINEAR_FORM, "linear_form", linear_form, ENUM, 0, 0, LINEAR_RECURRENT, 0, EDITABLE)

typedef enum ModelKeyId {
#define MODEL_KEY_ENUM(id, ...) MK_##id,
    MODEL_KEY_TABLE(MODEL_KEY_ENUM)
#undef MODEL_KEY_ENUM
    MK_COUNT
} ModelKeyId;

typedef enum ModelKeyType { MK_INT, MK_BOOL, MK_FLOAT, MK_ENUM, MK_OBJECT } ModelKeyType;

typedef struct ModelKey {
    const char *name;     // "scale" (model.scale)
    size_t offset;        // of its field in AttnConfig
    ModelKeyType type;
    float lo, hi, dflt;   // range (INT, FLOAT) and the default when it depends on no other key
    unsigned flags;       // MK_*
    bool editable;        // by --set and the lab (a FLOAT: EditKind has EDIT_<ID> for it)
} ModelKey;

extern const ModelKey MODEL_KEYS[MK_COUNT];

// "model" (absent: an error) into cfg, whose vocab_size is set from the lesson's "vocab"
// before; every error names its path ("model.scale: expected a positive divisor …").
bool model_keys_read(JsonCtx *c, const struct cJSON *m, AttnConfig *cfg);
// The checks of cfg's keys against the lesson's input in (len_k keys, its mask read): multi-head latent
// attention's self-attention, the indexer's top-k within len_k and under a mask.
bool model_keys_check_input(JsonCtx *c, const AttnConfig *cfg, const AttnInputs *in, int len_k);
// The keys of cfg, "\"d_model\": 4, \"n_heads\": 2, …" (between the braces): the required and
// MK_ALWAYS ones, the others when set and not their default; a language model's with lm.
void model_keys_write(FILE *f, const AttnConfig *cfg, bool lm);
// The row named name ("scale"), or -1.
int model_key_find(const char *name);
// A FLOAT, INT or ENUM key's value in cfg, and set (an INT's: a whole number; an ENUM's: its
// value's index, a convention's names: --set model.masked_rows=zero).
float model_key_get(const AttnConfig *cfg, int k);
void model_key_set(AttnConfig *cfg, int k, float v);
// Whether v is in the range of FLOAT or INT key k (an INT's: whole; one check for the
// reader and the edits).
bool model_key_in_range(int k, float v);
// A FLOAT key's word for a value as --set takes it ("-inf" for mask_fill, "sqrt_dk" for
// scale: its default), or an ENUM key's name: true with *v when text is that word.
bool model_key_word(const AttnConfig *cfg, int k, const char *text, float *v);
// An ENUM key's names (attn_names.h), NULL for another type.
const struct AttnNames *model_key_names(int k);
// What --set's error for a bad value of FLOAT key k expects: "a positive float32 divisor or sqrt_dk".
const char *model_key_edit_expect(int k);

#endif
