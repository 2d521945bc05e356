// lesson.c — read a lesson file, validate it with JSON-path errors, and build
// the attention config, weights and inputs. The only file that includes cJSON.
//
// Every check names the file, the JSON path and what was expected, in one
// line: "lessons/x.json: model.n_heads: 3 does not divide d_model 4".
#include "lesson.h"

_Static_assert(LESSON_MAX_BATCH <= TRACE_MAX_BATCH, "a trace keeps statistics for every batch a lesson may have");
#include "trace.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_MAX_LEN 160

typedef struct Ctx {
    const char *file;
    char *err;
    size_t err_len;
    // the file's numbers that read as the double FLT_MAX + 2^103 (the halfway point to
    // infinity): some round to FLT_MAX as decimals (strtof), some to infinity
    bool halfway_down, halfway_up;
} Ctx;

// The escaped width of s (see utf8_line_width).
static size_t line_width(const char *s)
{
    size_t w = 0, n = strlen(s), adv;
    for (size_t i = 0; i < n; i += adv) w += utf8_line_width((const unsigned char *)s + i, n - i, &adv);
    return w;
}

// Appends s escaped into at most `budget` bytes at *o: cut at its end (keep_tail
// false) or its start (true) with "..." when it does not fit whole, never inside
// a character or an escape.
static void put_part(char *dst, size_t *o, size_t budget, const char *s, bool keep_tail)
{
    size_t n = strlen(s), w = line_width(s);
    if (w <= budget) {
        *o += utf8_line_escape(dst + *o, budget + 1, s, n, NULL);
        return;
    }
    if (budget < 3) return;
    if (!keep_tail) {
        *o += utf8_line_escape(dst + *o, budget - 3 + 1, s, n, NULL);
        memcpy(dst + *o, "...", 4);
        *o += 3;
        return;
    }
    size_t i = 0, adv;
    while (i < n && w > budget - 3) {
        w -= utf8_line_width((const unsigned char *)s + i, n - i, &adv);
        i += adv;
    }
    memcpy(dst + *o, "...", 4);
    *o += 3;
    *o += utf8_line_escape(dst + *o, budget - 3 + 1, s + i, n - i, NULL);
}

// Keys, values and file names come from the input: the line stays one line
// (control characters escaped: \n, \xNN, \u0085), valid UTF-8, and within
// err_len with the message whole whenever it fits in 5/8 of the line: a long
// file name keeps its tail, a long path its head.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool
fail(Ctx *c, const char *path, const char *fmt, ...)
{
    char msg[LESSON_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err_len < 16) {
        if (c->err_len) c->err[0] = '\0';
        return false;
    }
    bool has_path = path && *path;
    size_t avail = c->err_len - 1, sep = has_path ? 4 : 2;
    size_t mw = line_width(msg), mb = avail * 5 / 8;
    if (mw < mb) mb = mw;
    size_t rest = avail - sep - mb;
    size_t fw = line_width(c->file), pw = has_path ? line_width(path) : 0;
    size_t fb = fw, pb = pw;
    if (fw + pw > rest) {
        fb = rest - (pw < rest / 2 ? pw : rest / 2);
        if (fb > fw) fb = fw;
        pb = rest - fb;
    }
    if (fb > 160) fb = 160;
    size_t o = 0;
    put_part(c->err, &o, fb, c->file, true);
    memcpy(c->err + o, ": ", 3), o += 2;
    if (has_path) {
        put_part(c->err, &o, pb, path, false);
        memcpy(c->err + o, ": ", 3), o += 2;
    }
    put_part(c->err, &o, mb, msg, false);
    c->err[o] = '\0';
    return false;
}

// Paths longer than PATH_MAX_LEN are cut (they only appear in messages).
// The cut is made before a whole character: the path stays valid UTF-8.
static void path_cut(char *out)
{
    size_t k = PATH_MAX_LEN - 4;
    while (k > 0 && ((unsigned char)out[k] & 0xC0) == 0x80) k--;
    memcpy(out + k, "...", 4);
}

static void path_key(char *out, const char *base, const char *key)
{
    if ((*base ? snprintf(out, PATH_MAX_LEN, "%s.%s", base, key)
               : snprintf(out, PATH_MAX_LEN, "%s", key)) >= PATH_MAX_LEN)
        path_cut(out);
}

static void path_index(char *out, const char *base, int i)
{
    if (snprintf(out, PATH_MAX_LEN, "%s[%d]", base, i) >= PATH_MAX_LEN) path_cut(out);
}

static const char *json_type_name(const cJSON *j)
{
    if (!j) return "nothing";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "an invalid value";
}

// --- objects: known keys only, no duplicates ---------------------------------

static bool check_keys(Ctx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        bool known = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(it->string, *a) == 0) known = true;
        char p[PATH_MAX_LEN];
        path_key(p, path, it->string);
        if (!known) {
            char list[256] = "";
            size_t used = 0;
            for (const char *const *a = allowed; *a && used < sizeof list; a++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                         a == allowed ? "" : ", ", *a);
            return fail(c, p, "unknown key; expected one of: %s", list);
        }
        for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
            if (strcmp(prev->string, it->string) == 0)
                return fail(c, p, "duplicate key; each key may appear once");
    }
    return true;
}

static bool get_int(Ctx *c, const cJSON *obj, const char *path, const char *key, int *out,
                    int lo, int hi, bool required, int dflt)
{
    char p[PATH_MAX_LEN];
    path_key(p, path, key);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required) return fail(c, p, "missing; expected an integer from %d to %d", lo, hi);
        *out = dflt;
        return true;
    }
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble))
        return fail(c, p, "expected an integer from %d to %d, got %s", lo, hi,
                    cJSON_IsNumber(j) ? "a fraction" : json_type_name(j));
    if (j->valuedouble < lo || j->valuedouble > hi)
        return fail(c, p, "%.15g is out of range; expected an integer from %d to %d",
                    j->valuedouble, lo, hi);
    *out = (int)j->valuedouble;
    return true;
}

static bool get_bool(Ctx *c, const cJSON *obj, const char *path, const char *key, bool *out,
                     bool dflt)
{
    char p[PATH_MAX_LEN];
    path_key(p, path, key);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        *out = dflt;
        return true;
    }
    if (!cJSON_IsBool(j)) return fail(c, p, "expected true or false, got %s", json_type_name(j));
    *out = cJSON_IsTrue(j);
    return true;
}

// FLT_MAX + half an ulp (2^103): below it a number rounds to a finite float32
// (FLT_MAX at most); at it, the tie goes to the even neighbour, infinity.
#define FLOAT32_INF_FROM 0x1.ffffffp127

// A number that rounds to a finite float32: -3.40282347e+38 (what from_torch.py
// writes for torch.finfo(torch.float32).min) is float32's lowest value.
static bool number_value(Ctx *c, const cJSON *j, const char *p, float *out)
{
    if (!cJSON_IsNumber(j)) return fail(c, p, "expected a number, got %s", json_type_name(j));
    double v = j->valuedouble;
    // cJSON reads doubles: a decimal just under the halfway point reads as it. The text
    // decides (json_scan): when every such number of the file rounds down as a decimal,
    // it is FLT_MAX (a file mixing both kinds is refused: they cannot be told apart here)
    if (fabs(v) == FLOAT32_INF_FROM && c->halfway_down && !c->halfway_up) {
        *out = v > 0 ? FLT_MAX : -FLT_MAX;
        return true;
    }
    if (!isfinite(v) || fabs(v) >= FLOAT32_INF_FROM)
        return fail(c, p, "number out of float32 range (it rounds to infinity); expected |x| <= 3.40282347e+38");
    *out = (float)v;
    return true;
}

// --- text: "string" or {"en": ..., "zh": ...} ---------------------------------

// Titles and tokens are one line: no control characters. Narration may hold
// line breaks and tabs.
// C0, DEL and C1 (U+0080-U+009F, e.g. U+0085 NEL, U+009B CSI) are control characters.
static bool no_controls(Ctx *c, const char *s, const char *p, bool allow_newline)
{
    size_t n = strlen(s);
    uint32_t cp;
    for (size_t i = 0, k; i < n; i += k) {
        k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) return fail(c, p, "invalid UTF-8 in the text; expected UTF-8 text");
        if ((cp < 0x20 && !(allow_newline && (cp == '\n' || cp == '\t'))) || (cp >= 0x7f && cp <= 0x9f))
            return fail(c, p, "control character U+%04X in the text; expected printable text",
                        (unsigned)cp);
    }
    return true;
}

static bool text_check(Ctx *c, const cJSON *j, const char *p, bool multiline)
{
    if (!cJSON_IsString(j)) return fail(c, p, "expected a string, got %s", json_type_name(j));
    if (strlen(j->valuestring) > LESSON_MAX_TEXT)
        return fail(c, p, "text longer than %d bytes", LESSON_MAX_TEXT);
    return no_controls(c, j->valuestring, p, multiline);
}

