// edit.c — the what-if engine (see edit.h).
#include "edit.h"

#include <assert.h>
#include "attn_names.h"
#include "bpe.h"
#include "utf8.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- names -----------------------------------------------------------------------

const char *lesson_tensor_name(int t)
{
    static char names[LESSON_MAX_LAYERS * LESSON_N_WEIGHTS][40];
    switch (t) {
    case LT_QUERY: return "input.query";
    case LT_KEY: return "input.key";
    case LT_VALUE: return "input.value";
    case LT_MASK: return "mask";
    default: break;
    }
    if (t < LT_WEIGHT0 || t >= LT_COUNT) return NULL;
    char *s = names[t - LT_WEIGHT0];
    // layer 0: "weights.w_q" (also in a lesson of several layers); layer l: "weights.layers[l].w_q"
    const int l = (t - LT_WEIGHT0) / LESSON_N_WEIGHTS, k = (t - LT_WEIGHT0) % LESSON_N_WEIGHTS;
    if (!s[0] && l == 0) snprintf(s, sizeof names[0], "weights.%s", lesson_weight_name(k));
    if (!s[0] && l > 0) snprintf(s, sizeof names[0], "weights.layers[%d].%s", l, lesson_weight_name(k));
    return s;
}

Tensor *lesson_tensor(Lesson *ls, int t)
{
    switch (t) {
    case LT_QUERY: return &ls->in.query;
    case LT_KEY: return &ls->in.key;
    case LT_VALUE: return &ls->in.value;
    case LT_MASK: return &ls->in.mask;
    default: return lesson_weight(&ls->w[(t - LT_WEIGHT0) / LESSON_N_WEIGHTS], (t - LT_WEIGHT0) % LESSON_N_WEIGHTS);
    }
}

int lesson_tensor_find(const char *name)
{
    for (int t = 0; t < LT_COUNT; t++) {
        if (strcmp(lesson_tensor_name(t), name) == 0) return t;
        if (t >= LT_WEIGHT0 && t < LT_WEIGHT0 + LESSON_N_WEIGHTS) {
            char alias[48]; // layer 0 as the file of several layers writes it
            snprintf(alias, sizeof alias, "weights.layers[0].%s", lesson_weight_name(t - LT_WEIGHT0));
            if (strcmp(lesson_weight_name(t - LT_WEIGHT0), name) == 0 || strcmp(alias, name) == 0) return t;
        }
    }
    return -1;
}

