// attn_json.c — an attention example's numbers from a lesson's JSON (attn_json.h).
#include "attn_json.h"

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn_names.h"
#include "bpe.h"
#include "jsonpath.h"
#include "utf8.h"

// --- input -----------------------------------------------------------------------

// A (L, C) input becomes (1, L, C).
static bool input_tensor(JsonCtx *c, const cJSON *j, const char *p, int d_model, Tensor *t)
{
    JsonTensorOpts o = {false, LESSON_MAX_ELEMS};
    if (!jsonpath_tensor(c, j, p, &o, t)) return false;
    if (t->rank == 2) {
        t->shape[2] = t->shape[1], t->shape[1] = t->shape[0], t->shape[0] = 1, t->rank = 3;
    }
    char got[64];
    tensor_shape_str(t, got, sizeof got);
    if (t->rank != 3) return jsonpath_fail(c, p, "expected shape (B, L, %d) or (L, %d), got %s", d_model, d_model, got);
    if (t->shape[2] != d_model)
        return jsonpath_fail(c, p, "last dimension %d must equal d_model %d", t->shape[2], d_model);
    if (t->shape[0] > LESSON_MAX_BATCH)
        return jsonpath_fail(c, p, "batch %d is over the limit of %d", t->shape[0], LESSON_MAX_BATCH);
    if (t->shape[1] > LESSON_MAX_LEN)
        return jsonpath_fail(c, p, "length %d is over the limit of %d", t->shape[1], LESSON_MAX_LEN);
    return true;
}

// input.position_ids: RoPE's position of each token, (B, L) or one row (L) for every
// batch, as Hugging Face's position_ids (decoding after a prompt of P tokens: P, P+1, …;
// left padding: a row starts later). Whole numbers from 0; only with RoPE.
static bool position_ids(JsonCtx *c, const cJSON *j, const AttnConfig *cfg, AttnInputs *ai)
{
    const char *P = "input.position_ids";
    if (!j || cJSON_IsNull(j)) return true;
    if (cfg->rope == ROPE_NONE)
        return jsonpath_fail(c, P, "only RoPE turns by position; expected it with \"model\": {\"rope\": {...}} "
                             "(ALiBi and no positions use none)");
    const Tensor *x = tensor_present(&ai->query) ? &ai->query : &ai->ids; // (a language model's: its ids)
    const int B = x->shape[0], L = x->shape[1];
    JsonTensorOpts o = {true, LESSON_MAX_ELEMS};
    Tensor t;
    if (!jsonpath_tensor(c, j, P, &o, &t)) return false;
    const bool row = t.rank == 1 && t.shape[0] == L, full = t.rank == 2 && t.shape[0] == B && t.shape[1] == L;
    if (!row && !full) {
        char got[64];
        tensor_shape_str(&t, got, sizeof got);
        tensor_free(&t);
        return jsonpath_fail(c, P, "expected (B, L) = (%d,%d) or (L) = (%d) positions, got shape %s", B, L, L, got);
    }
    for (size_t i = 0; i < t.size; i++) {
        const float v = t.data[i];
        if (!(v >= 0.0f) || v != floorf(v) || v > (float)LESSON_MAX_POSITION) {
            char p[JSONPATH_MAX];
            if (row)
                jsonpath_index(p, P, (int)i);
            else
                snprintf(p, sizeof p, "%s[%d][%d]", P, (int)(i / (size_t)L), (int)(i % (size_t)L));
            tensor_free(&t);
            return jsonpath_fail(c, p, "expected a whole position from 0 to %d, got %g%s", LESSON_MAX_POSITION, (double)v,
                                 v < 0.0f ? " (an offset that makes a position negative)" : "");
        }
    }
    int shape[2] = {B, L};
    if (!tensor_init(&ai->position_ids, 2, shape)) {
        tensor_free(&t);
        return jsonpath_fail(c, P, "out of memory");
    }
    for (int b = 0; b < B; b++)
        memcpy(ai->position_ids.data + (size_t)b * L, t.data + (row ? 0 : (size_t)b * L), (size_t)L * sizeof(float));
    tensor_free(&t);
    return true;
}

bool attn_json_input(JsonCtx *c, const cJSON *in, const AttnConfig *cfg, AttnInputs *ai)
{
    const char *P = "input";
    if (!in) return jsonpath_fail(c, P, "missing; expected an object with a \"query\" tensor");
    if (!cJSON_IsObject(in)) return jsonpath_fail(c, P, "expected an object, got %s", jsonpath_type(in));
    static const char *const keys[] = {"query", "key", "value", "position_ids", NULL};
    if (!jsonpath_check_keys(c, in, P, keys)) return false;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(in, "query");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(in, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "value");
    if (!q) return jsonpath_fail(c, "input.query", "missing; expected a (B, L, %d) tensor", cfg->d_model);
    if (!input_tensor(c, q, "input.query", cfg->d_model, &ai->query)) return false;

    // key: a tensor, or "query" (the default)
    ai->key_is_query = true;
    if (k && cJSON_IsString(k)) {
        if (strcmp(k->valuestring, "query") != 0)
            return jsonpath_fail(c, "input.key", "expected a tensor or \"query\", got \"%.40s\"", k->valuestring);
    } else if (k) {
        ai->key_is_query = false;
        if (!input_tensor(c, k, "input.key", cfg->d_model, &ai->key)) return false;
        if (ai->key.shape[0] != ai->query.shape[0])
            return jsonpath_fail(c, "input.key", "batch %d differs from the query's batch %d",
                        ai->key.shape[0], ai->query.shape[0]);
    }
    if (ai->key_is_query && !tensor_copy(&ai->key, &ai->query)) return jsonpath_fail(c, P, "out of memory");

    // value: a tensor, "key" (the default) or "query"
    ai->value_is_key = true;
    const Tensor *src = &ai->key;
    if (v && cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "key") == 0) {
        } else if (strcmp(v->valuestring, "query") == 0) {
            ai->value_is_key = ai->key_is_query;
            ai->value_is_query = !ai->key_is_query;
            src = &ai->query;
        } else {
            return jsonpath_fail(c, "input.value", "expected a tensor, \"key\" or \"query\", got \"%.40s\"",
                        v->valuestring);
        }
        if (!tensor_copy(&ai->value, src)) return jsonpath_fail(c, P, "out of memory");
    } else if (v) {
        ai->value_is_key = false;
        if (!input_tensor(c, v, "input.value", cfg->d_model, &ai->value)) return false;
    } else if (!tensor_copy(&ai->value, src)) {
        return jsonpath_fail(c, P, "out of memory");
    }
    if (ai->value.shape[0] != ai->key.shape[0] || ai->value.shape[1] != ai->key.shape[1])
        return jsonpath_fail(c, "input.value", "has %d×%d positions but the key has %d×%d (B×L must match)",
                    ai->value.shape[0], ai->value.shape[1], ai->key.shape[0], ai->key.shape[1]);
    return position_ids(c, cJSON_GetObjectItemCaseSensitive(in, "position_ids"), cfg, ai);
}