static bool get_text(Ctx *c, const cJSON *j, const char *path, bool multiline, char *out[LANG_COUNT])
{
    out[LANG_EN] = out[LANG_ZH] = NULL;
    if (cJSON_IsString(j)) {
        if (!text_check(c, j, path, multiline)) return false;
        out[LANG_EN] = strdup(j->valuestring);
        return out[LANG_EN] || fail(c, path, "out of memory");
    }
    if (!cJSON_IsObject(j))
        return fail(c, path, "expected a string or {\"en\": ..., \"zh\": ...}, got %s",
                    json_type_name(j));
    static const char *const keys[] = {"en", "zh", NULL};
    if (!check_keys(c, j, path, keys)) return false;
    char p[PATH_MAX_LEN];
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(j, "en");
    const cJSON *zh = cJSON_GetObjectItemCaseSensitive(j, "zh");
    path_key(p, path, "en");
    if (!en) return fail(c, p, "missing; expected the English text");
    if (!text_check(c, en, p, multiline)) return false;
    if (zh) {
        path_key(p, path, "zh");
        if (!text_check(c, zh, p, multiline)) return false;
    }
    out[LANG_EN] = strdup(en->valuestring);
    out[LANG_ZH] = zh ? strdup(zh->valuestring) : NULL;
    if (!out[LANG_EN] || (zh && !out[LANG_ZH])) return fail(c, path, "out of memory");
    return true;
}

// --- tensors -------------------------------------------------------------------
// Nested arrays; {"shape": [...], "data": [flat]}; {"shape": [...], "arange": [start, stop, step]}.

typedef struct TensorOpts {
    bool allow_bool;   // masks: true/false as 1/0
} TensorOpts;

static bool shape_from_json(Ctx *c, const cJSON *arr, const char *p, int *rank, int *shape)
{
    if (!cJSON_IsArray(arr))
        return fail(c, p, "expected an array of dimensions, got %s", json_type_name(arr));
    int n = cJSON_GetArraySize(arr);
    if (n < 1 || n > TENSOR_MAX_RANK)
        return fail(c, p, "expected 1 to %d dimensions, got %d", TENSOR_MAX_RANK, n);
    int i = 0;
    for (const cJSON *d = arr->child; d; d = d->next, i++) {
        char pi[PATH_MAX_LEN];
        path_index(pi, p, i);
        if (!cJSON_IsNumber(d) || d->valuedouble != floor(d->valuedouble) || d->valuedouble < 1 ||
            d->valuedouble > LESSON_MAX_ELEMS)
            return fail(c, pi, "expected a dimension from 1 to %u", LESSON_MAX_ELEMS);
        shape[i] = (int)d->valuedouble;
    }
    *rank = n;
    if (tensor_shape_size(n, shape, LESSON_MAX_ELEMS) == 0)
        return fail(c, p, "tensor too large; at most %u elements", LESSON_MAX_ELEMS);
    return true;
}

static bool element(Ctx *c, const cJSON *j, const char *p, const TensorOpts *o, float *out)
{
    if (o->allow_bool && cJSON_IsBool(j)) {
        *out = cJSON_IsTrue(j) ? 1.0f : 0.0f;
        return true;
    }
    return number_value(c, j, p, out);
}

// Walks the first elements to find the shape of nested arrays.
static bool nested_shape(Ctx *c, const cJSON *j, const char *path, int *rank, int *shape)
{
    int r = 0;
    const cJSON *cur = j;
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "%s", path);
    while (cJSON_IsArray(cur)) {
        if (r == TENSOR_MAX_RANK)
            return fail(c, p, "too deeply nested; tensors have at most %d dimensions",
                        TENSOR_MAX_RANK);
        int n = cJSON_GetArraySize(cur);
        if (n == 0) return fail(c, p, "empty array; every dimension needs at least 1 element");
        if ((unsigned)n > LESSON_MAX_ELEMS) return fail(c, p, "array too long");
        shape[r++] = n;
        char q[PATH_MAX_LEN];
        path_index(q, p, 0);
        snprintf(p, sizeof p, "%s", q);
        cur = cur->child;
    }
    if (r == 0) return fail(c, path, "expected a tensor (nested arrays of numbers, or {\"shape\", \"data\"} or {\"shape\", \"arange\"}), got %s", json_type_name(j));
    *rank = r;
    if (tensor_shape_size(r, shape, LESSON_MAX_ELEMS) == 0)
        return fail(c, path, "tensor too large; at most %u elements", LESSON_MAX_ELEMS);
    return true;
}

static bool nested_fill(Ctx *c, const cJSON *j, const char *p, const TensorOpts *o, int depth,
                        int rank, const int *shape, float **dst)
{
    if (depth == rank) return element(c, j, p, o, (*dst)++);
    if (!cJSON_IsArray(j))
        return fail(c, p, "expected an array of %d elements (a ragged tensor?), got %s",
                    shape[depth], json_type_name(j));
    if (cJSON_GetArraySize(j) != shape[depth])
        return fail(c, p, "expected %d elements like its siblings, got %d", shape[depth],
                    cJSON_GetArraySize(j));
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char q[PATH_MAX_LEN];
        path_index(q, p, i);
        if (!nested_fill(c, e, q, o, depth + 1, rank, shape, dst)) return false;
    }
    return true;
}

static bool parse_tensor(Ctx *c, const cJSON *j, const char *p, const TensorOpts *o, Tensor *t)
{
    int rank = 0, shape[TENSOR_MAX_RANK] = {0};
    memset(t, 0, sizeof *t);
    if (cJSON_IsObject(j)) {
        static const char *const keys[] = {"shape", "data", "arange", NULL};
        if (!check_keys(c, j, p, keys)) return false;
        char ps[PATH_MAX_LEN], pd[PATH_MAX_LEN];
        path_key(ps, p, "shape");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "shape");
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(j, "data");
        const cJSON *ja = cJSON_GetObjectItemCaseSensitive(j, "arange");
        if (!js) return fail(c, ps, "missing; expected the tensor's shape, e.g. [2, 4, 4]");
        if (!shape_from_json(c, js, ps, &rank, shape)) return false;
        if ((jd != NULL) == (ja != NULL))
            return fail(c, p, "expected exactly one of \"data\" (flat values) or \"arange\" ([start, stop, step])");
        size_t n = tensor_shape_size(rank, shape, LESSON_MAX_ELEMS);
        if (jd) {
            path_key(pd, p, "data");
            if (!cJSON_IsArray(jd))
                return fail(c, pd, "expected a flat array of %zu numbers, got %s", n,
                            json_type_name(jd));
            if ((size_t)cJSON_GetArraySize(jd) != n)
                return fail(c, pd, "expected %zu numbers for the shape, got %d", n,
                            cJSON_GetArraySize(jd));
            if (!tensor_init(t, rank, shape)) return fail(c, p, "out of memory");
            size_t i = 0;
            for (const cJSON *e = jd->child; e; e = e->next, i++) {
                char q[PATH_MAX_LEN];
                path_index(q, pd, (int)i);
                if (!element(c, e, q, o, &t->data[i])) return tensor_free(t), false;
            }
            return true;
        }
        path_key(pd, p, "arange");
        int an = cJSON_GetArraySize(ja);
        if (!cJSON_IsArray(ja) || an < 2 || an > 3)
            return fail(c, pd, "expected [start, stop] or [start, stop, step]");
        double v[3] = {0, 0, 1};
        int i = 0;
        for (const cJSON *e = ja->child; e; e = e->next, i++) {
            char q[PATH_MAX_LEN];
            path_index(q, pd, i);
            float f;
            if (!number_value(c, e, q, &f)) return false;
            v[i] = e->valuedouble;
        }
        if (v[2] == 0.0) return fail(c, pd, "step must not be 0");
        double count = ceil((v[1] - v[0]) / v[2]);
        if (count != (double)n)
            return fail(c, pd, "gives %.6g values but the shape holds %zu", count < 0 ? 0 : count,
                        n);
        if (!tensor_init(t, rank, shape)) return fail(c, p, "out of memory");
        for (size_t k = 0; k < n; k++) t->data[k] = (float)(v[0] + (double)k * v[2]);
        return true;
    }
    if (!nested_shape(c, j, p, &rank, shape)) return false;
    if (!tensor_init(t, rank, shape)) return fail(c, p, "out of memory");
    float *dst = t->data;
    if (!nested_fill(c, j, p, o, 0, rank, shape, &dst)) return tensor_free(t), false;
    return true;
}

static void shape_text(int rank, const int *shape, char *buf, size_t n)
{
    Tensor tmp = {0};
    tmp.rank = rank;
    memcpy(tmp.shape, shape, (size_t)rank * sizeof(int));
    tensor_shape_str(&tmp, buf, n);
}