// The switch that a missing tensor depends on, for the error message.
static const char *missing_because(const Lesson *ls, int t)
{
    if (t >= LT_WEIGHT0 && (t - LT_WEIGHT0) / LESSON_N_WEIGHTS >= (ls->cfg.n_layers > 1 ? ls->cfg.n_layers : 1))
        return "that layer is past model.n_layers";
    switch ((t - LT_WEIGHT0) % LESSON_N_WEIGHTS) {
    case 1: case 3: case 5: return "model.qkv_bias is false";
    case 7: return "model.out_bias is false";
    case 8: case 10: case 14: return "model.ffn_hidden is 0";
    case 9: case 11: return "model.ffn_hidden is 0 or model.ffn_bias is false";
    case 15: return "model.ffn_hidden is 0 or model.norm is \"rms\" (no β)";
    case 12: return "model.residual_norm is false";
    case 13: return "model.residual_norm is false or model.norm is \"rms\" (no β)";
    case 16: return "model.activation is not \"swiglu\"";
    case 17: return "model.activation is not \"swiglu\" or model.ffn_bias is false";
    case 18: return "model.attn_sinks is false";
    default: return "it is not part of this lesson";
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static bool
edit_fail(char *err, size_t n, const char *arg, const char *fmt, ...)
{
    char msg[EDIT_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    // the argument is quoted as typed, cut (at a character boundary) so that the reason
    // always fits the line
    int cut = 120;
    size_t len = strlen(arg);
    if (len > (size_t)cut)
        cut = (int)utf8_floor(arg, (size_t)cut);
    if (n) snprintf(err, n, "%.*s%s: %s", cut, arg, len > 120 ? "..." : "", msg);
    return false;
}

// ---- the model keys' edits (model_keys.h's EDITABLE rows) ---------------------------

#define EDIT_KEY_OF_EDITABLE(id) [EDIT_##id] = MK_##id + 1,
#define EDIT_KEY_OF_FIXED(id)
#define EDIT_KEY_OF(id, json, field, type, lo, hi, dflt, flags, ed) EDIT_KEY_OF_##ed(id)
static const int KEY_OF_KIND[EDIT_KEY_PADDING + 1 + MK_COUNT] = {MODEL_KEY_TABLE(EDIT_KEY_OF)}; // (+ 1: 0 is none)
#undef EDIT_KEY_OF

int edit_model_key(EditKind kind)
{
    return (unsigned)kind < sizeof KEY_OF_KIND / sizeof KEY_OF_KIND[0] ? KEY_OF_KIND[kind] - 1 : -1;
}

static EditKind kind_of_model_key(int k)
{
    for (int kind = 0; kind < (int)(sizeof KEY_OF_KIND / sizeof KEY_OF_KIND[0]); kind++)
        if (KEY_OF_KIND[kind] == k + 1) return (EditKind)kind;
    assert(!"an editable model key has its kind");
    return EDIT_ELEMENT;
}

// ---- parsing ---------------------------------------------------------------------

// A float32 value: a decimal number that rounds to a finite float32.
static bool parse_float(const char *s, float *out)
{
    if (!*s) return false;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789+-.eE", *p)) return false;   // no "nan", "inf", hex, spaces
    char *end;
    errno = 0;
    // strtof: correctly rounded to float32 in one step (strtod then a cast rounds
    // twice: decimals just under FLT_MAX + 2^103 became infinity)
    float f = strtof(s, &end);
    if (*end || end == s) return false;
    if (!isfinite(f)) return false;
    *out = f;
    return true;
}

static void shape_text(const Tensor *t, char *buf, size_t n)
{
    tensor_shape_str(t, buf, n);
}

static void fmt_value(char *buf, size_t n, float v)
{
    if (isinf(v))
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, n, "%.9g", (double)v);
}

// Writes the canonical text of e ("weights.w_q[3,1]=-0.25") from ls's shapes.
static void edit_text(const Lesson *ls, Edit *e)
{
    char v[40];
    fmt_value(v, sizeof v, e->value);
    switch (e->kind) {
    case EDIT_ELEMENT: {
        const Tensor *t = lesson_tensor((Lesson *)ls, e->tensor);
        // the mask is (B, Lq, Lk) even before the lesson has one
        Tensor mask_shape = {.rank = 3, .shape = {ls->batch, ls->len_q, ls->len_k, 1},
                             .size = (size_t)ls->batch * ls->len_q * ls->len_k};
        if (e->tensor == LT_MASK) t = &mask_shape;
        char idx[96] = "";
        size_t rest = e->index, stride = t->size;
        int k = 0;
        for (int d = 0; d < t->rank && d < TENSOR_MAX_RANK && k < (int)sizeof idx - 24; d++) {
            stride /= (size_t)t->shape[d];
            k += snprintf(idx + k, sizeof idx - (size_t)k, "%s%zu", d ? "," : "", rest / stride);
            rest %= stride;
        }
        snprintf(e->text, sizeof e->text, "%s[%s]=%s", lesson_tensor_name(e->tensor), idx, v);
        break;
    }
    case EDIT_FILL: snprintf(e->text, sizeof e->text, "%s=%s", lesson_tensor_name(e->tensor), v); break;
    case EDIT_MASK_KIND: {
        const char *kind = attn_names_name(&ATTN_NAMES_MASK, e->mask_kind);
        snprintf(e->text, sizeof e->text, "mask=%s", kind ? kind : "none");
        break;
    }
    case EDIT_KEY_PADDING:
        snprintf(e->text, sizeof e->text, "mask.key_padding[%zu]=%d", e->index, (int)e->value);
        break;
    default: {
        const int k = edit_model_key(e->kind);
        const char *name = MODEL_KEYS[k].type == MK_ENUM ? attn_names_name(model_key_names(k), (int)e->value) : NULL;
        snprintf(e->text, sizeof e->text, "model.%s=%s", MODEL_KEYS[k].name, name ? name : v);
        break;
    }
    }
}

void edit_element(const Lesson *ls, int t, size_t i, float value, Edit *e)
{
    memset(e, 0, sizeof *e);
    e->kind = EDIT_ELEMENT;
    e->tensor = t;
    e->index = i;
    e->value = value;
    edit_text(ls, e);
}

// "model.scale, model.mask_fill, … and model.temperature": the keys --set may change.
static void editable_keys(char *out, size_t n)
{
    int editable = 0, listed = 0;
    for (int k = 0; k < MK_COUNT; k++) editable += MODEL_KEYS[k].editable;
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < MK_COUNT && used < n; k++) {
        if (!MODEL_KEYS[k].editable) continue;
        const char *sep = listed == 0 ? "" : listed == editable - 1 ? " and " : ", ";
        int w = snprintf(out + used, n - used, "%smodel.%s", sep, MODEL_KEYS[k].name);
        if (w < 0) break;
        used += (size_t)w, listed++;
    }
}

// The value of model key k that text gives: its word ("sqrt_dk", "-inf") or a float32 in range.
static bool model_value(const Lesson *ls, int k, const char *text, float *v)
{
    if (MODEL_KEYS[k].type == MK_ENUM) return model_key_word(&ls->cfg, k, text, v); // its names only
    return model_key_word(&ls->cfg, k, text, v) || (parse_float(text, v) && model_key_in_range(k, *v));
}

void edit_scale(const Lesson *ls, float value, Edit *e)
{
    memset(e, 0, sizeof *e);
    e->kind = EDIT_SCALE;
    e->value = value;
    edit_text(ls, e);
}

void edit_key(const Edit *e, char *buf, size_t n)
{
    const char *eq = strchr(e->text, '='); // the canonical text is KEY=VALUE, the key has no '='
    size_t k = eq ? (size_t)(eq - e->text) : strlen(e->text);
    if (n) snprintf(buf, n, "%.*s", (int)k, e->text);
}

bool edit_value(const Lesson *ls, Edit *e, const char *text, char *err, size_t n)
{
    char arg[EDIT_TEXT_MAX + 64], key[EDIT_TEXT_MAX];
    edit_key(e, key, sizeof key);
    snprintf(arg, sizeof arg, "%s=%s", key, text); // (for the message only)
    float v;
    const int k = edit_model_key(e->kind);
    if (k >= 0) {
        if (!model_value(ls, k, text, &v))
            return edit_fail(err, n, arg, "expected %s, got \"%.40s\"", model_key_edit_expect(k), text);
    } else {
        assert(e->kind == EDIT_ELEMENT);
        if (!parse_float(text, &v))
            return edit_fail(err, n, arg, "expected a finite float32 number, got \"%.40s\"", text);
        if (e->tensor == LT_MASK && v != 0.0f && v != 1.0f)
            return edit_fail(err, n, arg, "a mask cell is 0 (masked) or 1 (attend), got \"%.40s\"", text);
    }
    e->value = v;
    edit_text(ls, e);
    return true;
}

// Parses "[i,j,k]" (after the key) into idx; returns the count, -1 when malformed.
static int parse_index(const char *s, const char *end, long *idx, int max)
{
    if (s == end) return 0;
    if (*s != '[' || end[-1] != ']' || end - s < 3) return -1; // "[]" is no index
    int n = 0;
    const char *p = s + 1;
    while (p < end - 1) {
        if (n == max) return -1;
        if (*p < '0' || *p > '9') return -1;
        long v = 0;
        while (p < end - 1 && *p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (v > 100000000L) return -2; // beyond every limit of a lesson
            p++;
        }
        idx[n++] = v;
        if (p < end - 1) {
            if (*p != ',') return -1;
            p++;
            if (p == end - 1) return -1;   // trailing comma
        }
    }
    return n;
}

bool edit_parse(const Lesson *ls, const char *arg, Edit *e, char *err, size_t n)
{
    memset(e, 0, sizeof *e);
    const char *eq = strchr(arg, '=');
    if (!eq)
        return edit_fail(err, n, arg, "expected KEY=VALUE, e.g. weights.w_q[3,1]=-0.25 or model.scale=1");
    const char *val = eq + 1;
    // a layer's weight: "weights.layers[l].NAME[...]": its index starts after the name
    const char *from = arg;
    if (strncmp(arg, "weights.layers[", 15) == 0) {
        const char *close = memchr(arg, ']', (size_t)(eq - arg));
        if (close && close[1] == '.') from = close + 2;
    }
    const char *br = memchr(from, '[', (size_t)(eq - from));
    const char *key_end = br ? br : eq;
    char key[48];
    size_t kl = (size_t)(key_end - arg);
    if (kl == 0 || kl >= sizeof key)
        return edit_fail(err, n, arg, "unknown key; expected input.query, input.key, input.value, mask, "
                                      "mask.key_padding, weights.NAME, model.scale, model.mask_fill or model.norm_eps");
    memcpy(key, arg, kl);
    key[kl] = '\0';
    long idx[TENSOR_MAX_RANK + 1];
    int ni = parse_index(key_end, eq, idx, TENSOR_MAX_RANK + 1);
    if (ni == -2) return edit_fail(err, n, arg, "index out of range (larger than any dimension a lesson may have)");
    if (ni < 0)
        return edit_fail(err, n, arg, "malformed index; expected whole numbers like [0,1,2]");

    // switches of the model
    if (strncmp(key, "model.", 6) == 0) {
        if (ni) return edit_fail(err, n, arg, "%s takes no index", key);
        const int k = model_key_find(key + 6);
        if (k < 0 || !MODEL_KEYS[k].editable) {
            char keys[200];
            editable_keys(keys, sizeof keys);
            return edit_fail(err, n, arg, "unknown key; the model's editable switches are %s (sizes cannot change)", keys);
        }
        e->kind = kind_of_model_key(k);
        if ((MODEL_KEYS[k].flags & MK_LM) && !ls->vocab)
            return edit_fail(err, n, arg, "this lesson is not a language model (it has no vocab)");
        if (!model_value(ls, k, val, &e->value))
            return edit_fail(err, n, arg, "expected %s, got \"%.40s\"", model_key_edit_expect(k), val);
        if (k == MK_INDEX_TOPK && ls->cfg.index_n_heads == 0)
            return edit_fail(err, n, arg, "this lesson has no lightning indexer (model.index_n_heads)");
        if (k == MK_INDEX_TOPK && e->value > (float)ls->len_k)
            return edit_fail(err, n, arg, "%g is more keys than the input has; expected 1 to %d or off", (double)e->value,
                             ls->len_k);
        edit_text(ls, e);
        return true;
    }
    if (strcmp(key, "mask.key_padding") == 0) {
        if (ni != 1) return edit_fail(err, n, arg, "expected one index, the batch: mask.key_padding[b]=LENGTH");
        if (idx[0] >= ls->batch)
            return edit_fail(err, n, arg, "batch %ld out of range; the lesson has %d", idx[0], ls->batch);
        float v;
        if (!parse_float(val, &v) || v != floorf(v) || v < 0 || v > (float)ls->len_k)
            return edit_fail(err, n, arg, "expected a key length from 0 to %d, got \"%.40s\"", ls->len_k, val);
        e->kind = EDIT_KEY_PADDING;
        e->index = (size_t)idx[0];
        e->value = v;
        edit_text(ls, e);
        return true;
    }
    int t = lesson_tensor_find(key);
    if (t < 0 || (strncmp(key, "weights.", 8) != 0 && t >= LT_WEIGHT0))
        return edit_fail(err, n, arg, "unknown key; expected input.query, input.key, input.value, mask, "
                                      "mask.key_padding[b], weights.NAME (w_q, b_q, ..., norm_weight), "
                                      "model.scale, model.mask_fill or model.norm_eps");
    const Tensor *tt = lesson_tensor((Lesson *)ls, t);
    if (t == LT_MASK && ni == 0 && !parse_float(val, &e->value)) {
        e->kind = EDIT_MASK_KIND;
        e->mask_kind = strcmp(val, "null") == 0 ? MASK_NONE : attn_names_find(&ATTN_NAMES_MASK, val);
        if (e->mask_kind < 0)
            return edit_fail(err, n, arg, "expected none, causal, key_padding, 0 or 1, got \"%.40s\"", val);
        if (e->mask_kind == MASK_CAUSAL && ls->len_q != ls->len_k)
            return edit_fail(err, n, arg, "a causal mask needs as many queries as keys (%d ≠ %d)",
                             ls->len_q, ls->len_k);
        edit_text(ls, e);
        return true;
    }
    if (t != LT_MASK && !tensor_present(tt))
        return edit_fail(err, n, arg, "this lesson has no %s (%s)", key, missing_because(ls, t));
    if (t == LT_KEY && ls->in.key_is_query)
        return edit_fail(err, n, arg, "the key is the query in this lesson (self-attention); edit input.query");
    if (t == LT_VALUE && (ls->in.value_is_key || ls->in.value_is_query)) {
        bool q = ls->in.key_is_query || ls->in.value_is_query;
        return edit_fail(err, n, arg, "the value is the %s in this lesson; edit %s", q ? "query" : "key",
                         q ? "input.query" : "input.key");
    }
    // the shape: the mask is (B, Lq, Lk) even when the lesson has none yet
    int rank = tt->rank, shape[TENSOR_MAX_RANK];
    memcpy(shape, tt->shape, sizeof shape);
    if (t == LT_MASK) rank = 3, shape[0] = ls->batch, shape[1] = ls->len_q, shape[2] = ls->len_k;
    char sh[64];
    Tensor view = {.rank = rank, .shape = {shape[0], shape[1], shape[2], shape[3]}};
    shape_text(&view, sh, sizeof sh);
    if (ni != 0 && ni != rank)
        return edit_fail(err, n, arg, "%s has shape %s; expected %d indices (or none for every element)",
                         key, sh, rank);
    float v;
    if (!parse_float(val, &v))
        return edit_fail(err, n, arg, "expected a finite float32 number, got \"%.40s\"", val);
    if (t == LT_MASK && v != 0.0f && v != 1.0f)
        return edit_fail(err, n, arg, "a mask cell is 0 (masked) or 1 (attend), got \"%.40s\"", val);
    e->tensor = t;
    e->value = v;
    if (ni == 0) {
        e->kind = EDIT_FILL;
    } else {
        e->kind = EDIT_ELEMENT;
        size_t flat = 0;
        for (int d = 0; d < rank; d++) {
            if (idx[d] >= shape[d])
                return edit_fail(err, n, arg, "index %ld out of range for dimension %d of %s, shape %s",
                                 idx[d], d, key, sh);
            flat = flat * (size_t)shape[d] + (size_t)idx[d];
        }
        e->index = flat;
    }
    edit_text(ls, e);
    return true;
}

// ---- applying --------------------------------------------------------------------

bool lesson_ensure_mask(Lesson *ls)
{
    if (tensor_present(&ls->in.mask)) return true;
    int shape[3] = {ls->batch, ls->len_q, ls->len_k};
    if (!tensor_init(&ls->in.mask, 3, shape)) return false;
    for (size_t k = 0; k < ls->in.mask.size; k++) ls->in.mask.data[k] = 1.0f;
    return true;
}

// Fills the mask with a named kind (lengths: key_padding's per batch).
static void fill_mask(Lesson *ls, MaskKind kind, const int *lengths)
{
    int B = ls->batch, Lq = ls->len_q, Lk = ls->len_k;
    const int off = ls->in.causal_bottom_right ? Lk - Lq : 0; // (a causal edit needs Lq = Lk: 0)
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Lq; i++)
            for (int j = 0; j < Lk; j++) {
                bool on = kind == MASK_CAUSAL ? j <= i + off : kind == MASK_KEY_PADDING ? j < lengths[b] : true;
                ls->in.mask.data[((size_t)b * Lq + i) * Lk + j] = on ? 1.0f : 0.0f;
            }
    ls->in.mask_kind = kind;
}

