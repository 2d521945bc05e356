// model_keys.c — a lesson's "model" keys from one table (model_keys.h): read, written, edited.
#include "model_keys.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn_json.h"
#include "attn_names.h"
#include "json_out.h"
#include "jsonpath.h"

// --- the rows --------------------------------------------------------------------

#define MK_EDITABLE_EDITABLE true
#define MK_EDITABLE_FIXED false
const ModelKey MODEL_KEYS[MK_COUNT] = {
#define MODEL_KEY_ROW(id, json, field, type, lo, hi, dflt, flags, ed)                                            \
    [MK_##id] = {json, offsetof(AttnConfig, field), MK_##type, (float)(lo), (float)(hi), (float)(dflt), flags,     \
                 MK_EDITABLE_##ed},
    MODEL_KEY_TABLE(MODEL_KEY_ROW)
#undef MODEL_KEY_ROW
};

// each field holds what its type reads and writes (an ENUM: an int-sized enum)
#define MK_FITS_INT(f) (sizeof(f) == sizeof(int))
#define MK_FITS_ENUM(f) (sizeof(f) == sizeof(int))
#define MK_FITS_BOOL(f) (sizeof(f) == sizeof(bool))
#define MK_FITS_FLOAT(f) (sizeof(f) == sizeof(float))
#define MK_FITS_OBJECT(f) 1
#define MODEL_KEY_FITS(id, json, field, type, ...)                                                              \
    _Static_assert(MK_FITS_##type(((AttnConfig *)0)->field), "model key " json ": its field's size is not its type's");
MODEL_KEY_TABLE(MODEL_KEY_FITS)
#undef MODEL_KEY_FITS

// --- the hooks: what a row cannot say ------------------------------------------------

static double dflt_d_k(const AttnConfig *cfg) { return cfg->d_model / cfg->n_heads; }
static double dflt_d_v(const AttnConfig *cfg) { return cfg->d_k; }
// Gemma's query_pre_attn_scalar s sets the scale √s (its config: scaling = s ** -0.5)
static double dflt_scale(const AttnConfig *cfg)
{
    return sqrtf(cfg->query_pre_attn_scalar > 0.0f ? cfg->query_pre_attn_scalar : (float)cfg->d_k);
}
static double dflt_n_kv_heads(const AttnConfig *cfg) { return cfg->n_heads; }

static bool check_n_heads(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    if (!cJSON_GetObjectItemCaseSensitive(m, "d_k") && cfg->d_model % cfg->n_heads != 0)
        return jsonpath_fail(c, "model.n_heads", "%d does not divide d_model %d (or give model.d_k)", cfg->n_heads,
                             cfg->d_model);
    return true;
}

static bool check_d_v(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if ((long)cfg->n_heads * cfg->d_k > LESSON_MAX_D_MODEL * 4L || (long)cfg->n_heads * cfg->d_v > LESSON_MAX_D_MODEL * 4L)
        return jsonpath_fail(c, "model", "n_heads·d_k and n_heads·d_v must be at most %d", LESSON_MAX_D_MODEL * 4);
    return true;
}

static bool check_norm(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->norm == NORM_RMS && !cfg->residual_norm && cfg->ffn_hidden == 0)
        return jsonpath_fail(c, "model.norm", "this lesson has no norm to make RMSNorm; expected \"residual_norm\": true "
                             "or a feed-forward block (ffn_hidden)");
    return true;
}

static bool check_norm_first(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->norm_first && !cfg->residual_norm)
        return jsonpath_fail(c, "model.norm_first", "a pre-norm block adds the residual after attention; expected "
                             "\"residual_norm\": true with it");
    return true;
}

// grouped-query attention: n_kv_heads K/V heads, each shared by n_heads / n_kv_heads query heads
static bool check_n_kv_heads(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->n_heads % cfg->n_kv_heads != 0)
        return jsonpath_fail(c, "model.n_kv_heads", "%d does not divide n_heads %d; expected a divisor (1 = multi-query)",
                             cfg->n_kv_heads, cfg->n_heads);
    return true;
}

static bool check_alibi(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->alibi && cfg->rope != ROPE_NONE)
        return jsonpath_fail(c, "model.alibi", "RoPE and ALiBi are two ways of giving positions; expected one of them, not both");
    return true;
}

static bool check_positions(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->positions == POS_SINUSOIDAL && cfg->d_model % 2 != 0)
        return jsonpath_fail(c, "model.positions", "sinusoidal positions pair sin and cos; expected an even d_model, got %d",
                             cfg->d_model);
    if (cfg->positions == POS_SINUSOIDAL && cfg->rope != ROPE_NONE)
        return jsonpath_fail(c, "model.positions", "RoPE already gives the positions; expected \"none\" with model.rope");
    return true;
}

static bool check_max_positions(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->max_positions && cfg->positions != POS_LEARNED)
        return jsonpath_fail(c, "model.max_positions", "the rows of learned positions; expected \"positions\": \"learned\" with it");
    return true;
}

// model.rope.scaling, as Hugging Face's rope_scaling: {"type": "linear" | "dynamic" |
// "yarn" | "llama3", "factor": f, ...}; each type takes only its own keys.
static bool scale_number(JsonCtx *c, const cJSON *o, const char *key, float *out, float min, bool above, float dflt)
{
    char p[JSONPATH_MAX];
    snprintf(p, sizeof p, "model.rope.scaling.%s", key);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = dflt;
    if (!j) {
        if (dflt >= 0.0f) return true;
        return jsonpath_fail(c, p, "missing; expected a number %s %g", above ? "above" : "from", (double)min);
    }
    if (!jsonpath_number(c, j, p, out)) return false;
    if (!(above ? *out > min : *out >= min) || !isfinite(*out))
        return jsonpath_fail(c, p, "expected a number %s %g, got %g", above ? "above" : "from", (double)min, (double)*out);
    return true;
}