// written: the shape as the lesson wrote it (before any per-head stacking).
static bool expect_shape(Ctx *c, const char *p, const Tensor *t, int rank, const int *shape,
                         const char *written)
{
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->shape[i] == shape[i];
    if (ok) return true;
    char want[64];
    shape_text(rank, shape, want, sizeof want);
    return fail(c, p, "expected shape %s, got %s", want, written);
}

// --- model ---------------------------------------------------------------------

static bool parse_model(Ctx *c, const cJSON *m, AttnConfig *cfg)
{
    const char *P = "model";
    if (!m) return fail(c, P, "missing; expected an object with d_model and n_heads");
    if (!cJSON_IsObject(m)) return fail(c, P, "expected an object, got %s", json_type_name(m));
    static const char *const keys[] = {"d_model", "n_heads", "d_k", "d_v", "qkv_bias",
                                       "out_bias", "scale", "mask_fill", "residual_norm",
                                       "norm_eps", "ffn_hidden", "n_kv_heads", "rope", "alibi", "decode",
                                       "flash", NULL};
    if (!check_keys(c, m, P, keys)) return false;
    if (!get_int(c, m, P, "d_model", &cfg->d_model, 1, LESSON_MAX_D_MODEL, true, 0)) return false;
    if (!get_int(c, m, P, "n_heads", &cfg->n_heads, 1, LESSON_MAX_HEADS, true, 0)) return false;
    bool has_dk = cJSON_GetObjectItemCaseSensitive(m, "d_k") != NULL;
    if (!has_dk && cfg->d_model % cfg->n_heads != 0)
        return fail(c, "model.n_heads", "%d does not divide d_model %d (or give model.d_k)",
                    cfg->n_heads, cfg->d_model);
    if (!get_int(c, m, P, "d_k", &cfg->d_k, 1, LESSON_MAX_D_HEAD, false,
                 cfg->d_model / cfg->n_heads))
        return false;
    if (!get_int(c, m, P, "d_v", &cfg->d_v, 1, LESSON_MAX_D_HEAD, false, cfg->d_k)) return false;
    if ((long)cfg->n_heads * cfg->d_k > LESSON_MAX_D_MODEL * 4L ||
        (long)cfg->n_heads * cfg->d_v > LESSON_MAX_D_MODEL * 4L)
        return fail(c, P, "n_heads·d_k and n_heads·d_v must be at most %d", LESSON_MAX_D_MODEL * 4);
    if (!get_bool(c, m, P, "qkv_bias", &cfg->qkv_bias, true)) return false;
    if (!get_bool(c, m, P, "out_bias", &cfg->out_bias, true)) return false;
    if (!get_bool(c, m, P, "residual_norm", &cfg->residual_norm, false)) return false;
    if (!get_int(c, m, P, "ffn_hidden", &cfg->ffn_hidden, 0, LESSON_MAX_FFN, false, 0))
        return false;
    // grouped-query attention: n_kv_heads K/V heads, each shared by n_heads / n_kv_heads query heads
    if (!get_int(c, m, P, "n_kv_heads", &cfg->n_kv_heads, 1, LESSON_MAX_HEADS, false, cfg->n_heads))
        return false;
    if (cfg->n_heads % cfg->n_kv_heads != 0)
        return fail(c, "model.n_kv_heads", "%d does not divide n_heads %d; expected a divisor (1 = multi-query)",
                    cfg->n_kv_heads, cfg->n_heads);
    if (!get_bool(c, m, P, "alibi", &cfg->alibi, false)) return false;
    if (!get_bool(c, m, P, "decode", &cfg->decode, false)) return false;
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(m, "flash");
    cfg->flash_block_q = cfg->flash_block_k = 0;
    if (fl && !cJSON_IsNull(fl)) {
        if (!cJSON_IsObject(fl))
            return fail(c, "model.flash", "expected {\"block_q\": a, \"block_k\": b}, got %s", json_type_name(fl));
        static const char *const fkeys[] = {"block_q", "block_k", NULL};
        if (!check_keys(c, fl, "model.flash", fkeys)) return false;
        if (!get_int(c, fl, "model.flash", "block_q", &cfg->flash_block_q, 1, LESSON_MAX_LEN, true, 0)) return false;
        if (!get_int(c, fl, "model.flash", "block_k", &cfg->flash_block_k, 1, LESSON_MAX_LEN, true, 0)) return false;
    }
    const cJSON *rope = cJSON_GetObjectItemCaseSensitive(m, "rope");
    cfg->rope = ROPE_NONE;
    cfg->rope_theta = 10000.0f;
    if (rope && !cJSON_IsNull(rope)) {
        const char *PR = "model.rope";
        if (!cJSON_IsObject(rope))
            return fail(c, PR, "expected {\"theta\": 10000, \"style\": \"half\" or \"interleaved\"}, got %s",
                        json_type_name(rope));
        static const char *const rkeys[] = {"theta", "style", NULL};
        if (!check_keys(c, rope, PR, rkeys)) return false;
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(rope, "theta");
        if (th) {
            if (!number_value(c, th, "model.rope.theta", &cfg->rope_theta)) return false;
            if (!(cfg->rope_theta > 1.0f))
                return fail(c, "model.rope.theta", "expected a base above 1 (Llama: 10000), got %g",
                            (double)cfg->rope_theta);
        }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(rope, "style");
        cfg->rope = ROPE_HALF;
        if (st) {
            if (cJSON_IsString(st) && strcmp(st->valuestring, "interleaved") == 0)
                cfg->rope = ROPE_INTERLEAVED;
            else if (!cJSON_IsString(st) || strcmp(st->valuestring, "half") != 0)
                return fail(c, "model.rope.style", "expected \"half\" (Llama's rotate_half) or \"interleaved\" "
                                                   "(Meta / GPT-J pairs), got %s",
                            cJSON_IsString(st) ? "another string" : json_type_name(st));
        }
        if (cfg->d_k % 2 != 0)
            return fail(c, PR, "needs an even d_k (RoPE turns pairs of dimensions), got d_k %d", cfg->d_k);
        if (cfg->alibi)
            return fail(c, "model.alibi", "RoPE and ALiBi are two ways of giving positions; expected one of them, not both");
    }

    const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, "scale");
    cfg->scale = sqrtf((float)cfg->d_k);
    if (j) {
        if (!number_value(c, j, "model.scale", &cfg->scale)) return false;
        if (!(cfg->scale > 0.0f))
            return fail(c, "model.scale", "expected a positive divisor (default sqrt(d_k)), got %g",
                        (double)cfg->scale);
    }
    j = cJSON_GetObjectItemCaseSensitive(m, "mask_fill");
    cfg->mask_fill = -1e9f;
    if (j) {
        if (cJSON_IsString(j)) {
            if (strcmp(j->valuestring, "-inf") != 0)
                return fail(c, "model.mask_fill", "expected a number or \"-inf\", got \"%.40s\"",
                            j->valuestring);
            cfg->mask_fill = -INFINITY;
        } else if (!number_value(c, j, "model.mask_fill", &cfg->mask_fill)) {
            return false;
        }
    }
    j = cJSON_GetObjectItemCaseSensitive(m, "norm_eps");
    cfg->norm_eps = 1e-5f;
    if (j) {
        if (!number_value(c, j, "model.norm_eps", &cfg->norm_eps)) return false;
        if (!(cfg->norm_eps > 0.0f))
            return fail(c, "model.norm_eps", "expected a small positive number, got %g",
                        (double)cfg->norm_eps);
    }
    return true;
}

// --- input -----------------------------------------------------------------------

// A (L, C) input becomes (1, L, C).
static bool input_tensor(Ctx *c, const cJSON *j, const char *p, int d_model, Tensor *t)
{
    TensorOpts o = {false};
    if (!parse_tensor(c, j, p, &o, t)) return false;
    if (t->rank == 2) {
        t->shape[2] = t->shape[1], t->shape[1] = t->shape[0], t->shape[0] = 1, t->rank = 3;
    }
    char got[64];
    tensor_shape_str(t, got, sizeof got);
    if (t->rank != 3) return fail(c, p, "expected shape (B, L, %d) or (L, %d), got %s", d_model, d_model, got);
    if (t->shape[2] != d_model)
        return fail(c, p, "last dimension %d must equal d_model %d", t->shape[2], d_model);
    if (t->shape[0] > LESSON_MAX_BATCH)
        return fail(c, p, "batch %d is over the limit of %d", t->shape[0], LESSON_MAX_BATCH);
    if (t->shape[1] > LESSON_MAX_LEN)
        return fail(c, p, "length %d is over the limit of %d", t->shape[1], LESSON_MAX_LEN);
    return true;
}