// The key lengths of a key_padding mask (its first query row of each batch).
static void padding_lengths(const Lesson *ls, int *lengths)
{
    for (int b = 0; b < ls->batch; b++) {
        int len = 0;
        const float *row = ls->in.mask.data + (size_t)b * ls->len_q * ls->len_k;
        while (len < ls->len_k && row[len] != 0.0f) len++;
        lengths[b] = len;
    }
}

// The tensors that are copies of t in this lesson (self-attention), t first.
static int aliases(const Lesson *ls, int t, int *out)
{
    int n = 0;
    out[n++] = t;
    if (t == LT_QUERY && ls->in.key_is_query) {
        out[n++] = LT_KEY;
        if (ls->in.value_is_key) out[n++] = LT_VALUE;
    } else if (t == LT_QUERY && ls->in.value_is_query) {
        out[n++] = LT_VALUE;
    } else if (t == LT_KEY && ls->in.value_is_key) {
        out[n++] = LT_VALUE;
    }
    return n;
}

// A local/global pattern's sliding layers narrow the causal mask (lesson.c): it stays causal.
#define LAYER_TYPES_MASK "model.layer_types: the sliding layers narrow the causal mask: it stays causal"

bool edit_apply(Lesson *ls, const Edit *e, char *err, size_t n)
{
    const int key = edit_model_key(e->kind);
    if (key >= 0) {
        model_key_set(&ls->cfg, key, e->value);
        return true;
    }
    switch (e->kind) {
    case EDIT_MASK_KIND: {
        if (ls->cfg.decode && e->mask_kind != MASK_CAUSAL && (int)ls->in.mask_kind != e->mask_kind)
            return edit_fail(err, n, e->text, "model.decode generates token by token: the mask stays causal "
                                              "or a sliding window");
        if (ls->cfg.n_layer_types > 0 && e->mask_kind != MASK_CAUSAL) return edit_fail(err, n, e->text, LAYER_TYPES_MASK);
        if (ls->cfg.index_topk > 0 && e->mask_kind == MASK_NONE)
            return edit_fail(err, n, e->text, "model.index_topk: the indexer chooses among the keys a mask allows");
        if (e->mask_kind == MASK_NONE) {
            ls->in.mask_kind = MASK_NONE;
            if (tensor_present(&ls->in.mask))
                for (size_t k = 0; k < ls->in.mask.size; k++) ls->in.mask.data[k] = 1.0f;
            return true;
        }
        if (e->mask_kind == MASK_CAUSAL && ls->len_q != ls->len_k)
            return edit_fail(err, n, e->text, "a causal mask needs as many queries as keys");
        if ((int)ls->in.mask_kind == e->mask_kind) return true; // already: the lengths stay
        if (!lesson_ensure_mask(ls)) return edit_fail(err, n, e->text, "out of memory");
        int lengths[LESSON_MAX_BATCH];
        for (int b = 0; b < ls->batch; b++) lengths[b] = ls->len_k > 1 ? ls->len_k - 1 : ls->len_k;
        fill_mask(ls, (MaskKind)e->mask_kind, lengths);
        return true;
    }
    case EDIT_KEY_PADDING: {
        if (ls->cfg.decode)
            return edit_fail(err, n, e->text, "model.decode generates token by token: the mask stays causal "
                                              "or a sliding window");
        if (ls->cfg.n_layer_types > 0) return edit_fail(err, n, e->text, LAYER_TYPES_MASK);
        if ((int)e->index >= ls->batch || e->value < 0 || e->value > (float)ls->len_k)
            return edit_fail(err, n, e->text, "out of range for this lesson");
        if (ls->in.mask_kind != MASK_NONE && ls->in.mask_kind != MASK_KEY_PADDING) {
            // a causal, sliding-window or 0/1 mask stays: padding masks batch b's keys
            // from LENGTH on in addition (the other batches and the rest as they were)
            int Lq = ls->len_q, Lk = ls->len_k, b = (int)e->index, len = (int)e->value;
            for (int i = 0; i < Lq; i++)
                for (int j = len; j < Lk; j++) ls->in.mask.data[((size_t)b * Lq + i) * Lk + j] = 0.0f;
            ls->in.mask_kind = MASK_TENSOR;
            return true;
        }
        if (!lesson_ensure_mask(ls)) return edit_fail(err, n, e->text, "out of memory");
        int lengths[LESSON_MAX_BATCH];
        if (ls->in.mask_kind == MASK_KEY_PADDING)
            padding_lengths(ls, lengths);
        else
            for (int b = 0; b < ls->batch; b++) lengths[b] = ls->len_k;
        lengths[e->index] = (int)e->value;
        fill_mask(ls, MASK_KEY_PADDING, lengths);
        return true;
    }
    default: break; // (an element or a fill)
    }
    if (e->tensor < 0 || e->tensor >= LT_COUNT) return edit_fail(err, n, e->text, "unknown tensor");
    if (e->tensor == LT_MASK) {
        if (ls->cfg.decode)
            return edit_fail(err, n, e->text, "model.decode generates token by token: the mask stays causal "
                                              "or a sliding window (its cells cannot change)");
        if (ls->cfg.n_layer_types > 0) return edit_fail(err, n, e->text, LAYER_TYPES_MASK " (its cells cannot change)");
        if (ls->classes)
            return edit_fail(err, n, e->text, "a vision transformer's tokens all see each other (it has no mask)");
        if (ls->cfg.decoder_layers > 0)
            return edit_fail(err, n, e->text, "an encoder–decoder's decoder is causal and its encoder and cross-attention "
                                              "see every source token (its mask cells cannot change)");
        if (e->value != 0.0f && e->value != 1.0f)
            return edit_fail(err, n, e->text, "a mask cell is 0 (masked) or 1 (attend)");
        if (!lesson_ensure_mask(ls)) return edit_fail(err, n, e->text, "out of memory");
        if (ls->in.mask_kind == MASK_NONE)   // no mask is a mask of ones
            for (size_t k = 0; k < ls->in.mask.size; k++) ls->in.mask.data[k] = 1.0f;
        ls->in.mask_kind = MASK_TENSOR;      // a named mask becomes an explicit tensor
    }
    int ts[3];
    int na = aliases(ls, e->tensor, ts);
    for (int a = 0; a < na; a++) {
        Tensor *t = lesson_tensor(ls, ts[a]);
        if (!tensor_present(t) || (e->kind == EDIT_ELEMENT && e->index >= t->size))
            return edit_fail(err, n, e->text, "this lesson has no such element (%s)", missing_because(ls, e->tensor));
    }
    for (int a = 0; a < na; a++) {
        Tensor *t = lesson_tensor(ls, ts[a]);
        if (e->kind == EDIT_ELEMENT)
            t->data[e->index] = e->value;
        else
            for (size_t k = 0; k < t->size; k++) t->data[k] = e->value;
    }
    return true;
}