static bool rope_scaling(JsonCtx *c, const cJSON *j, RopeScale *s)
{
    const char *P = "model.rope.scaling";
    memset(s, 0, sizeof *s);
    if (!j || cJSON_IsNull(j)) return true;
    if (!cJSON_IsObject(j)) return jsonpath_fail(c, P, "expected {\"type\": \"linear\", \"factor\": 2} or another type, got %s",
                                          jsonpath_type(j));
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
    static const char *const keys[ROPE_SCALE_COUNT][8] = {
        [ROPE_SCALE_LINEAR] = {"type", "factor", NULL},
        [ROPE_SCALE_DYNAMIC] = {"type", "factor", "original_max_position_embeddings", NULL},
        [ROPE_SCALE_YARN] = {"type", "factor", "original_max_position_embeddings", "beta_fast", "beta_slow",
                             "attention_factor", NULL},
        [ROPE_SCALE_LLAMA3] = {"type", "factor", "original_max_position_embeddings", "low_freq_factor",
                               "high_freq_factor", NULL},
    };
    const int k = attn_names_find(&ATTN_NAMES_ROPE_SCALE, cJSON_IsString(t) ? t->valuestring : NULL);
    if (k < 0) {
        char expected[160];
        attn_names_expected(&ATTN_NAMES_ROPE_SCALE, expected, sizeof expected);
        return jsonpath_fail(c, "model.rope.scaling.type", "expected %s (Hugging Face's rope_type), got %s", expected,
                             cJSON_IsString(t) ? t->valuestring : (t ? jsonpath_type(t) : "nothing"));
    }
    if (!jsonpath_check_keys(c, j, P, keys[k])) return false;
    s->type = (RopeScaleType)k;
    if (!scale_number(c, j, "factor", &s->factor, 0.0f, true, -1.0f)) return false;
    if (s->type != ROPE_SCALE_LINEAR) {
        if (!jsonpath_int(c, j, P, "original_max_position_embeddings", &s->original_max, 1, LESSON_MAX_POSITION, true, 0))
            return false;
    }
    if (s->type == ROPE_SCALE_YARN) {
        if (!scale_number(c, j, "beta_fast", &s->beta_fast, 0.0f, true, 32.0f)) return false;
        if (!scale_number(c, j, "beta_slow", &s->beta_slow, 0.0f, true, 1.0f)) return false;
        if (!scale_number(c, j, "attention_factor", &s->attention_factor, 0.0f, true, 0.0f)) return false;
    }
    if (s->type == ROPE_SCALE_LLAMA3) {
        if (!scale_number(c, j, "low_freq_factor", &s->low_freq_factor, 0.0f, true, 1.0f)) return false;
        if (!scale_number(c, j, "high_freq_factor", &s->high_freq_factor, 0.0f, true, 4.0f)) return false;
        if (!(s->high_freq_factor > s->low_freq_factor))
            return jsonpath_fail(c, "model.rope.scaling.high_freq_factor", "expected above low_freq_factor %g, got %g",
                                 (double)s->low_freq_factor, (double)s->high_freq_factor);
    }
    return true;
}

// partial rotary (GPT-J's rotary_dim, partial_rotary_factor·head_dim): the first R turn
static bool rotary_dim(JsonCtx *c, const cJSON *rd, AttnConfig *cfg)
{
    cfg->rotary_dim = 0;
    if (rd) {
        if (!cJSON_IsNumber(rd) || rd->valuedouble != floor(rd->valuedouble) || rd->valuedouble < 2 ||
            rd->valuedouble > cfg->d_k || (long)rd->valuedouble % 2 != 0) {
            char got[32];
            if (cJSON_IsNumber(rd))
                snprintf(got, sizeof got, "%g", rd->valuedouble);
            else
                snprintf(got, sizeof got, "%s", jsonpath_type(rd));
            return jsonpath_fail(c, "model.rope.rotary_dim", "expected an even number of dimensions from 2 to d_k = %d "
                                 "(RoPE turns pairs; the rest pass unturned), got %s", cfg->d_k, got);
        }
        cfg->rotary_dim = (int)rd->valuedouble;
    } else if (cfg->d_k % 2 != 0 && cfg->kv_lora_rank == 0) { // (MLA: only qk_rope_head_dim's turn)
        return jsonpath_fail(c, "model.rope", "needs an even d_k (RoPE turns pairs of dimensions), got d_k %d; or turn "
                             "fewer with \"rotary_dim\"", cfg->d_k);
    }
    return true;
}