// --- a language model's input: text or token ids -----------------------------------

int attn_tokenize(const char *s, char *const *vocab, int V, bool words, const Bpe *bpe, int *ids, int max,
                  AttnTokenError *e)
{
    if (bpe) return bpe_encode(bpe, s, ids, max);
    int n = 0;
    size_t i = 0, len = strlen(s);
    while (i < len) {
        size_t tl;
        if (words) { // the words between spaces (runs of spaces separate as one)
            if (s[i] == ' ') { i++; continue; }
            tl = strcspn(s + i, " ");
        } else {     // one character (a Unicode code point) a token
            utf8_next(s + i, &tl);
            if (tl == 0) tl = 1;
        }
        int id = -1;
        for (int v = 0; v < V; v++)
            if (strlen(vocab[v]) == tl && memcmp(vocab[v], s + i, tl) == 0) { id = v; break; }
        if (id < 0) {
            if (e) e->index = n, e->at = i, e->len = tl;
            return -1;
        }
        if (n == max) return -2;
        if (ids) ids[n] = id;
        n++;
        i += tl;
    }
    return n;
}

size_t attn_vocab_list(char *const *vocab, int V, const char *space, int most, char *out, size_t n)
{
    size_t k = 0;
    if (n) out[0] = '\0';
    bool has_space = false;
    for (int v = 0, shown = 0; v < V && shown < most && n; v++) {
        if (strcmp(vocab[v], " ") == 0) { has_space = true; continue; }
        int w = snprintf(out + k, n - k, "%s%s", shown++ ? " " : "", vocab[v]);
        if (w < 0 || (size_t)w >= n - k) return k;
        k += (size_t)w;
    }
    for (int v = 0; v < V && !has_space; v++) has_space = strcmp(vocab[v], " ") == 0;
    if (has_space && n) { // the space last, by name
        int w = snprintf(out + k, n - k, "%s%s", k ? ", " : "", space);
        if (w > 0 && (size_t)w < n - k) k += (size_t)w;
    }
    return k;
}