static bool same_float(float a, float b)
{
    return a == b ? signbit(a) == signbit(b) : (isnan(a) && isnan(b));
}

bool edit_is_noop(const Lesson *ls, const Edit *e)
{
    const int k = edit_model_key(e->kind);
    if (k >= 0) return same_float(model_key_get(&ls->cfg, k), e->value);
    switch (e->kind) {
    case EDIT_MASK_KIND: return (int)ls->in.mask_kind == e->mask_kind; // a named kind is its tensor
    case EDIT_KEY_PADDING: {
        if (ls->in.mask_kind != MASK_KEY_PADDING) return false;
        int lengths[LESSON_MAX_BATCH];
        padding_lengths(ls, lengths);
        return lengths[e->index] == (int)e->value;
    }
    case EDIT_ELEMENT: {
        if (e->tensor == LT_MASK && ls->in.mask_kind == MASK_NONE) return false;   // it would make the mask explicit
        const Tensor *t = lesson_tensor((Lesson *)ls, e->tensor);
        return tensor_present(t) && e->index < t->size && same_float(t->data[e->index], e->value);
    }
    default: return false; // (a fill)
    }
}

// ---- the log ---------------------------------------------------------------------

void edit_log_init(EditLog *g)
{
    memset(g, 0, sizeof *g);
}