static bool read_rope(JsonCtx *c, const cJSON *rope, AttnConfig *cfg)
{
    cfg->rope = ROPE_NONE;
    cfg->rope_theta = 10000.0f;
    if (!rope || cJSON_IsNull(rope)) {
        if (cfg->kv_lora_rank > 0)
            return jsonpath_fail(c, "model.kv_lora_rank", "multi-head latent attention turns a decoupled RoPE part of q "
                                 "and k; expected model.rope with it");
        return true;
    }
    const char *PR = "model.rope";
    if (!cJSON_IsObject(rope))
        return jsonpath_fail(c, PR, "expected {\"theta\": 10000, \"style\": \"half\" or \"interleaved\"}, got %s",
                             jsonpath_type(rope));
    static const char *const rkeys[] = {"theta", "style", "rotary_dim", "scaling", NULL};
    if (!jsonpath_check_keys(c, rope, PR, rkeys)) return false;
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(rope, "theta");
    if (th) {
        if (!jsonpath_number(c, th, "model.rope.theta", &cfg->rope_theta)) return false;
        if (!(cfg->rope_theta > 1.0f))
            return jsonpath_fail(c, "model.rope.theta", "expected a base above 1 (Llama: 10000), got %g", (double)cfg->rope_theta);
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(rope, "style");
    cfg->rope = ROPE_HALF;
    if (st) {
        const int k = attn_names_find(&ATTN_NAMES_ROPE_STYLE, cJSON_IsString(st) ? st->valuestring : NULL);
        if (k < 0) {
            char expected[160];
            attn_names_expected(&ATTN_NAMES_ROPE_STYLE, expected, sizeof expected);
            return jsonpath_fail(c, "model.rope.style", "expected %s, got %s", expected,
                                 cJSON_IsString(st) ? "another string" : jsonpath_type(st));
        }
        cfg->rope = (RopeStyle)k;
    }
    if (!rope_scaling(c, cJSON_GetObjectItemCaseSensitive(rope, "scaling"), &cfg->rope_scale)) return false;
    if (cfg->kv_lora_rank > 0 && cJSON_GetObjectItemCaseSensitive(rope, "rotary_dim"))
        return jsonpath_fail(c, "model.rope.rotary_dim", "with model.kv_lora_rank the turned dimensions are the last "
                             "qk_rope_head_dim of d_k; expected no rotary_dim");
    if (!rotary_dim(c, cJSON_GetObjectItemCaseSensitive(rope, "rotary_dim"), cfg)) return false;
    if (cfg->rope_scale.type == ROPE_SCALE_DYNAMIC && (cfg->rotary_dim > 0 ? cfg->rotary_dim : cfg->d_k) < 4)
        return jsonpath_fail(c, "model.rope.scaling.type", "dynamic NTK raises the base to the power R/(R−2): "
                             "expected at least 4 rotary dimensions, got %d", cfg->rotary_dim > 0 ? cfg->rotary_dim : cfg->d_k);
    return true;
}

static bool rope_unset(const AttnConfig *cfg) { return cfg->rope == ROPE_NONE; }

static void write_rope(FILE *f, const AttnConfig *c)
{
    fputs("{\"theta\": ", f);
    json_write_float(f, c->rope_theta);
    fprintf(f, ", \"style\": \"%s\"", attn_names_name(&ATTN_NAMES_ROPE_STYLE, c->rope));
    if (c->rotary_dim > 0) fprintf(f, ", \"rotary_dim\": %d", c->rotary_dim);
    const RopeScale *s = &c->rope_scale;
    if (s->type != ROPE_SCALE_NONE) {
        fprintf(f, ", \"scaling\": {\"type\": \"%s\", \"factor\": ", attn_names_name(&ATTN_NAMES_ROPE_SCALE, s->type));
        json_write_float(f, s->factor);
        if (s->type != ROPE_SCALE_LINEAR) fprintf(f, ", \"original_max_position_embeddings\": %d", s->original_max);
        if (s->type == ROPE_SCALE_YARN) {
            fputs(", \"beta_fast\": ", f), json_write_float(f, s->beta_fast);
            fputs(", \"beta_slow\": ", f), json_write_float(f, s->beta_slow);
            if (s->attention_factor > 0.0f) fputs(", \"attention_factor\": ", f), json_write_float(f, s->attention_factor);
        }
        if (s->type == ROPE_SCALE_LLAMA3) {
            fputs(", \"low_freq_factor\": ", f), json_write_float(f, s->low_freq_factor);
            fputs(", \"high_freq_factor\": ", f), json_write_float(f, s->high_freq_factor);
        }
        fputc('}', f);
    }
    fputc('}', f);
}

static bool read_flash(JsonCtx *c, const cJSON *fl, AttnConfig *cfg)
{
    cfg->flash_block_q = cfg->flash_block_k = 0;
    if (!fl || cJSON_IsNull(fl)) return true;
    if (!cJSON_IsObject(fl))
        return jsonpath_fail(c, "model.flash", "expected {\"block_q\": a, \"block_k\": b}, got %s", jsonpath_type(fl));
    static const char *const fkeys[] = {"block_q", "block_k", NULL};
    if (!jsonpath_check_keys(c, fl, "model.flash", fkeys)) return false;
    if (!jsonpath_int(c, fl, "model.flash", "block_q", &cfg->flash_block_q, 1, LESSON_MAX_LEN, true, 0)) return false;
    if (!jsonpath_int(c, fl, "model.flash", "block_k", &cfg->flash_block_k, 1, LESSON_MAX_LEN, true, 0)) return false;
    if (cfg->attn_sinks)
        return jsonpath_fail(c, "model.attn_sinks", "FlashAttention's tiles are drawn without sink logits; expected "
                             "no model.flash with it (the standard pass and decoding take the sinks)");
    return true;
}

static bool flash_unset(const AttnConfig *cfg) { return cfg->flash_block_k <= 0; }

static void write_flash(FILE *f, const AttnConfig *c)
{
    fprintf(f, "{\"block_q\": %d, \"block_k\": %d}", c->flash_block_q, c->flash_block_k);
}

static bool check_scale(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    const float q = cfg->query_pre_attn_scalar;
    if (q > 0.0f && cJSON_GetObjectItemCaseSensitive(m, "scale") && cfg->scale != sqrtf(q))
        return jsonpath_fail(c, "model.scale", "%g, but model.query_pre_attn_scalar %g makes the scale √%g = %g; expected "
                             "that or no scale", (double)cfg->scale, (double)q, (double)q, (double)sqrtf(q));
    return true;
}

// --- the attention of 2026's model cards (mech.c) ---

// Decoding token by token (decode.c) projects, turns and scores each token itself, without these.
static bool refuse_decode(JsonCtx *c, const char *path, bool on, const AttnConfig *cfg)
{
    if (on && cfg->decode)
        return jsonpath_fail(c, path, "the K/V-cache decoding loop does not compute it; expected no model.decode with it");
    return true;
}

static bool check_qk_norm(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->qk_norm && cfg->kv_lora_rank > 0)
        return jsonpath_fail(c, "model.qk_norm", "multi-head latent attention normalises its latents, not q and k; "
                             "expected no qk_norm with model.kv_lora_rank");
    if (!refuse_decode(c, "model.kv_lora_rank", cfg->kv_lora_rank > 0, cfg)) return false;
    return refuse_decode(c, "model.qk_norm", cfg->qk_norm, cfg);
}