// Text (a string, or an array of them: a batch) split by the tokenizer into vocabulary
// ids, or the ids themselves; every row the same length.
bool attn_json_lm_input(JsonCtx *c, const cJSON *in, const AttnConfig *cfg, char *const *vocab, bool words,
                        const Bpe *bpe, AttnInputs *ai)
{
    const char *P = "input";
    const int V = cfg->vocab_size;
    if (!in) return jsonpath_fail(c, P, "missing; expected {\"text\": \"…\"} or {\"ids\": [[…]]}");
    if (!cJSON_IsObject(in)) return jsonpath_fail(c, P, "expected an object, got %s", jsonpath_type(in));
    static const char *const keys[] = {"text", "ids", "position_ids", NULL};
    for (const cJSON *k = in->child; k; k = k->next)
        if (!strcmp(k->string, "query") || !strcmp(k->string, "key") || !strcmp(k->string, "value")) {
            char p[JSONPATH_MAX];
            jsonpath_key(p, P, k->string);
            return jsonpath_fail(c, p, "a language model reads tokens; expected input.text or input.ids");
        }
    if (!jsonpath_check_keys(c, in, P, keys)) return false;
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(in, "text"), *ids = cJSON_GetObjectItemCaseSensitive(in, "ids");
    if (!text == !ids) return jsonpath_fail(c, P, "expected one of input.text and input.ids");
    ai->key_is_query = ai->value_is_key = true;
    if (ids) {
        JsonTensorOpts o = {true, LESSON_MAX_ELEMS};
        if (!jsonpath_tensor(c, ids, "input.ids", &o, &ai->ids)) return false;
        if (ai->ids.rank == 1) ai->ids.rank = 2, ai->ids.shape[1] = ai->ids.shape[0], ai->ids.shape[0] = 1;
        if (ai->ids.rank != 2) return jsonpath_fail(c, "input.ids", "expected (B, L) token ids, got rank %d", ai->ids.rank);
        for (size_t i = 0; i < ai->ids.size; i++) {
            const float v = ai->ids.data[i];
            if (!(v >= 0.0f && v < (float)V && v == floorf(v))) {
                char p[JSONPATH_MAX];
                snprintf(p, sizeof p, "input.ids[%d][%d]", (int)(i / (size_t)ai->ids.shape[1]), (int)(i % (size_t)ai->ids.shape[1]));
                return jsonpath_fail(c, p, "expected a token id from 0 to %d (the vocab's), got %g", V - 1, (double)v);
            }
        }
    } else {
        const int B = cJSON_IsArray(text) ? cJSON_GetArraySize(text) : 1;
        if (B < 1 || B > LESSON_MAX_BATCH)
            return jsonpath_fail(c, "input.text", "expected a string or 1 to %d strings (a batch), got %d", LESSON_MAX_BATCH, B);
        int L = -1, *row = malloc(sizeof(int) * (LESSON_MAX_LEN + 1));
        if (!row) return jsonpath_fail(c, P, "out of memory");
        for (int b = 0; b < B; b++) {
            const cJSON *t = cJSON_IsArray(text) ? cJSON_GetArrayItem(text, b) : text;
            char p[JSONPATH_MAX];
            if (cJSON_IsArray(text)) jsonpath_index(p, "input.text", b);
            else snprintf(p, sizeof p, "input.text");
            if (!cJSON_IsString(t)) return free(row), jsonpath_fail(c, p, "expected a string, got %s", jsonpath_type(t));
            const char *s = t->valuestring;
            AttnTokenError te;
            int n = attn_tokenize(s, vocab, V, words, bpe, row, LESSON_MAX_LEN, &te);
            if (n == -1) {
                char known[200];
                size_t k = attn_vocab_list(vocab, V, "space", 40, known, sizeof known);
                free(row);
                return jsonpath_fail(c, p, "%s %d, \"%.*s\", is not in the vocab; expected one of its %d: %s%s",
                                     words ? "word" : "character", te.index + 1, (int)(te.len > 40 ? 40 : te.len), s + te.at,
                                     V, known, V > 40 || k + 1 >= sizeof known ? " …" : "");
            }
            if (n == -2) {
                free(row);
                return jsonpath_fail(c, p, "more than %d tokens", LESSON_MAX_LEN);
            }
            if (n == -3) return free(row), jsonpath_fail(c, p, "out of memory");
            if (n == 0) return free(row), jsonpath_fail(c, p, "empty: expected at least one token");
            if (cfg->positions == POS_LEARNED && cfg->max_positions && n > cfg->max_positions) {
                free(row);
                return jsonpath_fail(c, p, "%d tokens, longer than the model's context (model.max_positions %d)", n,
                                     cfg->max_positions);
            }
            if (L >= 0 && n != L) {
                free(row);
                return jsonpath_fail(c, p, "%d tokens, but text 0 has %d; expected texts of one length", n, L);
            }
            if (L < 0) {
                L = n;
                int shape[2] = {B, L};
                if (!tensor_init(&ai->ids, 2, shape)) return free(row), jsonpath_fail(c, P, "out of memory");
            }
            for (int l = 0; l < L; l++) ai->ids.data[(size_t)b * L + l] = (float)row[l];
        }
        free(row);
    }
    return position_ids(c, cJSON_GetObjectItemCaseSensitive(in, "position_ids"), cfg, ai);
}

// --- mask ------------------------------------------------------------------------