void edit_log_free(EditLog *g)
{
    free(g->items);
    memset(g, 0, sizeof *g);
}

static bool same_target(const Edit *a, const Edit *b)
{
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case EDIT_ELEMENT: return a->tensor == b->tensor && a->index == b->index;
    case EDIT_FILL: return a->tensor == b->tensor;
    case EDIT_KEY_PADDING: return a->index == b->index;
    default: return true;
    }
}

bool edit_log_push(EditLog *g, const Edit *e, bool merge)
{
    if (merge && g->applied > 0 && g->applied == g->n && same_target(&g->items[g->n - 1], e)) {
        g->items[g->n - 1] = *e;
        return true;
    }
    g->n = g->applied;   // a new edit drops what could be redone
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 16;
        Edit *items = realloc(g->items, (size_t)cap * sizeof *items);
        if (!items) return false;
        g->items = items, g->cap = cap;
    }
    g->items[g->n++] = *e;
    g->applied = g->n;
    return true;
}

// ---- copies ----------------------------------------------------------------------

static char *dup_or_null(const char *s, bool *ok)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *ok = false;
    return d;
}

static char **dup_strings(char *const *s, int n, bool *ok)
{
    if (!s) return NULL;
    char **d = calloc((size_t)n + 1, sizeof *d);
    if (!d) {
        *ok = false;
        return NULL;
    }
    for (int i = 0; i < n; i++) d[i] = dup_or_null(s[i], ok);
    return d;
}