static bool check_softcap(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (cfg->softcap > 0.0f && cfg->flash_block_k > 0)
        return jsonpath_fail(c, "model.attn_logit_softcapping", "FlashAttention's tiles are drawn without the cap; "
                             "expected no model.flash with it");
    return refuse_decode(c, "model.attn_logit_softcapping", cfg->softcap > 0.0f, cfg);
}

static bool check_attn_gate(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    return refuse_decode(c, "model.attn_gate", cfg->attn_gate, cfg);
}

// Hugging Face's config.layer_types: ["sliding_attention", "sliding_attention", "full_attention"],
// repeated over the layers when shorter (Gemma 3's 5:1 is five sliding, one full).
static bool read_layer_types(JsonCtx *c, const cJSON *j, AttnConfig *cfg)
{
    const char *P = "model.layer_types";
    const int NL = cfg->n_layers > 1 ? cfg->n_layers : 1;
    cfg->n_layer_types = 0;
    if (!j || cJSON_IsNull(j)) return true;
    if (NL < 2)
        return jsonpath_fail(c, P, "a pattern of sliding, full and linear layers; expected model.n_layers 2 or more with it");
    const int n = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 0;
    if (n < 1 || n > NL) {
        char got[32];
        if (cJSON_IsArray(j)) snprintf(got, sizeof got, "%d", n);
        else snprintf(got, sizeof got, "%s", jsonpath_type(j));
        return jsonpath_fail(c, P, "expected an array of 1 to %d layer types (model.n_layers; a shorter pattern repeats), "
                             "got %s", NL, got);
    }
    char expected[160];
    attn_names_expected(&ATTN_NAMES_LAYER_TYPE, expected, sizeof expected);
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        const int t = attn_names_find(&ATTN_NAMES_LAYER_TYPE, cJSON_IsString(e) ? e->valuestring : NULL);
        if (t < 0) {
            char p[JSONPATH_MAX];
            jsonpath_index(p, P, i);
            if (cJSON_IsString(e)) return jsonpath_fail(c, p, "expected %s, got \"%.40s\"", expected, e->valuestring);
            return jsonpath_fail(c, p, "expected %s, got %s", expected, jsonpath_type(e));
        }
        cfg->layer_types[i] = (unsigned char)t;
    }
    cfg->n_layer_types = n;
    if (cfg->kv_lora_rank > 0)
        return jsonpath_fail(c, P, "DeepSeek's latent attention layers are all full; expected no layer_types with "
                             "model.kv_lora_rank");
    return refuse_decode(c, P, true, cfg);
}

static bool layer_types_unset(const AttnConfig *cfg) { return cfg->n_layer_types == 0; }

static void write_layer_types(FILE *f, const AttnConfig *cfg)
{
    for (int i = 0; i < cfg->n_layer_types; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "[", attn_names_name(&ATTN_NAMES_LAYER_TYPE, cfg->layer_types[i]));
    fputc(']', f);
}

static bool any_sliding(const AttnConfig *cfg)
{
    for (int i = 0; i < cfg->n_layer_types; i++)
        if (cfg->layer_types[i] == LAYER_SLIDING) return true;
    return false;
}

static bool check_sliding_window(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    if (any_sliding(cfg) && cfg->sliding_window == 0)
        return jsonpath_fail(c, "model.sliding_window", "missing; model.layer_types has sliding layers: expected their "
                             "window W (query i sees keys i − W < j ≤ i)");
    if (!any_sliding(cfg) && cfg->sliding_window > 0)
        return jsonpath_fail(c, "model.sliding_window", "no layer of model.layer_types is \"sliding_attention\"; expected "
                             "one with it");
    return true;
}

static bool check_rope_local(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    const char *P = "model.rope_local_base_freq";
    if (cfg->rope_local_theta <= 0.0f) return true;
    if (cfg->rope == ROPE_NONE) return jsonpath_fail(c, P, "the sliding layers' RoPE base; expected model.rope with it");
    if (!any_sliding(cfg))
        return jsonpath_fail(c, P, "the sliding layers' RoPE base; expected a \"sliding_attention\" in model.layer_types");
    if (cfg->rope_scale.type == ROPE_SCALE_YARN)
        return jsonpath_fail(c, P, "YaRN's attention factor would turn the sliding layers too; expected another "
                             "model.rope.scaling with it");
    return true;
}

// --- linear attention and Gated DeltaNet (delta.c) ---

static bool any_linear(const AttnConfig *cfg)
{
    for (int i = 0; i < cfg->n_layer_types; i++)
        if (cfg->layer_types[i] == LAYER_LINEAR) return true;
    return false;
}

// Read after linear_rule and linear_form: a "linear_attention" layer needs no mechanism of the
// scores (tiles, grouped K/V heads); its state is drawn whole.
static bool check_linear(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    const char *P = "model.layer_types";
    (void)m; // (linear_rule and linear_form alone change nothing, as the conventions: no linear layer reads them)
    if (!any_linear(cfg)) return true;
    if (cfg->flash_block_k > 0)
        return jsonpath_fail(c, P, "a linear layer has no scores for FlashAttention's tiles; expected no model.flash "
                             "with a \"linear_attention\" layer");
    if (cfg->n_kv_heads != cfg->n_heads)
        return jsonpath_fail(c, P, "a linear layer keeps one state per head, from its own k and v; expected no "
                             "model.n_kv_heads with a \"linear_attention\" layer");
    if (cfg->d_k * cfg->d_v > 4096)
        return jsonpath_fail(c, P, "a linear layer's state is d_k × d_v = %d × %d per head; expected at most 4096 "
                             "numbers (it is drawn whole, token by token)", cfg->d_k, cfg->d_v);
    return true; // (DeepSeek's, decode and the mask: read_layer_types and lesson.c)
}