bool attn_json_mask(JsonCtx *c, const cJSON *m, int B, int Lq, int Lk, AttnInputs *ai)
{
    const char *P = "mask";
    ai->mask_kind = MASK_NONE;
    if (!m || cJSON_IsNull(m)) return true;
    int full[3] = {B, Lq, Lk};
    if (cJSON_IsString(m)) {
        if (strcmp(m->valuestring, "causal") != 0)
            return jsonpath_fail(c, P, "expected null, \"causal\", {\"causal\": \"bottom_right\"}, a 0/1 tensor, {\"key_padding\": [...]} or {\"sliding_window\": W}, got \"%.40s\"",
                        m->valuestring);
        ai->mask_kind = MASK_CAUSAL;
        if (!tensor_init(&ai->mask, 3, full)) return jsonpath_fail(c, P, "out of memory");
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j <= i ? 1.0f : 0.0f;
        return true;
    }
    if (cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "sliding_window")) {
        static const char *const keys[] = {"sliding_window", "sink_tokens", NULL};
        if (!jsonpath_check_keys(c, m, P, keys)) return false;
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(m, "sliding_window");
        const char *PW = "mask.sliding_window";
        if (!cJSON_IsNumber(w) || w->valuedouble != floor(w->valuedouble) || w->valuedouble < 1 ||
            w->valuedouble > LESSON_MAX_LEN)
            return jsonpath_fail(c, PW, "expected a window W from 1 to %d (query i sees keys i-W < j <= i)", LESSON_MAX_LEN);
        if (Lq != Lk)
            return jsonpath_fail(c, PW, "needs as many queries as keys (self-attention), got %d queries and %d keys", Lq, Lk);
        ai->mask_kind = MASK_SLIDING;
        ai->window = (int)w->valuedouble;
        // StreamingLLM (Xiao et al. 2023): the first S tokens stay visible to every later query
        if (!jsonpath_int(c, m, P, "sink_tokens", &ai->sink_tokens, 1, LESSON_MAX_LEN, false, 0)) return false;
        if (!tensor_init(&ai->mask, 3, full)) return jsonpath_fail(c, P, "out of memory");
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] =
                        j <= i && (j > i - ai->window || j < ai->sink_tokens) ? 1.0f : 0.0f;
        return true;
    }
    if (cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "key_padding")) {
        static const char *const keys[] = {"key_padding", NULL};
        if (!jsonpath_check_keys(c, m, P, keys)) return false;
        const cJSON *kp = cJSON_GetObjectItemCaseSensitive(m, "key_padding");
        const char *PK = "mask.key_padding";
        if (!cJSON_IsArray(kp) || cJSON_GetArraySize(kp) != B)
            return jsonpath_fail(c, PK, "expected an array of %d key lengths (one per batch), got %s", B,
                        cJSON_IsArray(kp) ? "a different count" : jsonpath_type(kp));
        ai->mask_kind = MASK_KEY_PADDING;
        if (!tensor_init(&ai->mask, 3, full)) return jsonpath_fail(c, P, "out of memory");
        int b = 0;
        for (const cJSON *e = kp->child; e; e = e->next, b++) {
            char p[JSONPATH_MAX];
            jsonpath_index(p, PK, b);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 0 || e->valuedouble > Lk)
                return jsonpath_fail(c, p, "expected a key length from 0 to %d", Lk);
            int len = (int)e->valuedouble;
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j < len ? 1.0f : 0.0f;
        }
        return true;
    }
    if (cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "causal")) {
        static const char *const keys[] = {"causal", NULL};
        if (!jsonpath_check_keys(c, m, P, keys)) return false;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, "causal");
        const int align = attn_names_find(&ATTN_NAMES_CAUSAL, cJSON_IsString(a) ? a->valuestring : NULL);
        if (align < 0) {
            char expected[200];
            attn_names_expected(&ATTN_NAMES_CAUSAL, expected, sizeof expected);
            return jsonpath_fail(c, "mask.causal", "expected %s, got %s", expected,
                                 cJSON_IsString(a) ? a->valuestring : jsonpath_type(a));
        }
        const bool br = align == CAUSAL_BOTTOM_RIGHT;
        ai->mask_kind = MASK_CAUSAL;
        ai->causal_bottom_right = br;
        const int off = br ? Lk - Lq : 0;
        if (!tensor_init(&ai->mask, 3, full)) return jsonpath_fail(c, P, "out of memory");
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j <= i + off ? 1.0f : 0.0f;
        return true;
    }
    // A 0/1 tensor broadcast (numpy rules, right-aligned) to (B, Lq, Lk); a rank-4
    // mask must have 1 in the head dimension: (B, 1, Lq, Lk) or (B, 1, 1, Lk).
    JsonTensorOpts o = {true, LESSON_MAX_ELEMS};
    Tensor t;
    if (!cJSON_IsArray(m) && !cJSON_IsObject(m))
        return jsonpath_fail(c, P, "expected null, \"causal\", {\"causal\": \"bottom_right\"}, a 0/1 tensor, {\"key_padding\": [...]} or {\"sliding_window\": W}, got %s",
                    jsonpath_type(m));
    if (!jsonpath_tensor(c, m, P, &o, &t)) return false;
    int s[3] = {1, 1, 1};
    bool ok = true;
    if (t.rank == 4) {
        ok = t.shape[1] == 1;
        s[0] = t.shape[0], s[1] = t.shape[2], s[2] = t.shape[3];
    } else {
        for (int i = 0; i < t.rank; i++) s[3 - t.rank + i] = t.shape[i];
    }
    for (int i = 0; i < 3; i++) ok = ok && (s[i] == 1 || s[i] == full[i]);
    if (!ok) {
        char got[64];
        tensor_shape_str(&t, got, sizeof got);
        tensor_free(&t);
        return jsonpath_fail(c, P, "shape %s does not broadcast to (B, Lq, Lk) = (%d,%d,%d)", got, B, Lq, Lk);
    }
    for (size_t i = 0; i < t.size; i++) {
        float v = t.data[i];
        if (v != 0.0f && v != 1.0f) {
            tensor_free(&t);
            return jsonpath_fail(c, P, "mask values must be 0 (masked) or 1 (attend), found %g", (double)v);
        }
    }
    ai->mask_kind = MASK_TENSOR;
    if (!tensor_init(&ai->mask, 3, full)) return tensor_free(&t), jsonpath_fail(c, P, "out of memory");
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Lq; i++)
            for (int j = 0; j < Lk; j++) {
                size_t src = ((size_t)(s[0] == 1 ? 0 : b) * s[1] + (s[1] == 1 ? 0 : i)) * s[2] +
                             (s[2] == 1 ? 0 : j);
                ai->mask.data[((size_t)b * Lq + i) * Lk + j] = t.data[src];
            }
    tensor_free(&t);
    return true;
}

// --- weights ---------------------------------------------------------------------

// The keys of "weights": every slot of stages.h's table, "init" and "layers" (a layer's
// object: the slots alone).
static const char *const weight_names[WEIGHT_COUNT + 3] = {
#define WEIGHT_KEY(id, json, field, sym, plain) json,
    WEIGHT_TABLE(WEIGHT_KEY)
#undef WEIGHT_KEY
    "init", "layers", NULL};
static const char *const layer_names[WEIGHT_COUNT + 1] = { // (the model's own are refused before)
#define WEIGHT_KEY(id, json, field, sym, plain) json,
    WEIGHT_TABLE(WEIGHT_KEY)
#undef WEIGHT_KEY
    NULL};

_Static_assert(WEIGHT_COUNT <= LESSON_LAYER_SEED_STRIDE, "weights.init's layer stride below the weight table");