static bool copy_tensor(Tensor *dst, const Tensor *src)
{
    if (!tensor_present(src)) {
        memset(dst, 0, sizeof *dst);
        return true;
    }
    return tensor_copy(dst, src);
}

bool lesson_clone(Lesson *dst, const Lesson *src)
{
    memset(dst, 0, sizeof *dst);
    bool ok = true;
    dst->path = dup_or_null(src->path, &ok);
    for (int l = 0; l < LANG_COUNT; l++) {
        dst->title[l] = dup_or_null(src->title[l], &ok);
        dst->description[l] = dup_or_null(src->description[l], &ok);
    }
    dst->cfg = src->cfg;
    dst->batch = src->batch, dst->len_q = src->len_q, dst->len_k = src->len_k;
    dst->in.key_is_query = src->in.key_is_query;
    dst->in.value_is_key = src->in.value_is_key;
    dst->in.value_is_query = src->in.value_is_query;
    dst->in.mask_kind = src->in.mask_kind;
    dst->in.window = src->in.window;
    dst->in.sink_tokens = src->in.sink_tokens;
    dst->in.causal_bottom_right = src->in.causal_bottom_right;
    for (int t = 0; t < LT_COUNT; t++)
        ok = ok && copy_tensor(lesson_tensor(dst, t), lesson_tensor((Lesson *)src, t));
    ok = ok && copy_tensor(&dst->in.position_ids, &src->in.position_ids);
    ok = ok && copy_tensor(&dst->in.ids, &src->in.ids);
    dst->n_vocab = src->n_vocab, dst->word_tokens = src->word_tokens;
    dst->vocab = dup_strings(src->vocab, src->n_vocab, &ok);
    dst->classes = dup_strings(src->classes, src->cfg.n_classes, &ok);
    if (ok && src->bpe) ok = (dst->bpe = bpe_copy(src->bpe, dst->vocab)) != NULL;
    if (ok && src->targets) {
        const size_t n = (size_t)src->batch * src->len_q * sizeof *dst->targets;
        ok = (dst->targets = malloc(n)) != NULL;
        if (ok) memcpy(dst->targets, src->targets, n);
    }
    dst->n_checkpoints = src->n_checkpoints, dst->checkpoint = src->checkpoint, dst->typed = src->typed;
    dst->other_weights = src->other_weights;
    if (ok && src->n_checkpoints > 0) {
        dst->ckpt_step = malloc((size_t)src->n_checkpoints * sizeof *dst->ckpt_step);
        dst->ckpt_loss = malloc((size_t)src->n_checkpoints * sizeof *dst->ckpt_loss);
        ok = dst->ckpt_step && dst->ckpt_loss;
        if (ok) {
            memcpy(dst->ckpt_step, src->ckpt_step, (size_t)src->n_checkpoints * sizeof *dst->ckpt_step);
            memcpy(dst->ckpt_loss, src->ckpt_loss, (size_t)src->n_checkpoints * sizeof *dst->ckpt_loss);
        }
        dst->ckpt_weights = dup_strings(src->ckpt_weights, src->n_checkpoints, &ok);
        dst->ckpt_trees = lesson_trees_share(src->ckpt_trees); // (never changed: shared, not copied)
    }
    dst->q_tokens = dup_strings(src->q_tokens, src->len_q, &ok);
    dst->k_tokens = dup_strings(src->k_tokens, src->len_k, &ok);
    dst->n_steps = src->n_steps;
    dst->step_keys = dup_strings(src->step_keys, src->n_steps, &ok);
    for (int l = 0; l < LANG_COUNT; l++) dst->step_text[l] = dup_strings(src->step_text[l], src->n_steps, &ok);
    if (ok && src->step_head) {
        dst->step_head = malloc(((size_t)src->n_steps + 1) * sizeof *dst->step_head);
        ok = dst->step_head != NULL;
        if (ok) memcpy(dst->step_head, src->step_head, ((size_t)src->n_steps + 1) * sizeof *dst->step_head);
    }
    if (ok && src->n_quiz > 0) {
        dst->quiz = calloc((size_t)src->n_quiz, sizeof *dst->quiz);
        ok = dst->quiz != NULL;
        for (int i = 0; ok && i < src->n_quiz; i++) {
            LessonQuiz *d = &dst->quiz[i];
            const LessonQuiz *q = &src->quiz[i];
            *d = *q;
            d->id = dup_or_null(q->id, &ok);
            d->stage = dup_or_null(q->stage, &ok);
            for (int l = 0; l < LANG_COUNT; l++) {
                d->question[l] = dup_or_null(q->question[l], &ok);
                d->explanation[l] = dup_or_null(q->explanation[l], &ok);
            }
            dst->n_quiz = i + 1;
        }
    }
    dst->n_notes = src->n_notes;
    dst->note_keys = dup_strings(src->note_keys, src->n_notes, &ok);
    for (int l = 0; l < LANG_COUNT; l++) dst->note_text[l] = dup_strings(src->note_text[l], src->n_notes, &ok);
    if (!ok) lesson_free(dst);
    return ok;
}

void lesson_copy_values(Lesson *dst, const Lesson *src)
{
    dst->cfg = src->cfg;
    dst->in.mask_kind = src->in.mask_kind;
    for (int t = 0; t < LT_COUNT; t++) {
        Tensor *d = lesson_tensor(dst, t);
        const Tensor *s = lesson_tensor((Lesson *)src, t);
        if (tensor_present(s) && tensor_present(d) && d->size == s->size)
            memcpy(d->data, s->data, s->size * sizeof *d->data);
        else if (t == LT_MASK && tensor_present(d))   // the original has no mask: all attend
            for (size_t k = 0; k < d->size; k++) d->data[k] = 1.0f;
    }
}