// --- DeepSeek's attention (mla.c) ---

// Multi-head latent attention: read after kv_lora_rank, q_lora_rank and qk_rope_head_dim.
static bool check_mla(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    const int r = cfg->kv_lora_rank, rq = cfg->q_lora_rank, dr = cfg->qk_rope_head_dim, C = cfg->d_model;
    if (r == 0) {
        if (rq > 0)
            return jsonpath_fail(c, "model.q_lora_rank", "query compression is multi-head latent attention's; expected "
                                 "model.kv_lora_rank with it");
        if (dr > 0)
            return jsonpath_fail(c, "model.qk_rope_head_dim", "the decoupled RoPE part is multi-head latent attention's; "
                                 "expected model.kv_lora_rank with it");
        return true;
    }
    if (r > C)
        return jsonpath_fail(c, "model.kv_lora_rank", "%d is larger than d_model %d; expected a compression of rank 1 to %d",
                             r, C, C);
    if (rq > C)
        return jsonpath_fail(c, "model.q_lora_rank", "%d is larger than d_model %d; expected a compression of rank 1 to %d "
                             "(or none)", rq, C, C);
    if (dr == 0)
        return jsonpath_fail(c, "model.qk_rope_head_dim", "missing; multi-head latent attention's decoupled RoPE part: "
                             "expected an even number of dimensions from 2 to d_k − 1 = %d", cfg->d_k - 1);
    if (dr % 2 != 0 || dr >= cfg->d_k)
        return jsonpath_fail(c, "model.qk_rope_head_dim", "expected an even number of turned dimensions from 2 to d_k − 1 = "
                             "%d (d_k = qk_nope_head_dim + qk_rope_head_dim), got %d", cfg->d_k - 1, dr);
    if (cfg->qkv_bias)
        return jsonpath_fail(c, "model.qkv_bias", "multi-head latent attention's projections have no bias (DeepSeek's "
                             "attention_bias); expected qkv_bias false with model.kv_lora_rank");
    if (cfg->n_kv_heads != cfg->n_heads)
        return jsonpath_fail(c, "model.n_kv_heads", "every head's K and V come up from the one latent c_KV; expected no "
                             "n_kv_heads with model.kv_lora_rank");
    return true; // (model.rope with it: read_rope; decode and qk_norm: check_qk_norm)
}

// DeepSeek sparse attention: read after index_n_heads, index_head_dim and index_topk (the top-k
// against the keys' length: lesson.c).
static bool check_dsa(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    const bool h = cfg->index_n_heads > 0, d = cfg->index_head_dim > 0, k = cfg->index_topk > 0;
    if (!h && !d && !k) return true;
    if (!h || !d || !k)
        return jsonpath_fail(c, !h ? "model.index_n_heads" : !d ? "model.index_head_dim" : "model.index_topk",
                             "missing; the lightning indexer needs index_n_heads, index_head_dim and index_topk together");
    if (cfg->flash_block_k > 0)
        return jsonpath_fail(c, "model.index_topk", "FlashAttention's tiles are drawn without the indexer's selection; "
                             "expected no model.flash with it");
    if (cfg->n_layer_types > 0)
        return jsonpath_fail(c, "model.index_topk", "the indexer selects within the causal mask, not a sliding layer's; "
                             "expected no model.layer_types with it");
    return refuse_decode(c, "model.index_topk", true, cfg);
}

bool model_keys_check_input(JsonCtx *c, const AttnConfig *cfg, const AttnInputs *in, int len_k)
{
    if (cfg->decoder_layers > 0 && (in->key_is_query || !in->value_is_key))
        return jsonpath_fail(c, in->key_is_query ? "input.key" : "input.value", in->key_is_query
                             ? "missing; an encoder–decoder reads the source text from input.key (and the target from input.query)"
                             : "the encoder's output is both the keys and the values of the cross-attention; expected no input.value");
    if (cfg->decoder_layers > 0 && in->mask_kind != MASK_NONE)
        return jsonpath_fail(c, "mask", "the decoder's self-attention is causal and the encoder's and the cross-attention "
                             "see every source token; expected no mask with model.decoder_layers");
    if (cfg->kv_lora_rank > 0 && !(in->key_is_query && in->value_is_key))
        return jsonpath_fail(c, "model.kv_lora_rank", "K and V both come up from the one latent c_KV of the sequence; "
                             "expected self-attention (no separate input.key or input.value)");
    if (cfg->index_topk > len_k)
        return jsonpath_fail(c, "model.index_topk", "%d is more keys than the input has (%d); expected 1 to %d",
                             cfg->index_topk, len_k, len_k);
    if (cfg->index_topk > 0 && in->mask_kind == MASK_NONE)
        return jsonpath_fail(c, "model.index_topk", "the indexer chooses among the keys a mask allows; expected a "
                             "mask (DeepSeek's: \"causal\")");
    return true;
}