// What slot i of cfg's model is: (rank, shape, fan_in), whether cfg uses it, whether it is a
// norm's (1 and 0 when not given). One table for the reader and the budget (attn_json_weight_floats).
typedef struct WeightSpec { int rank; int shape[2]; int fan_in; bool used; bool is_norm; } WeightSpec;
static void weight_specs(const AttnConfig *cfg, WeightSpec spec[WEIGHT_COUNT])
{
    const int V = cfg->vocab_size, Pn = cfg->max_positions, K = cfg->n_classes, pp = cfg->patch_size * cfg->patch_size;
    const bool lm = V > 0, vis = K > 0, own = lm || vis; // a model of its own: a language or vision model
    const int C = cfg->d_model, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v,
              F = cfg->ffn_hidden, Hkv = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : cfg->n_heads;
    const bool fb = cfg->ffn_bias, rms = cfg->norm == NORM_RMS, glu = cfg->ffn_act == FFN_SWIGLU;
    // multi-head latent attention: W_Q reads c_Q (q_lora_rank) or x, W_K and W_V read c_KV (mla.c)
    const int r = cfg->kv_lora_rank, rq = cfg->q_lora_rank, dr = cfg->qk_rope_head_dim, mla = r > 0;
    const int qin = rq > 0 ? rq : C, kin = mla ? r : C, kout = mla ? H * (dk - dr) : Hkv * dk;
    const int HI = cfg->index_n_heads, dI = cfg->index_head_dim, dsa = cfg->index_topk > 0;
    const bool ed = cfg->decoder_layers > 0; // an encoder–decoder: encoder.norm and decoder.norm
    bool lin = false; // a "linear_attention" layer: its gates (layer_weights: in those layers only)
    for (int i = 0; i < cfg->n_layer_types; i++) lin = lin || cfg->layer_types[i] == LAYER_LINEAR;
    const bool beta = lin && cfg->linear_rule != LINEAR_PLAIN, alpha = lin && cfg->linear_rule == LINEAR_GATED_DELTA;
    // expected (rank, shape, fan_in, used) per tensor
    const WeightSpec table[WEIGHT_COUNT] = {
        [WEIGHT_W_Q] = {2, {H * dk, qin}, qin, true, false},   [WEIGHT_B_Q] = {1, {H * dk}, C, cfg->qkv_bias, false},
        [WEIGHT_W_K] = {2, {kout, kin}, kin, true, false},     [WEIGHT_B_K] = {1, {Hkv * dk}, C, cfg->qkv_bias, false},
        [WEIGHT_W_V] = {2, {Hkv * dv, kin}, kin, true, false}, [WEIGHT_B_V] = {1, {Hkv * dv}, C, cfg->qkv_bias, false},
        [WEIGHT_W_O] = {2, {C, H * dv}, H * dv, true, false},  [WEIGHT_B_O] = {1, {C}, H * dv, cfg->out_bias, false},
        [WEIGHT_FFN_W1] = {2, {F, C}, C, F > 0, false},        [WEIGHT_FFN_B1] = {1, {F}, C, F > 0 && fb, false},
        [WEIGHT_FFN_W2] = {2, {C, F}, F, F > 0, false},        [WEIGHT_FFN_B2] = {1, {C}, F, F > 0 && fb, false},
        [WEIGHT_NORM_WEIGHT] = {1, {C}, 0, cfg->residual_norm, true},
        [WEIGHT_NORM_BIAS] = {1, {C}, 0, cfg->residual_norm && !rms, true},
        [WEIGHT_FFN_NORM_WEIGHT] = {1, {C}, 0, F > 0, true},   [WEIGHT_FFN_NORM_BIAS] = {1, {C}, 0, F > 0 && !rms, true},
        [WEIGHT_FFN_W_GATE] = {2, {F, C}, C, F > 0 && glu, false}, [WEIGHT_FFN_B_GATE] = {1, {F}, C, F > 0 && glu && fb, false},
        [WEIGHT_SINKS] = {1, {H}, 1, cfg->attn_sinks, false},
        [WEIGHT_Q_NORM] = {1, {dk}, 0, cfg->qk_norm, true},    [WEIGHT_K_NORM] = {1, {dk}, 0, cfg->qk_norm, true},
        [WEIGHT_W_GATE] = {2, {H * dv, C}, C, cfg->attn_gate, false},
        [WEIGHT_B_GATE] = {1, {H * dv}, C, cfg->attn_gate && cfg->qkv_bias, false},
        [WEIGHT_W_DQ] = {2, {rq, C}, C, mla && rq > 0, false}, [WEIGHT_Q_LATENT_NORM] = {1, {rq}, 0, mla && rq > 0, true},
        [WEIGHT_W_DKV] = {2, {r, C}, C, mla, false},           [WEIGHT_KV_LATENT_NORM] = {1, {r}, 0, mla, true},
        [WEIGHT_W_KR] = {2, {dr, C}, C, mla, false},
        [WEIGHT_W_IQ] = {2, {HI * dI, C}, C, dsa, false},      [WEIGHT_W_IK] = {2, {dI, C}, C, dsa, false},
        [WEIGHT_W_IW] = {2, {HI, C}, C, dsa, false},
        [WEIGHT_W_BETA] = {2, {H, C}, C, beta, false},         [WEIGHT_W_ALPHA] = {2, {H, C}, C, alpha, false},
        [WEIGHT_A_LOG] = {1, {H}, 1, alpha, false},            [WEIGHT_DT_BIAS] = {1, {H}, 1, alpha, false},
        [WEIGHT_EMBED] = {2, {V, C}, 1, lm, false},
        [WEIGHT_POS_EMBED] = {2, {Pn, C}, 1, own && cfg->positions == POS_LEARNED, false},
        [WEIGHT_FINAL_NORM_WEIGHT] = {1, {C}, 0, (own && cfg->final_norm) || ed, true},
        [WEIGHT_FINAL_NORM_BIAS] = {1, {C}, 0, ((own && cfg->final_norm) || ed) && !rms, true},
        [WEIGHT_LM_HEAD] = {2, {V, C}, C, lm && !cfg->tie_embeddings, false},
        [WEIGHT_PATCH_EMBED] = {2, {C, pp}, pp, vis, false},   [WEIGHT_PATCH_BIAS] = {1, {C}, pp, vis, false},
        [WEIGHT_CLS_TOKEN] = {1, {C}, 1, vis, false},
        [WEIGHT_HEAD] = {2, {K, C}, C, vis, false},            [WEIGHT_HEAD_BIAS] = {1, {K}, C, vis, false},
        [WEIGHT_ENC_NORM_WEIGHT] = {1, {C}, 0, ed, true}, [WEIGHT_ENC_NORM_BIAS] = {1, {C}, 0, ed && !rms, true},
    };
    memcpy(spec, table, sizeof table);
}