static bool parse_input(Ctx *c, const cJSON *in, const AttnConfig *cfg, AttnInputs *ai)
{
    const char *P = "input";
    if (!in) return fail(c, P, "missing; expected an object with a \"query\" tensor");
    if (!cJSON_IsObject(in)) return fail(c, P, "expected an object, got %s", json_type_name(in));
    static const char *const keys[] = {"query", "key", "value", NULL};
    if (!check_keys(c, in, P, keys)) return false;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(in, "query");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(in, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "value");
    if (!q) return fail(c, "input.query", "missing; expected a (B, L, %d) tensor", cfg->d_model);
    if (!input_tensor(c, q, "input.query", cfg->d_model, &ai->query)) return false;

    // key: a tensor, or "query" (the default)
    ai->key_is_query = true;
    if (k && cJSON_IsString(k)) {
        if (strcmp(k->valuestring, "query") != 0)
            return fail(c, "input.key", "expected a tensor or \"query\", got \"%.40s\"", k->valuestring);
    } else if (k) {
        ai->key_is_query = false;
        if (!input_tensor(c, k, "input.key", cfg->d_model, &ai->key)) return false;
        if (ai->key.shape[0] != ai->query.shape[0])
            return fail(c, "input.key", "batch %d differs from the query's batch %d",
                        ai->key.shape[0], ai->query.shape[0]);
    }
    if (ai->key_is_query && !tensor_copy(&ai->key, &ai->query)) return fail(c, P, "out of memory");

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
            return fail(c, "input.value", "expected a tensor, \"key\" or \"query\", got \"%.40s\"",
                        v->valuestring);
        }
        if (!tensor_copy(&ai->value, src)) return fail(c, P, "out of memory");
    } else if (v) {
        ai->value_is_key = false;
        if (!input_tensor(c, v, "input.value", cfg->d_model, &ai->value)) return false;
    } else if (!tensor_copy(&ai->value, src)) {
        return fail(c, P, "out of memory");
    }
    if (ai->value.shape[0] != ai->key.shape[0] || ai->value.shape[1] != ai->key.shape[1])
        return fail(c, "input.value", "has %d×%d positions but the key has %d×%d (B×L must match)",
                    ai->value.shape[0], ai->value.shape[1], ai->key.shape[0], ai->key.shape[1]);
    return true;
}

// --- mask ------------------------------------------------------------------------

static bool parse_mask(Ctx *c, const cJSON *m, int B, int Lq, int Lk, AttnInputs *ai)
{
    const char *P = "mask";
    ai->mask_kind = MASK_NONE;
    if (!m || cJSON_IsNull(m)) return true;
    int full[3] = {B, Lq, Lk};
    if (cJSON_IsString(m)) {
        if (strcmp(m->valuestring, "causal") != 0)
            return fail(c, P, "expected null, \"causal\", a 0/1 tensor, {\"key_padding\": [...]} or {\"sliding_window\": W}, got \"%.40s\"",
                        m->valuestring);
        ai->mask_kind = MASK_CAUSAL;
        if (!tensor_init(&ai->mask, 3, full)) return fail(c, P, "out of memory");
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j <= i ? 1.0f : 0.0f;
        return true;
    }
    if (cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "sliding_window")) {
        static const char *const keys[] = {"sliding_window", NULL};
        if (!check_keys(c, m, P, keys)) return false;
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(m, "sliding_window");
        const char *PW = "mask.sliding_window";
        if (!cJSON_IsNumber(w) || w->valuedouble != floor(w->valuedouble) || w->valuedouble < 1 ||
            w->valuedouble > LESSON_MAX_LEN)
            return fail(c, PW, "expected a window W from 1 to %d (query i sees keys i-W < j <= i)", LESSON_MAX_LEN);
        if (Lq != Lk)
            return fail(c, PW, "needs as many queries as keys (self-attention), got %d queries and %d keys", Lq, Lk);
        ai->mask_kind = MASK_SLIDING;
        ai->window = (int)w->valuedouble;
        if (!tensor_init(&ai->mask, 3, full)) return fail(c, P, "out of memory");
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j <= i && j > i - ai->window ? 1.0f : 0.0f;
        return true;
    }
    if (cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "key_padding")) {
        static const char *const keys[] = {"key_padding", NULL};
        if (!check_keys(c, m, P, keys)) return false;
        const cJSON *kp = cJSON_GetObjectItemCaseSensitive(m, "key_padding");
        const char *PK = "mask.key_padding";
        if (!cJSON_IsArray(kp) || cJSON_GetArraySize(kp) != B)
            return fail(c, PK, "expected an array of %d key lengths (one per batch), got %s", B,
                        cJSON_IsArray(kp) ? "a different count" : json_type_name(kp));
        ai->mask_kind = MASK_KEY_PADDING;
        if (!tensor_init(&ai->mask, 3, full)) return fail(c, P, "out of memory");
        int b = 0;
        for (const cJSON *e = kp->child; e; e = e->next, b++) {
            char p[PATH_MAX_LEN];
            path_index(p, PK, b);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 0 || e->valuedouble > Lk)
                return fail(c, p, "expected a key length from 0 to %d", Lk);
            int len = (int)e->valuedouble;
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++)
                    ai->mask.data[((size_t)b * Lq + i) * Lk + j] = j < len ? 1.0f : 0.0f;
        }
        return true;
    }
    // A 0/1 tensor broadcast (numpy rules, right-aligned) to (B, Lq, Lk); a rank-4
    // mask must have 1 in the head dimension: (B, 1, Lq, Lk) or (B, 1, 1, Lk).
    TensorOpts o = {true};
    Tensor t;
    if (!cJSON_IsArray(m) && !cJSON_IsObject(m))
        return fail(c, P, "expected null, \"causal\", a 0/1 tensor, {\"key_padding\": [...]} or {\"sliding_window\": W}, got %s",
                    json_type_name(m));
    if (!parse_tensor(c, m, P, &o, &t)) return false;
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
        return fail(c, P, "shape %s does not broadcast to (B, Lq, Lk) = (%d,%d,%d)", got, B, Lq, Lk);
    }
    for (size_t i = 0; i < t.size; i++) {
        float v = t.data[i];
        if (v != 0.0f && v != 1.0f) {
            tensor_free(&t);
            return fail(c, P, "mask values must be 0 (masked) or 1 (attend), found %g", (double)v);
        }
    }
    ai->mask_kind = MASK_TENSOR;
    if (!tensor_init(&ai->mask, 3, full)) return tensor_free(&t), fail(c, P, "out of memory");
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

enum { W_Q, B_Q, W_K, B_K, W_V, B_V, W_O, B_O, FFN_W1, FFN_B1, FFN_W2, FFN_B2, NORM_W, NORM_B,
       FFN_NORM_W, FFN_NORM_B, W_COUNT };

static const char *const weight_names[W_COUNT + 2] = {
    "w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o", "ffn_w1", "ffn_b1", "ffn_w2",
    "ffn_b2", "norm_weight", "norm_bias", "ffn_norm_weight", "ffn_norm_bias", "init", NULL};

float lesson_init_value(unsigned long long seed, int tensor_index, size_t elem_index, int fan_in)
{
    const uint64_t G = 0x9E3779B97F4A7C15ull;
    uint64_t z = ((uint64_t)seed ^ (G * (uint64_t)(tensor_index + 1))) + (elem_index + 1) * G;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    double u = (double)(z >> 40) * (1.0 / 16777216.0);
    return (float)((2.0 * u - 1.0) / sqrt((double)fan_in));
}

_Static_assert(W_COUNT == LESSON_N_WEIGHTS, "lesson.h names every weight slot");

const char *lesson_weight_name(int i)
{
    return i >= 0 && i < W_COUNT ? weight_names[i] : NULL;
}

Tensor *lesson_weight(AttnWeights *w, int i)
{
    Tensor *slots[W_COUNT] = {&w->w_q, &w->b_q, &w->w_k, &w->b_k, &w->w_v, &w->b_v,
                              &w->w_o, &w->b_o, &w->ffn_w1, &w->ffn_b1, &w->ffn_w2, &w->ffn_b2,
                              &w->norm_weight, &w->norm_bias, &w->ffn_norm_weight,
                              &w->ffn_norm_bias};
    return slots[i];
}