// An encoder–decoder (nn.Transformer): read last, so every other key is known. Its decoder layers are
// two blocks each, after an encoder of one block or more; nn.Transformer's blocks have LayerNorm, the
// residuals and a feed-forward, and none of the mechanisms of one sequence (positions, caches, …).
static bool check_decoder_layers(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    (void)m;
    const int D = cfg->decoder_layers, N = cfg->n_layers > 1 ? cfg->n_layers : 1;
    if (D == 0) return true;
    if (N < 2 * D + 1)
        return jsonpath_fail(c, "model.decoder_layers", "%d decoder layer%s %d blocks (self-attention, then cross-attention) "
                             "and need%s an encoder before them; expected model.n_layers of %d or more (the encoder's "
                             "blocks + 2·decoder_layers), got %d", D, D > 1 ? "s are" : " is", 2 * D, D > 1 ? "" : "s",
                             2 * D + 1, N);
    static const struct { int mk; const char *why; } OFF[] = {
        {MK_ROPE, "positions are the embeddings' (nn.Transformer adds none)"}, {MK_ALIBI, "positions are the embeddings'"},
        {MK_DECODE, "the decoder is shown as a whole"}, {MK_FLASH, "its attention is shown untiled"},
        {MK_QK_NORM, "nn.Transformer has none"}, {MK_SOFTCAP, "nn.Transformer has none"}, {MK_ATTN_GATE, "nn.Transformer has none"},
        {MK_LAYER_TYPES, "every block sees all it may"}, {MK_KV_LORA_RANK, "nn.Transformer has none"},
        {MK_INDEX_TOPK, "nn.Transformer has none"}, {MK_ATTN_SINKS, "nn.Transformer has none"},
        {MK_QUERY_PRE_ATTN_SCALAR, "nn.Transformer scales by √d_k"}};
    for (size_t i = 0; i < sizeof OFF / sizeof OFF[0]; i++) {
        const ModelKey *r = &MODEL_KEYS[OFF[i].mk];
        const char *f = (const char *)cfg + r->offset;
        bool set = r->type == MK_FLOAT ? *(const float *)f != 0.0f : r->type == MK_BOOL ? *(const bool *)f : *(const int *)f != 0;
        if (set)
            return jsonpath_fail(c, "model.decoder_layers", "an encoder–decoder as nn.Transformer computes it: %s; expected "
                                 "no model.%s with it", OFF[i].why, r->name);
    }
    if (cfg->n_kv_heads != cfg->n_heads || cfg->norm != NORM_LAYER || !cfg->residual_norm || cfg->ffn_hidden == 0 ||
        cfg->ffn_act == FFN_SWIGLU)
        return jsonpath_fail(c, "model.decoder_layers", "nn.Transformer's layers have every head's own K and V, LayerNorm, "
                             "residual_norm true and a feed-forward of relu or gelu; expected no n_kv_heads, norm \"layer\", "
                             "residual_norm true, ffn_hidden above 0 and no swiglu with it");
    return true;
}

typedef struct ModelKeyHooks {
    const AttnNames *names;                                  // ENUM: its names
    double (*dflt)(const AttnConfig *cfg);                   // a default read from the keys before
    bool (*check)(JsonCtx *c, const cJSON *m, AttnConfig *cfg); // after the value: checks across keys
    bool (*read)(JsonCtx *c, const cJSON *j, AttnConfig *cfg);  // OBJECT (j NULL when absent)
    bool (*unset)(const AttnConfig *cfg);                    // OBJECT: nothing to write
    void (*write)(FILE *f, const AttnConfig *cfg);           // OBJECT: its value
    const char *expect;      // FLOAT: the reader's "expected …, got %g" when out of range
    const char *edit_expect; // FLOAT, editable: --set's "expected …, got \"TEXT\""
    const char *word;        // FLOAT: a word for a value in --set ("sqrt_dk": the default)
    bool word_in_file;       // … and in the file, as word_value ("-inf")
    float word_value;
    bool finfo_min;          // FLOAT: "finfo_min" in --set is −3.4028235e38 (torch.finfo(torch.float32).min)
} ModelKeyHooks;