size_t attn_json_weight_floats(const AttnConfig *cfg)
{
    WeightSpec spec[WEIGHT_COUNT];
    weight_specs(cfg, spec);
    const size_t NL = cfg->n_layers > 1 ? (size_t)cfg->n_layers : 1;
    size_t total = 0;
    for (int i = 0; i < WEIGHT_COUNT; i++) {
        if (!spec[i].used) continue;
        size_t n = (size_t)spec[i].shape[0] * (size_t)(spec[i].rank == 2 ? spec[i].shape[1] : 1);
        total += i < WEIGHT_EMBED ? n * NL : n; // (a layer's slots: every layer's; the model's own once)
    }
    return total;
}

// Layer `layer`'s tensors from the object jl (at path P; NULL: none given), the rest
// seeded (have_seed) or, for the norms, 1 and 0; with `model`, the model's own instead
// (a language model's embedding, final norm, unembedding: layer 0's, at the top level).
static bool layer_weights(JsonCtx *c, const cJSON *jl, const char *P, const AttnConfig *cfg, AttnWeights *w,
                          bool have_seed, double seed, int layer, bool model)
{
    const int V = cfg->vocab_size, F = cfg->ffn_hidden, H = cfg->n_heads,
              Hkv = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : cfg->n_heads;
    const bool lm = V > 0 || cfg->n_classes > 0, glu = cfg->ffn_act == FFN_SWIGLU; // (a model of its own)
    WeightSpec spec[WEIGHT_COUNT];
    weight_specs(cfg, spec);
    const int enc = cfg->n_layers - 2 * cfg->decoder_layers; // an encoder–decoder's first decoder block
    const bool dec_self = !model && cfg->decoder_layers > 0 && layer >= enc && (layer - enc) % 2 == 0;
    if (dec_self) // a decoder layer's self-attention block: its FFN is the cross-attention block's, the next
        for (int i = WEIGHT_FFN_W1; i <= WEIGHT_FFN_B_GATE; i++)
            if (i != WEIGHT_NORM_WEIGHT && i != WEIGHT_NORM_BIAS) spec[i].used = false;
    // the model's own tensors' streams of weights.init (a layer's: slot + 64·layer)
    int seed_index[WEIGHT_COUNT] = {[WEIGHT_EMBED] = 1000, [WEIGHT_POS_EMBED] = 1001, [WEIGHT_LM_HEAD] = 1002,
                                    [WEIGHT_PATCH_EMBED] = 1003, [WEIGHT_PATCH_BIAS] = 1004, [WEIGHT_CLS_TOKEN] = 1005,
                                    [WEIGHT_HEAD] = 1006, [WEIGHT_HEAD_BIAS] = 1007};
    for (int i = 0; i < WEIGHT_EMBED; i++) seed_index[i] = i + LESSON_LAYER_SEED_STRIDE * layer;
    const char *const nolm = "the lesson has no vocab (it is not a language model)";
    const char *const novis = "the lesson has no \"image\" (it is not a vision transformer)";
    const char *const nofb = F == 0 ? "model.ffn_hidden is 0" : "model.ffn_bias is false";
    // the linear layers' gates: in those layers only
    const bool lin_layer = !model && attn_layer_type(cfg, layer) == LAYER_LINEAR;
    char not_lin_buf[96];
    snprintf(not_lin_buf, sizeof not_lin_buf, "layer %d is not a \"linear_attention\" layer of model.layer_types", layer);
    const char *const not_lin = lin_layer ? NULL : not_lin_buf;
    for (int i = WEIGHT_W_BETA; i <= WEIGHT_DT_BIAS; i++) spec[i].used = spec[i].used && lin_layer;
    if (lin_layer) spec[WEIGHT_W_GATE].used = spec[WEIGHT_B_GATE].used = false; // (attn_gate: the full layers')
    const char *const why[WEIGHT_COUNT] = {
        [WEIGHT_B_Q] = "model.qkv_bias is false", [WEIGHT_B_K] = "model.qkv_bias is false",
        [WEIGHT_B_V] = "model.qkv_bias is false", [WEIGHT_B_O] = "model.out_bias is false",
        [WEIGHT_FFN_W1] = "model.ffn_hidden is 0", [WEIGHT_FFN_B1] = nofb,
        [WEIGHT_FFN_W2] = "model.ffn_hidden is 0", [WEIGHT_FFN_B2] = nofb,
        [WEIGHT_NORM_WEIGHT] = "model.residual_norm is false",
        [WEIGHT_NORM_BIAS] = !cfg->residual_norm ? "model.residual_norm is false" : "model.norm is \"rms\" (RMSNorm has no β)",
        [WEIGHT_FFN_NORM_WEIGHT] = "model.ffn_hidden is 0",
        [WEIGHT_FFN_NORM_BIAS] = F == 0 ? "model.ffn_hidden is 0" : "model.norm is \"rms\" (RMSNorm has no β)",
        [WEIGHT_FFN_W_GATE] = F == 0 ? "model.ffn_hidden is 0" : "model.activation is not \"swiglu\"",
        [WEIGHT_FFN_B_GATE] = F == 0 ? "model.ffn_hidden is 0" : !glu ? "model.activation is not \"swiglu\"" : nofb,
        [WEIGHT_SINKS] = "model.attn_sinks is false",
        [WEIGHT_Q_NORM] = "model.qk_norm is false", [WEIGHT_K_NORM] = "model.qk_norm is false",
        [WEIGHT_W_GATE] = lin_layer ? "the gate of model.attn_gate is the full layers' (this one is \"linear_attention\")"
                                    : "model.attn_gate is false",
        [WEIGHT_B_GATE] = lin_layer && cfg->attn_gate ? "the gate of model.attn_gate is the full layers' (this one is "
                                                       "\"linear_attention\")"
                        : !cfg->attn_gate ? "model.attn_gate is false" : "model.qkv_bias is false",
        [WEIGHT_W_DQ] = !cfg->kv_lora_rank ? "model.kv_lora_rank is not set" : "model.q_lora_rank is not set",
        [WEIGHT_Q_LATENT_NORM] = !cfg->kv_lora_rank ? "model.kv_lora_rank is not set" : "model.q_lora_rank is not set",
        [WEIGHT_W_DKV] = "model.kv_lora_rank is not set", [WEIGHT_KV_LATENT_NORM] = "model.kv_lora_rank is not set",
        [WEIGHT_W_KR] = "model.kv_lora_rank is not set",
        [WEIGHT_W_IQ] = "model.index_topk is not set", [WEIGHT_W_IK] = "model.index_topk is not set",
        [WEIGHT_W_IW] = "model.index_topk is not set",
        [WEIGHT_W_BETA] = not_lin ? not_lin : "model.linear_rule is \"linear\" (no β)",
        [WEIGHT_W_ALPHA] = not_lin ? not_lin : "model.linear_rule is not \"gated_delta\" (no gate α)",
        [WEIGHT_A_LOG] = not_lin ? not_lin : "model.linear_rule is not \"gated_delta\" (no gate α)",
        [WEIGHT_DT_BIAS] = not_lin ? not_lin : "model.linear_rule is not \"gated_delta\" (no gate α)",
        [WEIGHT_EMBED] = cfg->n_classes > 0 ? "the lesson is an image classifier (its patches are embedded by weights.patch_embed)" : nolm,
        [WEIGHT_POS_EMBED] = !lm ? nolm : "model.positions is not \"learned\"",
        [WEIGHT_FINAL_NORM_WEIGHT] = !lm ? nolm : "model.final_norm is false",
        [WEIGHT_FINAL_NORM_BIAS] = !lm ? nolm : !cfg->final_norm ? "model.final_norm is false" : "model.norm is \"rms\" (RMSNorm has no β)",
        [WEIGHT_LM_HEAD] = cfg->n_classes > 0 ? "the lesson is an image classifier (its head is weights.head)"
                         : !lm ? nolm : "model.tie_embeddings is true (the logits use weights.embed)",
        [WEIGHT_PATCH_EMBED] = novis, [WEIGHT_PATCH_BIAS] = novis, [WEIGHT_CLS_TOKEN] = novis,
        [WEIGHT_HEAD] = novis, [WEIGHT_HEAD_BIAS] = novis,
        [WEIGHT_ENC_NORM_WEIGHT] = "the lesson has no model.decoder_layers (it is not an encoder–decoder)",
        [WEIGHT_ENC_NORM_BIAS] = "the lesson has no model.decoder_layers (it is not an encoder–decoder)",
    };

    for (int i = model ? WEIGHT_EMBED : 0; i < (model ? WEIGHT_COUNT : WEIGHT_EMBED); i++) {
        char p[JSONPATH_MAX];
        jsonpath_key(p, P, weight_names[i]);
        const cJSON *j = jl ? cJSON_GetObjectItemCaseSensitive(jl, weight_names[i]) : NULL;
        Tensor *t = attn_weight(w, i);
        if (j && !spec[i].used)
            return jsonpath_fail(c, p, "given but not used: %s", dec_self && i >= WEIGHT_FFN_W1 && i <= WEIGHT_FFN_B_GATE
                                 ? "a decoder layer's self-attention block has no feed-forward (its cross-attention block has it)"
                                 : why[i]);
        if (!spec[i].used) continue;
        if (j) {
            JsonTensorOpts o = {false, LESSON_MAX_ELEMS};
            if (!jsonpath_tensor(c, j, p, &o, t)) return false;
            // per-head form: (H, d, C) weights and (H, d) biases stack along the output dim
            bool qkv = i <= WEIGHT_B_V;
            char written[64];
            tensor_shape_str(t, written, sizeof written);
            int heads = i <= WEIGHT_B_Q ? H : Hkv;   // K and V have their own (n_kv_heads) heads
            if (qkv && t->rank == spec[i].rank + 1 && t->shape[0] == heads) {
                int d = t->shape[1];
                if (spec[i].rank == 2) t->shape[1] = t->shape[2];
                t->shape[0] = heads * d;
                t->rank--;
            }
            if (!jsonpath_expect_shape(c, p, t, spec[i].rank, spec[i].shape, written)) return false;
            continue;
        }
        if (!tensor_init(t, spec[i].rank, spec[i].shape)) return jsonpath_fail(c, p, "out of memory");
        if (spec[i].is_norm) {
            float v = (i == WEIGHT_NORM_WEIGHT || i == WEIGHT_FFN_NORM_WEIGHT || i == WEIGHT_FINAL_NORM_WEIGHT || i == WEIGHT_ENC_NORM_WEIGHT ||
                       i == WEIGHT_Q_NORM || i == WEIGHT_K_NORM || i == WEIGHT_Q_LATENT_NORM ||
                       i == WEIGHT_KV_LATENT_NORM) ? 1.0f : 0.0f; // γ 1, β 0
            for (size_t k = 0; k < t->size; k++) t->data[k] = v;
            continue;
        }
        if (!have_seed)
            return jsonpath_fail(c, p, "missing; expected a tensor of shape (%d%s%.0d) or weights.init",
                        spec[i].shape[0], spec[i].rank == 2 ? "," : "",
                        spec[i].rank == 2 ? spec[i].shape[1] : 0);
        for (size_t k = 0; k < t->size; k++)
            t->data[k] = attn_init_value((unsigned long long)seed, seed_index[i], k, spec[i].fan_in);
    }
    return true;
}