static bool parse_weights(Ctx *c, const cJSON *jw, const AttnConfig *cfg, AttnWeights *w)
{
    const char *P = "weights";
    if (!jw) return fail(c, P, "missing; expected the weight tensors or {\"init\": {\"seed\": N}}");
    if (!cJSON_IsObject(jw)) return fail(c, P, "expected an object, got %s", json_type_name(jw));
    if (!check_keys(c, jw, P, weight_names)) return false;

    const int C = cfg->d_model, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v,
              F = cfg->ffn_hidden, Hkv = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : cfg->n_heads;
    // expected (rank, shape, fan_in, used) per tensor
    struct { int rank; int shape[2]; int fan_in; bool used; bool is_norm; } spec[W_COUNT] = {
        [W_Q] = {2, {H * dk, C}, C, true, false},       [B_Q] = {1, {H * dk}, C, cfg->qkv_bias, false},
        [W_K] = {2, {Hkv * dk, C}, C, true, false},     [B_K] = {1, {Hkv * dk}, C, cfg->qkv_bias, false},
        [W_V] = {2, {Hkv * dv, C}, C, true, false},     [B_V] = {1, {Hkv * dv}, C, cfg->qkv_bias, false},
        [W_O] = {2, {C, H * dv}, H * dv, true, false},  [B_O] = {1, {C}, H * dv, cfg->out_bias, false},
        [FFN_W1] = {2, {F, C}, C, F > 0, false},        [FFN_B1] = {1, {F}, C, F > 0, false},
        [FFN_W2] = {2, {C, F}, F, F > 0, false},        [FFN_B2] = {1, {C}, F, F > 0, false},
        [NORM_W] = {1, {C}, 0, cfg->residual_norm, true},
        [NORM_B] = {1, {C}, 0, cfg->residual_norm, true},
        [FFN_NORM_W] = {1, {C}, 0, F > 0, true},        [FFN_NORM_B] = {1, {C}, 0, F > 0, true},
    };
    static const char *const why[W_COUNT] = {
        [B_Q] = "model.qkv_bias is false", [B_K] = "model.qkv_bias is false",
        [B_V] = "model.qkv_bias is false", [B_O] = "model.out_bias is false",
        [FFN_W1] = "model.ffn_hidden is 0", [FFN_B1] = "model.ffn_hidden is 0",
        [FFN_W2] = "model.ffn_hidden is 0", [FFN_B2] = "model.ffn_hidden is 0",
        [NORM_W] = "model.residual_norm is false", [NORM_B] = "model.residual_norm is false",
        [FFN_NORM_W] = "model.ffn_hidden is 0", [FFN_NORM_B] = "model.ffn_hidden is 0",
    };

    bool have_seed = false;
    double seed = 0;
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(jw, "init");
    if (init) {
        static const char *const keys[] = {"seed", NULL};
        if (!cJSON_IsObject(init))
            return fail(c, "weights.init", "expected {\"seed\": N}, got %s", json_type_name(init));
        if (!check_keys(c, init, "weights.init", keys)) return false;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(init, "seed");
        if (!cJSON_IsNumber(s) || s->valuedouble != floor(s->valuedouble) || s->valuedouble < 0 ||
            s->valuedouble > 9007199254740992.0)
            return fail(c, "weights.init.seed", "expected a whole number from 0 to 2^53, got %s",
                        cJSON_IsNumber(s) ? "another number" : json_type_name(s));
        have_seed = true;
        seed = s->valuedouble;
    }

    for (int i = 0; i < W_COUNT; i++) {
        char p[PATH_MAX_LEN];
        path_key(p, P, weight_names[i]);
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(jw, weight_names[i]);
        Tensor *t = lesson_weight(w, i);
        if (j && !spec[i].used) return fail(c, p, "given but not used: %s", why[i]);
        if (!spec[i].used) continue;
        if (j) {
            TensorOpts o = {false};
            if (!parse_tensor(c, j, p, &o, t)) return false;
            // per-head form: (H, d, C) weights and (H, d) biases stack along the output dim
            bool qkv = i <= B_V;
            char written[64];
            tensor_shape_str(t, written, sizeof written);
            int heads = i <= B_Q ? H : Hkv;   // K and V have their own (n_kv_heads) heads
            if (qkv && t->rank == spec[i].rank + 1 && t->shape[0] == heads) {
                int d = t->shape[1];
                if (spec[i].rank == 2) t->shape[1] = t->shape[2];
                t->shape[0] = heads * d;
                t->rank--;
            }
            if (!expect_shape(c, p, t, spec[i].rank, spec[i].shape, written)) return false;
            continue;
        }
        if (!tensor_init(t, spec[i].rank, spec[i].shape)) return fail(c, p, "out of memory");
        if (spec[i].is_norm) {
            float v = (i == NORM_W || i == FFN_NORM_W) ? 1.0f : 0.0f;
            for (size_t k = 0; k < t->size; k++) t->data[k] = v;
            continue;
        }
        if (!have_seed)
            return fail(c, p, "missing; expected a tensor of shape (%d%s%.0d) or weights.init",
                        spec[i].shape[0], spec[i].rank == 2 ? "," : "",
                        spec[i].rank == 2 ? spec[i].shape[1] : 0);
        for (size_t k = 0; k < t->size; k++)
            t->data[k] = lesson_init_value((unsigned long long)seed, i, k, spec[i].fan_in);
    }
    return true;
}

// --- tokens and steps ------------------------------------------------------------

static void free_strings(char **s, int n)
{
    if (!s) return;
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

static bool token_list(Ctx *c, const cJSON *j, const char *p, int n, char ***out)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n)
        return fail(c, p, "expected an array of %d strings (one per position), got %s", n,
                    cJSON_IsArray(j) ? "a different count" : json_type_name(j));
    *out = calloc((size_t)n, sizeof(char *));
    if (!*out) return fail(c, p, "out of memory");
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char q[PATH_MAX_LEN];
        path_index(q, p, i);
        if (!cJSON_IsString(e)) return fail(c, q, "expected a string, got %s", json_type_name(e));
        if (strlen(e->valuestring) > 64) return fail(c, q, "token longer than 64 bytes");
        if (!no_controls(c, e->valuestring, q, false)) return false;
        if (!((*out)[i] = strdup(e->valuestring))) return fail(c, q, "out of memory");
    }
    return true;
}

static bool parse_tokens(Ctx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (cJSON_IsArray(j)) {   // one list for both sides (self-attention)
        if (!token_list(c, j, "tokens", ls->len_q, &ls->q_tokens)) return false;
        if (ls->len_k != ls->len_q)
            return fail(c, "tokens", "query and key lengths differ; give {\"query\": [...], \"key\": [...]}");
        return token_list(c, j, "tokens", ls->len_k, &ls->k_tokens);
    }
    if (!cJSON_IsObject(j))
        return fail(c, "tokens", "expected an array of strings or {\"query\": [...], \"key\": [...]}, got %s",
                    json_type_name(j));
    static const char *const keys[] = {"query", "key", NULL};
    if (!check_keys(c, j, "tokens", keys)) return false;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "query");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "key");
    if (q && !token_list(c, q, "tokens.query", ls->len_q, &ls->q_tokens)) return false;
    if (!k && q && ls->in.key_is_query) k = q;
    if (k && !token_list(c, k, q == k ? "tokens.query" : "tokens.key", ls->len_k, &ls->k_tokens))
        return false;
    return true;
}

static const char *const step_keys_allowed[] = {
    // steps
    "input", "projection", "split", "rope", "scores", "mask", "softmax", "weighted_sum", "flash", "concat",
    "output", "add_norm", "ffn", "decode",
    // stages
    "key_input", "value_input", "q_proj", "k_proj", "v_proj", "q_heads", "k_heads", "v_heads",
    "q_rope", "k_rope", "position_bias", "flash_max", "flash_sum", "flash_out", "cache_k", "cache_v",
    "decode_output",
    "masked_scores", "attn", "head_out", "residual_sum", "residual_norm", "ffn_hidden", "ffn_sum",
    "ffn_out", NULL};

// "steps" (narration) and "notes" (the teacher's notes): an object from a step or
// stage name to a text, into *n, *keys and text[lang] (arrays of *n + 1).
static bool parse_texts(Ctx *c, const cJSON *j, const char *name, const char *what, int *n_out,
                        char ***keys_out, char **text_out[LANG_COUNT])
{
    if (!j) return true;
    if (!cJSON_IsObject(j))
        return fail(c, name, "expected an object mapping a stage name to its %s, got %s", what,
                    json_type_name(j));
    if (!check_keys(c, j, name, step_keys_allowed)) return false;
    int n = cJSON_GetArraySize(j);
    *keys_out = calloc((size_t)n + 1, sizeof(char *));
    for (int l = 0; l < LANG_COUNT; l++) text_out[l] = calloc((size_t)n + 1, sizeof(char *));
    if (!*keys_out || !text_out[LANG_EN] || !text_out[LANG_ZH]) return fail(c, name, "out of memory");
    for (const cJSON *e = j->child; e; e = e->next) {
        char p[PATH_MAX_LEN];
        path_key(p, name, e->string);
        char *text[LANG_COUNT];
        if (!get_text(c, e, p, true, text)) return false;
        int i = (*n_out)++;
        (*keys_out)[i] = strdup(e->string);
        text_out[LANG_EN][i] = text[LANG_EN];
        text_out[LANG_ZH][i] = text[LANG_ZH];
        if (!(*keys_out)[i]) return fail(c, p, "out of memory");
    }
    return true;
}


// --- the author's questions ("quiz") ---------------------------------------------

static const char *const quiz_keys_allowed[] = {"id", "stage", "question", "answer", "tolerance", "unordered",
                                                "explanation", "batch", "head", "cell", NULL};

static bool plain_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-')) return false;
    return true;
}