static const ModelKeyHooks HOOKS[MK_COUNT] = {
    [MK_N_HEADS] = {.check = check_n_heads},
    [MK_D_K] = {.dflt = dflt_d_k},
    [MK_D_V] = {.dflt = dflt_d_v, .check = check_d_v},
    [MK_SCALE] = {.dflt = dflt_scale, .expect = "a positive divisor (default sqrt(d_k))",
                  .edit_expect = "a positive float32 divisor or sqrt_dk", .word = "sqrt_dk", .check = check_scale},
    [MK_QUERY_PRE_ATTN_SCALAR] = {.expect = "a positive number (Gemma: the scale is its square root)"},
    [MK_MASK_FILL] = {.edit_expect = "a float32 number, -inf or finfo_min", .word = "-inf", .word_in_file = true,
                      .word_value = -INFINITY, .finfo_min = true},
    [MK_NORM_EPS] = {.expect = "a small positive number", .edit_expect = "a small positive float32 number"},
    [MK_NORM] = {.names = &ATTN_NAMES_NORM, .check = check_norm},
    [MK_NORM_FIRST] = {.check = check_norm_first},
    [MK_ACTIVATION] = {.names = &ATTN_NAMES_FFN_ACT},
    [MK_N_KV_HEADS] = {.dflt = dflt_n_kv_heads, .check = check_n_kv_heads},
    [MK_ROPE] = {.read = read_rope, .unset = rope_unset, .write = write_rope},
    [MK_ALIBI] = {.check = check_alibi},
    [MK_FLASH] = {.read = read_flash, .unset = flash_unset, .write = write_flash},
    [MK_QK_NORM] = {.check = check_qk_norm},
    [MK_SOFTCAP] = {.expect = "a positive cap c (scores become c·tanh(s / c); Gemma 2: 50)", .check = check_softcap},
    [MK_ATTN_GATE] = {.check = check_attn_gate},
    [MK_LAYER_TYPES] = {.read = read_layer_types, .unset = layer_types_unset, .write = write_layer_types},
    [MK_SLIDING_WINDOW] = {.check = check_sliding_window},
    [MK_ROPE_LOCAL_BASE_FREQ] = {.expect = "a RoPE base above 1 (Gemma 3: 10000)", .check = check_rope_local},
    [MK_QK_ROPE_HEAD_DIM] = {.check = check_mla},
    [MK_INDEX_TOPK] = {.check = check_dsa, .edit_expect = "a whole number of keys from 1 to 1024, or off", .word = "off"},
    [MK_POSITIONS] = {.names = &ATTN_NAMES_POS, .check = check_positions},
    [MK_MAX_POSITIONS] = {.check = check_max_positions},
    [MK_TEMPERATURE] = {.expect = "a number from 0.001 to 1000", .edit_expect = "a temperature from 0.001 to 1000"},
    [MK_TOP_K] = {.edit_expect = "a whole number of tokens from 1 to 1024, or off", .word = "off"},
    [MK_WINDOW_CONVENTION] = {.names = &ATTN_NAMES_WINDOW_CONV, .edit_expect = "\"inclusive\" or \"flash\""},
    [MK_MASKED_ROWS] = {.names = &ATTN_NAMES_MASKED_ROWS, .edit_expect = "\"softmax\" or \"zero\""},
    [MK_ALIBI_FORM] = {.names = &ATTN_NAMES_ALIBI_FORM, .edit_expect = "\"relative\" or \"key\""},
    [MK_FLASH_ACCUMULATOR] = {.names = &ATTN_NAMES_FLASH_ACC, .edit_expect = "\"fa2\" or \"fa1\""},
    [MK_STREAMING_POSITIONS] = {.names = &ATTN_NAMES_STREAM_POS, .edit_expect = "\"text\" or \"cache\""},
    [MK_DECODER_LAYERS] = {.check = check_decoder_layers},
    [MK_LINEAR_RULE] = {.names = &ATTN_NAMES_LINEAR_RULE},
    [MK_LINEAR_FORM] = {.names = &ATTN_NAMES_LINEAR_FORM, .edit_expect = "\"recurrent\" or \"parallel\"",
                        .check = check_linear},
    [MK_TOP_P] = {.expect = "a probability above 0 and at most 1",
                  .edit_expect = "a probability above 0 and at most 1 (1: off)"},
};

// --- reading ---------------------------------------------------------------------

static double dflt_of(const AttnConfig *cfg, int k)
{
    return HOOKS[k].dflt ? HOOKS[k].dflt(cfg) : (double)MODEL_KEYS[k].dflt;
}

static bool read_float(JsonCtx *c, const cJSON *j, const char *p, int k, AttnConfig *cfg)
{
    const ModelKeyHooks *h = &HOOKS[k];
    float v = (float)dflt_of(cfg, k);
    if (j && h->word_in_file && cJSON_IsString(j)) {
        if (strcmp(j->valuestring, h->word) != 0)
            return jsonpath_fail(c, p, "expected a number or \"%s\", got \"%.40s\"", h->word, j->valuestring);
        v = h->word_value;
    } else if (j) {
        if (!jsonpath_number(c, j, p, &v)) return false;
        if (!model_key_in_range(k, v)) return jsonpath_fail(c, p, "expected %s, got %g", h->expect, (double)v);
    }
    model_key_set(cfg, k, v);
    return true;
}

static bool read_enum(JsonCtx *c, const cJSON *j, const char *p, int k, int *out)
{
    const AttnNames *e = HOOKS[k].names;
    *out = (int)MODEL_KEYS[k].dflt;
    if (!j) return true;
    const int v = attn_names_find(e, cJSON_IsString(j) ? j->valuestring : NULL);
    if (v >= 0) return *out = v, true;
    char expected[160];
    attn_names_expected(e, expected, sizeof expected);
    if (cJSON_IsString(j)) return jsonpath_fail(c, p, "expected %s, got \"%.40s\"", expected, j->valuestring);
    return jsonpath_fail(c, p, "expected %s, got %s", expected, jsonpath_type(j));
}

static bool read_key(JsonCtx *c, const cJSON *m, int k, AttnConfig *cfg)
{
    const ModelKey *r = &MODEL_KEYS[k];
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, r->name);
    char p[JSONPATH_MAX];
    jsonpath_key(p, "model", r->name);
    if ((r->flags & MK_LM) && cfg->vocab_size == 0) // (its field stays 0)
        return !j || jsonpath_fail(c, p, "a language model's; expected a top-level \"vocab\" with it");
    void *field = (char *)cfg + r->offset;
    bool ok = false;
    switch (r->type) {
    case MK_INT:
        ok = jsonpath_int(c, m, "model", r->name, field, (int)r->lo, (int)r->hi, r->flags & MK_REQUIRED, (int)dflt_of(cfg, k));
        break;
    case MK_BOOL: ok = jsonpath_bool(c, m, "model", r->name, field, r->dflt != 0.0f); break;
    case MK_FLOAT: ok = read_float(c, j, p, k, cfg); break;
    case MK_ENUM: ok = read_enum(c, j, p, k, field); break;
    case MK_OBJECT: ok = HOOKS[k].read(c, j, cfg); break;
    }
    if (!ok) return false;
    if (j && (r->flags & MK_FFN) && cfg->ffn_hidden == 0)
        return jsonpath_fail(c, p, "there is no feed-forward block; expected ffn_hidden above 0 with it");
    return !HOOKS[k].check || HOOKS[k].check(c, m, cfg);
}