bool attn_json_weights(JsonCtx *c, const cJSON *jw, const AttnConfig *cfg, AttnWeights *w)
{
    return attn_json_weights_at(c, jw, "weights", cfg, w);
}

bool attn_json_weights_at(JsonCtx *c, const cJSON *jw, const char *P, const AttnConfig *cfg, AttnWeights *w)
{
    char p_init[JSONPATH_MAX], p_seed[JSONPATH_MAX], p_layers[JSONPATH_MAX];
    jsonpath_key(p_init, P, "init"), jsonpath_key(p_seed, p_init, "seed"), jsonpath_key(p_layers, P, "layers");
    if (!jw) return jsonpath_fail(c, P, "missing; expected the weight tensors or {\"init\": {\"seed\": N}}");
    if (!cJSON_IsObject(jw)) return jsonpath_fail(c, P, "expected an object, got %s", jsonpath_type(jw));
    if (!jsonpath_check_keys(c, jw, P, weight_names)) return false;
    bool have_seed = false;
    double seed = 0;
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(jw, "init");
    if (init) {
        static const char *const keys[] = {"seed", NULL};
        if (!cJSON_IsObject(init))
            return jsonpath_fail(c, p_init, "expected {\"seed\": N}, got %s", jsonpath_type(init));
        if (!jsonpath_check_keys(c, init, p_init, keys)) return false;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(init, "seed");
        if (!cJSON_IsNumber(s) || s->valuedouble != floor(s->valuedouble) || s->valuedouble < 0 ||
            s->valuedouble > 9007199254740992.0)
            return jsonpath_fail(c, p_seed, "expected a whole number from 0 to 2^53, got %s",
                        cJSON_IsNumber(s) ? "another number" : jsonpath_type(s));
        have_seed = true;
        seed = s->valuedouble;
    }

    // the model's own tensors: at the top level, whatever the layers
    if (!layer_weights(c, jw, P, cfg, &w[0], have_seed, seed, 0, true)) return false;
    const int NL = cfg->n_layers > 1 ? cfg->n_layers : 1;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(jw, "layers");
    if (!layers) {
        if (NL > 1)
            for (const cJSON *k = jw->child; k; k = k->next)
                if (strcmp(k->string, "init") != 0 && weight_slot_of(k->string) < WEIGHT_EMBED) {
                    char p[JSONPATH_MAX];
                    jsonpath_key(p, P, k->string);
                    return jsonpath_fail(c, p, "model.n_layers is %d: each layer's tensors go in weights.layers[l]", NL);
                }
        for (int l = 0; l < NL; l++)
            if (!layer_weights(c, NL > 1 ? NULL : jw, P, cfg, &w[l], have_seed, seed, l, false)) return false;
        return true;
    }
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != NL)
        return jsonpath_fail(c, p_layers, "expected an array of %d object%s (model.n_layers), got %s", NL,
                             NL == 1 ? "" : "s",
                             cJSON_IsArray(layers) ? "another length" : jsonpath_type(layers));
    for (const cJSON *k = jw->child; k; k = k->next)
        if (strcmp(k->string, "init") != 0 && strcmp(k->string, "layers") != 0 && weight_slot_of(k->string) < WEIGHT_EMBED) {
            char p[JSONPATH_MAX];
            jsonpath_key(p, P, k->string);
            return jsonpath_fail(c, p, "given beside weights.layers; expected it in weights.layers[l]");
        }
    int l = 0;
    for (const cJSON *jl = layers->child; jl; jl = jl->next, l++) {
        char p[JSONPATH_MAX];
        jsonpath_index(p, p_layers, l);
        if (!cJSON_IsObject(jl)) return jsonpath_fail(c, p, "expected an object, got %s", jsonpath_type(jl));
        for (const cJSON *k = jl->child; k; k = k->next)
            if (weight_slot_of(k->string) >= WEIGHT_EMBED) {
                char pk[JSONPATH_MAX];
                jsonpath_key(pk, p, k->string);
                return jsonpath_fail(c, pk, "the model's own tensor, not a layer's; expected it at weights.%s", k->string);
            }
        if (!jsonpath_check_keys(c, jl, p, layer_names)) return false;
        if (!layer_weights(c, jl, p, cfg, &w[l], have_seed, seed, l, false)) return false;
    }
    return true;
}