static bool parse_one_quiz(Ctx *c, const cJSON *j, const char *p, int index, LessonQuiz *q)
{
    char pk[PATH_MAX_LEN];
    if (!cJSON_IsObject(j)) return fail(c, p, "expected an object {\"stage\", \"question\", \"answer\", ...}, got %s", json_type_name(j));
    if (!check_keys(c, j, p, quiz_keys_allowed)) return false;
    q->batch = q->head = -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    path_key(pk, p, "id");
    if (id && (!cJSON_IsString(id) || strlen(id->valuestring) > 48 || !plain_name(id->valuestring)))
        return fail(c, pk, "expected up to 48 of a-z, 0-9, _ and -");
    char idbuf[32];
    if (id) { // the generated questions' ids are STAGE-KIND…: answers are kept by id, so never the same
        static const char *const kinds[] = {"-shape", "-value", "-argmax", "-masked", "-sum", "-source"};
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            const char *at = strstr(id->valuestring, kinds[k]);
            size_t after = at ? strlen(kinds[k]) : 0;
            if (at && (at[after] == '\0' || at[after] == '-'))
                return fail(c, pk, "\"%s\" has the form of a generated question's id (STAGE%s…); expected another name",
                            id->valuestring, kinds[k]);
        }
    }
    snprintf(idbuf, sizeof idbuf, "authored-%d", index + 1);
    q->id = strdup(id ? id->valuestring : idbuf);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stage");
    path_key(pk, p, "stage");
    if (!st) return fail(c, pk, "missing; expected the name of the stage that asks it, e.g. \"attn\"");
    if (!cJSON_IsString(st) || strlen(st->valuestring) >= 24 || !plain_name(st->valuestring))
        return fail(c, pk, "expected a stage name such as \"attn\", got %s", json_type_name(st));
    q->stage = strdup(st->valuestring);
    const cJSON *qt = cJSON_GetObjectItemCaseSensitive(j, "question");
    path_key(pk, p, "question");
    if (!qt) return fail(c, pk, "missing; expected a string or {\"en\": ..., \"zh\": ...}");
    if (!get_text(c, qt, pk, true, q->question)) return false;
    for (int l = 0; l < LANG_COUNT; l++) // what the study box and --quiz hold (quiz.h)
        if (q->question[l] && (!q->question[l][0] || strlen(q->question[l]) > LESSON_QUIZ_MAX_QUESTION))
            return fail(c, pk, "%s text %s; expected 1 to %d bytes", l == LANG_EN ? "the English" : "the Chinese",
                        q->question[l][0] ? "too long" : "empty", LESSON_QUIZ_MAX_QUESTION);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "explanation");
    path_key(pk, p, "explanation");
    if (ex && !get_text(c, ex, pk, true, q->explanation)) return false;
    for (int l = 0; l < LANG_COUNT; l++)
        if (q->explanation[l] && strlen(q->explanation[l]) > LESSON_QUIZ_MAX_EXPLANATION)
            return fail(c, pk, "%s text too long; expected at most %d bytes", l == LANG_EN ? "the English" : "the Chinese",
                        LESSON_QUIZ_MAX_EXPLANATION);
    const cJSON *an = cJSON_GetObjectItemCaseSensitive(j, "answer");
    path_key(pk, p, "answer");
    if (!an) return fail(c, pk, "missing; expected a number or a list of numbers");
    if (cJSON_IsArray(an)) {
        int n = cJSON_GetArraySize(an);
        if (n < 1 || n > LESSON_QUIZ_MAX_ANSWER)
            return fail(c, pk, "expected 1 to %d numbers, got %d", LESSON_QUIZ_MAX_ANSWER, n);
        q->list = true;
        int i = 0;
        for (const cJSON *e = an->child; e; e = e->next, i++) {
            char pi[PATH_MAX_LEN];
            path_index(pi, pk, i);
            if (!number_value(c, e, pi, &q->answer[i])) return false;
        }
        q->n_answer = n;
    } else {
        if (!number_value(c, an, pk, &q->answer[0])) return false;
        q->n_answer = 1;
    }
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    path_key(pk, p, "tolerance");
    if (tol) {
        if (!number_value(c, tol, pk, &q->tolerance)) return false;
        if (q->tolerance < 0) return fail(c, pk, "expected a number >= 0");
        q->has_tolerance = true;
    } else {
        q->tolerance = q->list ? 0.0f : 0.005f;
    }
    if (!get_bool(c, j, p, "unordered", &q->unordered, false)) return false;
    path_key(pk, p, "unordered");
    if (q->unordered && !q->list) return fail(c, pk, "only a list answer can be unordered");
    if (!get_int(c, j, p, "batch", &q->batch, 0, LESSON_MAX_BATCH - 1, false, -1)) return false;
    if (!get_int(c, j, p, "head", &q->head, 0, LESSON_MAX_HEADS - 1, false, -1)) return false;
    const cJSON *cell = cJSON_GetObjectItemCaseSensitive(j, "cell");
    path_key(pk, p, "cell");
    if (cell) {
        int n = cJSON_IsArray(cell) ? cJSON_GetArraySize(cell) : -1;
        if (n < 1 || n > 2) return fail(c, pk, "expected [row] or [row, column]");
        int i = 0;
        for (const cJSON *e = cell->child; e; e = e->next, i++) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
                e->valuedouble > LESSON_MAX_ELEMS)
                return fail(c, pk, "expected [row] or [row, column] of whole numbers >= 0");
            q->cell[i] = (int)e->valuedouble;
        }
        q->n_cell = n;
    }
    if (!q->id || !q->stage) return fail(c, p, "out of memory");
    return true;
}

static bool parse_quiz(Ctx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (!cJSON_IsArray(j)) return fail(c, "quiz", "expected a list of questions, got %s", json_type_name(j));
    int n = cJSON_GetArraySize(j);
    if (n > LESSON_MAX_QUIZ) return fail(c, "quiz", "%d questions; expected at most %d", n, LESSON_MAX_QUIZ);
    if (n == 0) return true;
    ls->quiz = calloc((size_t)n, sizeof *ls->quiz);
    if (!ls->quiz) return fail(c, "quiz", "out of memory");
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char p[PATH_MAX_LEN];
        path_index(p, "quiz", i);
        ls->n_quiz = i + 1;
        if (!parse_one_quiz(c, e, p, i, &ls->quiz[i])) return false;
        for (int k = 0; k < i; k++)
            if (strcmp(ls->quiz[k].id, ls->quiz[i].id) == 0) {
                char pk[PATH_MAX_LEN], pi[PATH_MAX_LEN];
                if (!cJSON_GetObjectItemCaseSensitive(e, "id")) {
                    // quiz[i] has no id: its name authored-(i+1) was written as quiz[k]'s id
                    path_index(pi, "quiz", k);
                    path_key(pk, pi, "id");
                    return fail(c, pk, "\"%s\" is the name of quiz[%d], which has no id of its own; expected "
                                "another id", ls->quiz[i].id, i);
                }
                path_key(pk, p, "id");
                return fail(c, pk, "\"%s\" is used twice; expected a different id for each question", ls->quiz[i].id);
            }
    }
    return true;
}