bool model_keys_read(JsonCtx *c, const cJSON *m, AttnConfig *cfg)
{
    const char *P = "model";
    if (!m) return jsonpath_fail(c, P, "missing; expected an object with d_model and n_heads");
    if (!cJSON_IsObject(m)) return jsonpath_fail(c, P, "expected an object, got %s", jsonpath_type(m));
    static const char *const keys[MK_COUNT + 1] = {
#define MODEL_KEY_NAME(id, json, ...) json,
        MODEL_KEY_TABLE(MODEL_KEY_NAME)
#undef MODEL_KEY_NAME
        NULL};
    if (!jsonpath_check_keys(c, m, P, keys)) return false;
    for (int k = 0; k < MK_COUNT; k++)
        if (!read_key(c, m, k, cfg)) return false;
    return true;
}

// --- writing ---------------------------------------------------------------------

// Whether key k of cfg is written: always, or when set and not its default.
static bool written(const AttnConfig *cfg, int k, bool lm)
{
    const ModelKey *r = &MODEL_KEYS[k];
    if ((r->flags & MK_LM) && !lm) return false;
    if ((r->flags & MK_FFN) && cfg->ffn_hidden <= 0) return false;
    // the indexer switched off (--set model.index_topk=off): the lesson is full attention, its weights unused
    if ((k == MK_INDEX_N_HEADS || k == MK_INDEX_HEAD_DIM) && cfg->index_topk == 0) return false;
    if (r->type == MK_OBJECT) return !HOOKS[k].unset(cfg);
    if (r->flags & (MK_ALWAYS | MK_REQUIRED)) return true;
    const void *field = (const char *)cfg + r->offset;
    switch (r->type) {
    case MK_INT: {
        const int v = *(const int *)field;
        return v >= (int)r->lo && v != (int)dflt_of(cfg, k);
    }
    case MK_ENUM: return *(const int *)field != (int)dflt_of(cfg, k);
    case MK_BOOL: return *(const bool *)field != (dflt_of(cfg, k) != 0.0);
    case MK_FLOAT:
        // query_pre_attn_scalar defines the scale: not written once an edit (--set scale) changed it
        if (k == MK_QUERY_PRE_ATTN_SCALAR && cfg->scale != sqrtf(cfg->query_pre_attn_scalar)) return false;
        return model_key_get(cfg, k) != (float)dflt_of(cfg, k);
    case MK_OBJECT: break;
    }
    return true;
}

void model_keys_write(FILE *f, const AttnConfig *cfg, bool lm)
{
    bool first = true;
    for (int k = 0; k < MK_COUNT; k++) {
        if (!written(cfg, k, lm)) continue;
        const ModelKey *r = &MODEL_KEYS[k];
        fprintf(f, "%s\"%s\": ", first ? "" : r->flags & MK_NEWLINE ? ",\n            " : ", ", r->name);
        first = false;
        const void *field = (const char *)cfg + r->offset;
        switch (r->type) {
        case MK_INT: fprintf(f, "%d", *(const int *)field); break;
        case MK_BOOL: fputs(*(const bool *)field ? "true" : "false", f); break;
        case MK_FLOAT: json_write_float(f, model_key_get(cfg, k)); break; // -inf as the string "-inf"
        case MK_ENUM: fprintf(f, "\"%s\"", attn_names_name(HOOKS[k].names, *(const int *)field)); break;
        case MK_OBJECT: HOOKS[k].write(f, cfg); break;
        }
    }
}

// --- the edits -------------------------------------------------------------------

int model_key_find(const char *name)
{
    for (int k = 0; name && k < MK_COUNT; k++)
        if (strcmp(MODEL_KEYS[k].name, name) == 0) return k;
    return -1;
}

float model_key_get(const AttnConfig *cfg, int k)
{
    if (MODEL_KEYS[k].type == MK_INT || MODEL_KEYS[k].type == MK_ENUM) {
        int i;
        memcpy(&i, (const char *)cfg + MODEL_KEYS[k].offset, sizeof i);
        return (float)i;
    }
    assert(MODEL_KEYS[k].type == MK_FLOAT);
    float v;
    memcpy(&v, (const char *)cfg + MODEL_KEYS[k].offset, sizeof v);
    return v;
}

void model_key_set(AttnConfig *cfg, int k, float v)
{
    if (MODEL_KEYS[k].type == MK_INT || MODEL_KEYS[k].type == MK_ENUM) {
        const int i = (int)v;
        memcpy((char *)cfg + MODEL_KEYS[k].offset, &i, sizeof i);
        return;
    }
    assert(MODEL_KEYS[k].type == MK_FLOAT);
    memcpy((char *)cfg + MODEL_KEYS[k].offset, &v, sizeof v);
}

bool model_key_in_range(int k, float v)
{
    const ModelKey *r = &MODEL_KEYS[k];
    if (r->type == MK_ENUM) return v == floorf(v) && v >= 0 && v < (float)HOOKS[k].names->n && HOOKS[k].names->names[(int)v];
    if (r->type == MK_INT && v != floorf(v)) return false;
    return (r->flags & MK_ABOVE ? v > r->lo : v >= r->lo) && v <= r->hi;
}

bool model_key_word(const AttnConfig *cfg, int k, const char *text, float *v)
{
    const ModelKeyHooks *h = &HOOKS[k];
    if (MODEL_KEYS[k].type == MK_ENUM) {
        const int e = attn_names_find(h->names, text);
        if (e >= 0) *v = (float)e;
        return e >= 0;
    }
    if (h->finfo_min && strcmp(text, "finfo_min") == 0) return *v = -FLT_MAX, true;
    if (!h->word || strcmp(text, h->word) != 0) return false;
    *v = h->word_in_file ? h->word_value : (float)dflt_of(cfg, k);
    return true;
}

const char *model_key_edit_expect(int k)
{
    return HOOKS[k].edit_expect ? HOOKS[k].edit_expect : "a finite float32 number";
}

const AttnNames *model_key_names(int k)
{
    return HOOKS[k].names;
}