bool lesson_check_quiz(const Lesson *ls, const Trace *tr, char *err, size_t err_len)
{
    Ctx cc = {0};
    Ctx *c = &cc;
    c->file = ls->path ? ls->path : "lesson", c->err = err, c->err_len = err_len;
    for (int i = 0; i < ls->n_quiz; i++) {
        const LessonQuiz *q = &ls->quiz[i];
        char p[PATH_MAX_LEN], pk[PATH_MAX_LEN];
        path_index(p, "quiz", i);
        int s = trace_find(tr, q->stage);
        path_key(pk, p, "stage");
        if (s < 0) {
            char list[400] = "";
            size_t used = 0;
            for (int k = 0; k < tr->n && used < sizeof list; k++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", tr->stages[k].name);
            return fail(c, pk, "\"%s\" is not a stage of this lesson; expected one of: %s", q->stage, list);
        }
        const Tensor *t = &tr->stages[s].t;
        int rows = t->rank >= 2 ? t->shape[t->rank - 2] : 1, cols = t->shape[t->rank - 1];
        path_key(pk, p, "batch");
        if (q->batch >= 0 && q->batch >= t->shape[0])
            return fail(c, pk, "%d is out of range; expected 0 to %d", q->batch, t->shape[0] - 1);
        path_key(pk, p, "head");
        if (q->head >= 0 && (t->rank != 4 || q->head >= t->shape[1]))
            return t->rank != 4 ? fail(c, pk, "stage %s has no heads", q->stage)
                                : fail(c, pk, "%d is out of range; expected 0 to %d", q->head, t->shape[1] - 1);
        path_key(pk, p, "cell");
        if (q->n_cell >= 1 && q->cell[0] >= rows)
            return fail(c, pk, "row %d is out of range; expected 0 to %d", q->cell[0], rows - 1);
        if (q->n_cell == 2 && q->cell[1] >= cols)
            return fail(c, pk, "column %d is out of range; expected 0 to %d", q->cell[1], cols - 1);
    }
    return true;
}

// --- the file as a whole ---------------------------------------------------------

static void offset_to_line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1, *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++, *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

// The length of the JSON number at s (n bytes), by RFC 8259's grammar
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, or 0 when s does not start one.
static size_t json_number_len(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return 0;
    if (s[i] == '0') i++;
    else while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    return i;
}

static bool number_char(char ch)
{
    return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E';
}

typedef struct Scan {
    bool early;          // the text stops inside a string or with brackets open
    size_t deep_at;      // where nesting first passes LESSON_MAX_NESTING levels, or len
    size_t bad_number;   // the first number cJSON would take that JSON does not allow
                         // ("01", "1.", "-.5", "1.e5"), or len
    size_t values;       // an upper bound of the JSON values: commas + containers + 1
    bool halfway_down, halfway_up; // numbers reading as the double FLT_MAX + 2^103 (see Ctx)
} Scan;

// One pass over the text before cJSON builds anything: brackets and commas
// outside strings, and every number by JSON's grammar (cJSON reads numbers
// with strtod, which also takes "01").
static Scan json_scan(const char *text, size_t len)
{
    Scan s = {false, len, len, 1, false, false};
    long depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\') i++;
            else if (ch == '"') in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            s.values++;
            if (++depth > LESSON_MAX_NESTING && s.deep_at == len) s.deep_at = i;
        } else if (ch == '}' || ch == ']') {
            depth--;
        } else if (ch == ',') {
            s.values++;
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            size_t run = 1;
            while (i + run < len && number_char(text[i + run])) run++;
            if (json_number_len(text + i, run) != run && s.bad_number == len) s.bad_number = i;
            // (within 2^74 of the halfway point takes 17 significant digits: 3.40282356779733…e38)
            if (run >= 20 && run < 400 && text[i + (text[i] == '-')] == '3') {
                char num[400];
                memcpy(num, text + i, run);
                num[run] = '\0';
                if (fabs(strtod(num, NULL)) == FLOAT32_INF_FROM) {
                    if (isfinite(strtof(num, NULL))) s.halfway_down = true;
                    else s.halfway_up = true;
                }
            }
            i += run - 1;
        }
    }
    s.early = in_str || depth > 0;
    return s;
}

static bool only_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') return false;
    return true;
}

// Returns the offset of the first invalid UTF-8 byte, or len when all is valid.
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    uint32_t cp;
    for (size_t i = 0, k; i < len; i += k)
        if ((k = utf8_decode(s + i, len - i, &cp)) == 0) return i;
    return len;
}

void lesson_free(Lesson *ls)
{
    free(ls->path);
    for (int l = 0; l < LANG_COUNT; l++) free(ls->title[l]), free(ls->description[l]);
    attn_weights_free(&ls->w);
    attn_inputs_free(&ls->in);
    free_strings(ls->q_tokens, ls->len_q);
    free_strings(ls->k_tokens, ls->len_k);
    free_strings(ls->step_keys, ls->n_steps);
    for (int l = 0; l < LANG_COUNT; l++) free_strings(ls->step_text[l], ls->n_steps);
    for (int i = 0; i < ls->n_quiz; i++) {
        LessonQuiz *q = &ls->quiz[i];
        free(q->id), free(q->stage);
        for (int l = 0; l < LANG_COUNT; l++) free(q->question[l]), free(q->explanation[l]);
    }
    free(ls->quiz);
    free_strings(ls->note_keys, ls->n_notes);
    for (int l = 0; l < LANG_COUNT; l++) free_strings(ls->note_text[l], ls->n_notes);
    memset(ls, 0, sizeof *ls);
}

bool lesson_parse(Lesson *ls, const char *name, const char *text, size_t len, char *err,
                  size_t err_len)
{
    memset(ls, 0, sizeof *ls);
    Ctx ctx = {name, err, err_len, false, false}, *c = &ctx;
    if (err_len) err[0] = '\0';
    int line, col;
    if (len > LESSON_MAX_FILE_BYTES)
        return fail(c, NULL, "file is larger than %u MiB, the limit for a lesson",
                    LESSON_MAX_FILE_BYTES >> 20);
    if (len == 0 || only_space(text, len))
        return fail(c, NULL, "empty file; expected a JSON object");
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        offset_to_line_col(text, (size_t)(nul - text), &line, &col);
        return fail(c, NULL, "%d:%d: NUL byte; expected UTF-8 JSON text", line, col);
    }
    size_t bad = utf8_invalid_at((const unsigned char *)text, len);
    if (bad < len) {
        offset_to_line_col(text, bad, &line, &col);
        return fail(c, NULL, "%d:%d: invalid UTF-8; expected UTF-8 JSON text", line, col);
    }
    for (const char *u = text; (u = memchr(u, '\\', (size_t)(text + len - u))) != NULL;) {
        size_t run = 0;   // a backslash run of odd length escapes what follows
        while (u + run < text + len && u[run] == '\\') run++;
        if (run % 2 == 1 && u + run + 5 <= text + len && u[run] == 'u' &&
            strncmp(u + run + 1, "0000", 4) == 0) {
            offset_to_line_col(text, (size_t)(u + run - 1 - text), &line, &col);
            return fail(c, NULL, "%d:%d: \\u0000 (NUL) in a string; expected text without NUL", line, col);
        }
        u += run;
    }
    Scan scan = json_scan(text, len);
    c->halfway_down = scan.halfway_down, c->halfway_up = scan.halfway_up;
    bool early = scan.early;
    if (scan.deep_at < len) {
        offset_to_line_col(text, scan.deep_at, &line, &col);
        return fail(c, NULL, "%d:%d: nested more than %d levels deep; expected a lesson object",
                    line, col, LESSON_MAX_NESTING);
    }
    // cJSON costs about 64 + 16 bytes a value: counting first bounds what a file
    // can cost (16 MiB of "0," would otherwise take 680 MB to reject)
    if (scan.values > LESSON_MAX_VALUES)
        return fail(c, NULL, "more than %u JSON values (numbers, strings, arrays, ...); expected at most "
                             "%u (large regular tensors can use \"arange\" or weights.init)",
                    LESSON_MAX_VALUES, LESSON_MAX_VALUES);
    if (scan.bad_number < len) {
        size_t run = 1;
        while (scan.bad_number + run < len && run < 24 && number_char(text[scan.bad_number + run])) run++;
        offset_to_line_col(text, scan.bad_number, &line, &col);
        return fail(c, NULL, "%d:%d: invalid number \"%.*s\"; expected a JSON number (no leading zeros, "
                             "digits on both sides of the point)",
                    line, col, (int)run, text + scan.bad_number);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        const char *ep = cJSON_GetErrorPtr();
        if (!end && ep && ep >= text && ep <= text + len) off = (size_t)(ep - text);
        offset_to_line_col(text, early ? len : off, &line, &col);
        return fail(c, NULL, "%d:%d: JSON syntax error%s; expected valid JSON", line, col,
                    early ? " (file ends too early)" : "");
    }
    // trailing garbage after the value
    for (const char *p = end; p && p < text + len; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            offset_to_line_col(text, (size_t)(p - text), &line, &col);
            cJSON_Delete(root);
            return fail(c, NULL, "%d:%d: unexpected text after the JSON value", line, col);
        }
    }
    bool ok = false;
    if (!cJSON_IsObject(root)) {
        fail(c, NULL, "expected a JSON object at the top level, got %s", json_type_name(root));
        goto done;
    }
    static const char *const keys[] = {"title", "description", "model", "input", "mask",
                                       "weights", "tokens", "steps", "notes", "quiz", NULL};
    if (!check_keys(c, root, "", keys)) goto done;
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
    if (!title) {
        fail(c, "title", "missing; expected a string or {\"en\": ..., \"zh\": ...}");
        goto done;
    }
    if (!get_text(c, title, "title", false, ls->title)) goto done;
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (desc) {
        if (!get_text(c, desc, "description", true, ls->description)) goto done;
    }
    if (!parse_model(c, cJSON_GetObjectItemCaseSensitive(root, "model"), &ls->cfg)) goto done;
    if (!parse_input(c, cJSON_GetObjectItemCaseSensitive(root, "input"), &ls->cfg, &ls->in))
        goto done;
    ls->batch = ls->in.query.shape[0];
    ls->len_q = ls->in.query.shape[1];
    ls->len_k = ls->in.key.shape[1];
    if (ls->cfg.decode && !(ls->in.key_is_query && ls->in.value_is_key)) {
        fail(c, "model.decode", "generating token by token needs self-attention; expected no separate input.key or input.value");
        goto done;
    }
    if ((ls->cfg.rope != ROPE_NONE || ls->cfg.alibi) && !ls->in.key_is_query) {
        fail(c, ls->cfg.rope != ROPE_NONE ? "model.rope" : "model.alibi",
             "positions 0..L-1 are those of one sequence; expected self-attention (no separate input.key)");
        goto done;
    }
    {
        // every stage must fit the element limit: the largest are scores (B,H,Lq,Lk),
        // the projections and the FFN hidden layer.
        int dmax = ls->cfg.d_k > ls->cfg.d_v ? ls->cfg.d_k : ls->cfg.d_v;
        int s1[4] = {ls->batch, ls->cfg.n_heads, ls->len_q, ls->len_k};
        int s2[4] = {ls->batch, ls->cfg.n_heads, ls->len_q > ls->len_k ? ls->len_q : ls->len_k, dmax};
        int s3[3] = {ls->batch, ls->len_q, ls->cfg.ffn_hidden > 0 ? ls->cfg.ffn_hidden : 1};
        if (!tensor_shape_size(4, s1, LESSON_MAX_ELEMS)) {
            fail(c, "input", "the scores would have B·H·Lq·Lk = %d·%d·%d·%d elements, over the limit of %u",
                 s1[0], s1[1], s1[2], s1[3], LESSON_MAX_ELEMS);
            goto done;
        }
        if (!tensor_shape_size(4, s2, LESSON_MAX_ELEMS)) {
            fail(c, ls->cfg.d_k >= ls->cfg.d_v ? "model.d_k" : "model.d_v",
                 "the heads would have B·H·L·d = %d·%d·%d·%d elements, over the limit of %u", s2[0],
                 s2[1], s2[2], s2[3], LESSON_MAX_ELEMS);
            goto done;
        }
        if (!tensor_shape_size(3, s3, LESSON_MAX_ELEMS)) {
            fail(c, "model.ffn_hidden", "the feed-forward layer would have B·Lq·F = %d·%d·%d elements, over the limit of %u",
                 s3[0], s3[1], s3[2], LESSON_MAX_ELEMS);
            goto done;
        }
    }
    if (!parse_mask(c, cJSON_GetObjectItemCaseSensitive(root, "mask"), ls->batch, ls->len_q,
                    ls->len_k, &ls->in))
        goto done;
    if (ls->cfg.decode && ls->in.mask_kind != MASK_CAUSAL && ls->in.mask_kind != MASK_SLIDING) {
        fail(c, "model.decode", "a token is generated before the ones after it exist; expected mask \"causal\" or "
                                "{\"sliding_window\": W}");
        goto done;
    }
    if (!parse_weights(c, cJSON_GetObjectItemCaseSensitive(root, "weights"), &ls->cfg, &ls->w))
        goto done;
    if (!parse_tokens(c, cJSON_GetObjectItemCaseSensitive(root, "tokens"), ls)) goto done;
    if (!parse_texts(c, cJSON_GetObjectItemCaseSensitive(root, "steps"), "steps", "narration", &ls->n_steps,
                     &ls->step_keys, ls->step_text))
        goto done;
    if (!parse_texts(c, cJSON_GetObjectItemCaseSensitive(root, "notes"), "notes", "teacher's notes",
                     &ls->n_notes, &ls->note_keys, ls->note_text))
        goto done;
    if (!parse_quiz(c, cJSON_GetObjectItemCaseSensitive(root, "quiz"), ls)) goto done;
    ls->path = strdup(name);
    ok = ls->path != NULL;
    if (!ok) fail(c, NULL, "out of memory");
done:
    cJSON_Delete(root);
    if (!ok) lesson_free(ls);
    return ok;
}

// Opens path for reading without blocking on a FIFO or a device, and only when
// it is a regular file; *size is its size. -1 with one line in err otherwise.
static int open_regular(Ctx *c, const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return fail(c, NULL, "cannot open: %s", strerror(errno)), -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fail(c, NULL, "cannot read: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        fail(c, NULL, "not a regular file (%s); expected a lesson file",
             S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
             S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

// Reads up to max bytes of fd into a new buffer (*n of them; a file that grew
// since fstat is read up to max, one that shrank to its end).
static char *read_fd(int fd, size_t max, size_t *n)
{
    char *buf = malloc(max ? max : 1);
    if (!buf) return NULL;
    *n = 0;
    while (*n < max) {
        ssize_t got = read(fd, buf + *n, max - *n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            free(buf);
            return NULL;
        }
        if (got == 0) break;
        *n += (size_t)got;
    }
    return buf;
}

bool lesson_load(Lesson *ls, const char *path, char *err, size_t err_len)
{
    memset(ls, 0, sizeof *ls);
    Ctx ctx = {path, err, err_len, false, false};
    size_t size = 0, n = 0;
    int fd = open_regular(&ctx, path, &size);
    if (fd < 0) return false;
    if (size > LESSON_MAX_FILE_BYTES) {
        close(fd);
        return fail(&ctx, NULL, "file is larger than %u MiB, the limit for a lesson", LESSON_MAX_FILE_BYTES >> 20);
    }
    // one byte past the size: a file that grew past the limit is still told so
    errno = 0;
    char *buf = read_fd(fd, size + 1 > LESSON_MAX_FILE_BYTES + 1 ? LESSON_MAX_FILE_BYTES + 1 : size + 1, &n);
    int e = errno;
    close(fd);
    if (!buf) return fail(&ctx, NULL, e ? "cannot read: %s" : "out of memory%s", e ? strerror(e) : "");
    bool ok = lesson_parse(ls, path, buf, n, err, err_len);
    free(buf);
    return ok;
}

// --- a title without reading the file -------------------------------------------

static size_t skip_space(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

// The end (one past) of the JSON value starting at s[i], or 0 when it does not
// end within n bytes.
static size_t value_end(const char *s, size_t i, size_t n)
{
    long depth = 0;
    bool in_str = false;
    for (size_t k = i; k < n; k++) {
        char ch = s[k];
        if (in_str) {
            if (ch == '\\') k++;
            else if (ch == '"') {
                in_str = false;
                if (depth == 0) return k + 1;
            }
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            if (++depth > LESSON_MAX_NESTING) return 0;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) return k + 1;
            if (depth < 0) return k;
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r')) {
            return k;
        }
    }
    return 0;
}

bool lesson_peek_title(const char *path, size_t max, char *title[LANG_COUNT], size_t *size, char *err,
                       size_t err_len)
{
    title[LANG_EN] = title[LANG_ZH] = NULL;
    if (err_len) err[0] = '\0';
    Ctx ctx = {path, err, err_len, false, false};
    int fd = open_regular(&ctx, path, size);
    if (fd < 0) return false;
    size_t n = 0;
    char *text = read_fd(fd, *size < max ? *size : max, &n);
    int e = errno;
    close(fd);
    if (!text) return fail(&ctx, NULL, "cannot read: %s", strerror(e));
    // the top-level object's members, in order, up to "title"
    size_t i = skip_space(text, 0, n);
    bool found = false;
    if (i < n && text[i] == '{') {
        i++;
        for (;;) {
            i = skip_space(text, i, n);
            size_t key_end = i < n && text[i] == '"' ? value_end(text, i, n) : 0;
            if (!key_end) break;
            bool is_title = key_end - i == 7 && memcmp(text + i, "\"title\"", 7) == 0;
            i = skip_space(text, key_end, n);
            if (i >= n || text[i] != ':') break;
            i = skip_space(text, i + 1, n);
            size_t end = value_end(text, i, n);
            if (!end) break;
            if (is_title) {
                cJSON *j = cJSON_ParseWithLength(text + i, end - i);
                char quiet[LESSON_ERR_MAX];
                Ctx qc = {path, quiet, sizeof quiet, false, false};
                found = j && get_text(&qc, j, "title", false, title);
                if (!found) free(title[LANG_EN]), free(title[LANG_ZH]), title[LANG_EN] = title[LANG_ZH] = NULL;
                cJSON_Delete(j);
                break;
            }
            i = skip_space(text, end, n);
            if (i >= n || text[i] != ',') break;
            i++;
        }
    }
    free(text);
    return found;
}

const char *lesson_title(const Lesson *ls, Lang lang)
{
    if ((unsigned)lang < LANG_COUNT && ls->title[lang]) return ls->title[lang];
    return ls->title[LANG_EN] ? ls->title[LANG_EN] : "";
}

static const char *keyed_text(int n, char *const *keys, char **const text[LANG_COUNT], const char *key,
                              Lang lang)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(keys[i], key) != 0) continue;
        if ((unsigned)lang < LANG_COUNT && text[lang][i]) return text[lang][i];
        return text[LANG_EN][i];
    }
    return NULL;
}

const char *lesson_step_text(const Lesson *ls, const char *key, Lang lang)
{
    return keyed_text(ls->n_steps, ls->step_keys, ls->step_text, key, lang);
}

const char *lesson_note_text(const Lesson *ls, const char *key, Lang lang)
{
    return keyed_text(ls->n_notes, ls->note_keys, ls->note_text, key, lang);
}
