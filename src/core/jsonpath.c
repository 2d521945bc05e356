// jsonpath.c — reading JSON with its paths (see jsonpath.h).
#include "jsonpath.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

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

bool jsonpath_fail(JsonCtx *c, const char *path, const char *fmt, ...)
{
    char msg[JSONPATH_MSG_MAX];
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

// Paths longer than JSONPATH_MAX are cut (they only appear in messages).
// The cut is made before a whole character: the path stays valid UTF-8.
static void path_cut(char *out)
{
    size_t k = JSONPATH_MAX - 4;
    k = utf8_floor(out, k);
    memcpy(out + k, "...", 4);
}

void jsonpath_key(char *out, const char *base, const char *key)
{
    if ((*base ? snprintf(out, JSONPATH_MAX, "%s.%s", base, key)
               : snprintf(out, JSONPATH_MAX, "%s", key)) >= JSONPATH_MAX)
        path_cut(out);
}

void jsonpath_index(char *out, const char *base, int i)
{
    if (snprintf(out, JSONPATH_MAX, "%s[%d]", base, i) >= JSONPATH_MAX) path_cut(out);
}

const char *jsonpath_type(const cJSON *j)
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

bool jsonpath_check_keys(JsonCtx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        bool known = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(it->string, *a) == 0) known = true;
        char p[JSONPATH_MAX];
        jsonpath_key(p, path, it->string);
        if (!known) {
            char list[1024] = ""; // (model: 47 keys, about 640 bytes)
            size_t used = 0;
            for (const char *const *a = allowed; *a && used < sizeof list; a++) {
                bool again = false; // a name the list holds twice is said once
                for (const char *const *b = allowed; b != a; b++) again |= strcmp(*a, *b) == 0;
                if (!again)
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
            }
            return jsonpath_fail(c, p, "unknown key; expected one of: %s", list);
        }
        for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
            if (strcmp(prev->string, it->string) == 0)
                return jsonpath_fail(c, p, "duplicate key; each key may appear once");
    }
    return true;
}

bool jsonpath_int(JsonCtx *c, const cJSON *obj, const char *path, const char *key, int *out,
                    int lo, int hi, bool required, int dflt)
{
    char p[JSONPATH_MAX];
    jsonpath_key(p, path, key);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required) return jsonpath_fail(c, p, "missing; expected an integer from %d to %d", lo, hi);
        *out = dflt;
        return true;
    }
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble))
        return jsonpath_fail(c, p, "expected an integer from %d to %d, got %s", lo, hi,
                    cJSON_IsNumber(j) ? "a fraction" : jsonpath_type(j));
    if (j->valuedouble < lo || j->valuedouble > hi)
        return jsonpath_fail(c, p, "%.15g is out of range; expected an integer from %d to %d",
                    j->valuedouble, lo, hi);
    *out = (int)j->valuedouble;
    return true;
}

bool jsonpath_bool(JsonCtx *c, const cJSON *obj, const char *path, const char *key, bool *out,
                     bool dflt)
{
    char p[JSONPATH_MAX];
    jsonpath_key(p, path, key);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        *out = dflt;
        return true;
    }
    if (!cJSON_IsBool(j)) return jsonpath_fail(c, p, "expected true or false, got %s", jsonpath_type(j));
    *out = cJSON_IsTrue(j);
    return true;
}

// FLT_MAX + half an ulp (2^103): below it a number rounds to a finite float32
// (FLT_MAX at most); at it, the tie goes to the even neighbour, infinity.
#define FLOAT32_INF_FROM 0x1.ffffffp127

// A number that rounds to a finite float32: -3.40282347e+38 (what from_torch.py
// writes for torch.finfo(torch.float32).min) is float32's lowest value.
bool jsonpath_number(JsonCtx *c, const cJSON *j, const char *p, float *out)
{
    if (!cJSON_IsNumber(j)) return jsonpath_fail(c, p, "expected a number, got %s", jsonpath_type(j));
    double v = j->valuedouble;
    // cJSON reads doubles: a decimal just under the halfway point reads as it. The text
    // decides (jsonpath_scan): when every such number of the file rounds down as a decimal,
    // it is FLT_MAX (a file mixing both kinds is refused: they cannot be told apart here)
    if (fabs(v) == FLOAT32_INF_FROM && c->halfway_down && !c->halfway_up) {
        *out = v > 0 ? FLT_MAX : -FLT_MAX;
        return true;
    }
    if (!isfinite(v) || fabs(v) >= FLOAT32_INF_FROM)
        return jsonpath_fail(c, p, "number out of float32 range (it rounds to infinity); expected |x| <= 3.40282347e+38");
    *out = (float)v;
    return true;
}

static bool shape_from_json(JsonCtx *c, const cJSON *arr, const char *p, const JsonTensorOpts *o, int *rank, int *shape)
{
    if (!cJSON_IsArray(arr))
        return jsonpath_fail(c, p, "expected an array of dimensions, got %s", jsonpath_type(arr));
    int n = cJSON_GetArraySize(arr);
    if (n < 1 || n > TENSOR_MAX_RANK)
        return jsonpath_fail(c, p, "expected 1 to %d dimensions, got %d", TENSOR_MAX_RANK, n);
    int i = 0;
    for (const cJSON *d = arr->child; d; d = d->next, i++) {
        char pi[JSONPATH_MAX];
        jsonpath_index(pi, p, i);
        if (!cJSON_IsNumber(d) || d->valuedouble != floor(d->valuedouble) || d->valuedouble < 1 ||
            d->valuedouble > o->max_elems)
            return jsonpath_fail(c, pi, "expected a dimension from 1 to %u", o->max_elems);
        shape[i] = (int)d->valuedouble;
    }
    *rank = n;
    if (tensor_shape_size(n, shape, o->max_elems) == 0)
        return jsonpath_fail(c, p, "tensor too large; at most %u elements", o->max_elems);
    return true;
}

static bool element(JsonCtx *c, const cJSON *j, const char *p, const JsonTensorOpts *o, float *out)
{
    if (o->allow_bool && cJSON_IsBool(j)) {
        *out = cJSON_IsTrue(j) ? 1.0f : 0.0f;
        return true;
    }
    return jsonpath_number(c, j, p, out);
}

// Walks the first elements to find the shape of nested arrays.
static bool nested_shape(JsonCtx *c, const cJSON *j, const char *path, const JsonTensorOpts *o, int *rank, int *shape)
{
    int r = 0;
    const cJSON *cur = j;
    char p[JSONPATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    while (cJSON_IsArray(cur)) {
        if (r == TENSOR_MAX_RANK)
            return jsonpath_fail(c, p, "too deeply nested; tensors have at most %d dimensions",
                        TENSOR_MAX_RANK);
        int n = cJSON_GetArraySize(cur);
        if (n == 0) return jsonpath_fail(c, p, "empty array; every dimension needs at least 1 element");
        if ((unsigned)n > o->max_elems) return jsonpath_fail(c, p, "array too long");
        shape[r++] = n;
        char q[JSONPATH_MAX];
        jsonpath_index(q, p, 0);
        snprintf(p, sizeof p, "%s", q);
        cur = cur->child;
    }
    if (r == 0) return jsonpath_fail(c, path, "expected a tensor (nested arrays of numbers, or {\"shape\", \"data\"} or {\"shape\", \"arange\"}), got %s", jsonpath_type(j));
    *rank = r;
    if (tensor_shape_size(r, shape, o->max_elems) == 0)
        return jsonpath_fail(c, path, "tensor too large; at most %u elements", o->max_elems);
    return true;
}

static bool nested_fill(JsonCtx *c, const cJSON *j, const char *p, const JsonTensorOpts *o, int depth,
                        int rank, const int *shape, float **dst)
{
    if (depth == rank) return element(c, j, p, o, (*dst)++);
    if (!cJSON_IsArray(j))
        return jsonpath_fail(c, p, "expected an array of %d elements (a ragged tensor?), got %s",
                    shape[depth], jsonpath_type(j));
    if (cJSON_GetArraySize(j) != shape[depth])
        return jsonpath_fail(c, p, "expected %d elements like its siblings, got %d", shape[depth],
                    cJSON_GetArraySize(j));
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char q[JSONPATH_MAX];
        jsonpath_index(q, p, i);
        if (!nested_fill(c, e, q, o, depth + 1, rank, shape, dst)) return false;
    }
    return true;
}

bool jsonpath_tensor(JsonCtx *c, const cJSON *j, const char *p, const JsonTensorOpts *o, Tensor *t)
{
    int rank = 0, shape[TENSOR_MAX_RANK] = {0};
    memset(t, 0, sizeof *t);
    if (cJSON_IsObject(j)) {
        static const char *const keys[] = {"shape", "data", "arange", NULL};
        if (!jsonpath_check_keys(c, j, p, keys)) return false;
        char ps[JSONPATH_MAX], pd[JSONPATH_MAX];
        jsonpath_key(ps, p, "shape");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "shape");
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(j, "data");
        const cJSON *ja = cJSON_GetObjectItemCaseSensitive(j, "arange");
        if (!js) return jsonpath_fail(c, ps, "missing; expected the tensor's shape, e.g. [2, 4, 4]");
        if (!shape_from_json(c, js, ps, o, &rank, shape)) return false;
        if ((jd != NULL) == (ja != NULL))
            return jsonpath_fail(c, p, "expected exactly one of \"data\" (flat values) or \"arange\" ([start, stop, step])");
        size_t n = tensor_shape_size(rank, shape, o->max_elems);
        if (jd) {
            jsonpath_key(pd, p, "data");
            if (!cJSON_IsArray(jd))
                return jsonpath_fail(c, pd, "expected a flat array of %zu numbers, got %s", n,
                            jsonpath_type(jd));
            if ((size_t)cJSON_GetArraySize(jd) != n)
                return jsonpath_fail(c, pd, "expected %zu numbers for the shape, got %d", n,
                            cJSON_GetArraySize(jd));
            if (!tensor_init(t, rank, shape)) return jsonpath_fail(c, p, "out of memory");
            size_t i = 0;
            for (const cJSON *e = jd->child; e; e = e->next, i++) {
                char q[JSONPATH_MAX];
                jsonpath_index(q, pd, (int)i);
                if (!element(c, e, q, o, &t->data[i])) return tensor_free(t), false;
            }
            return true;
        }
        jsonpath_key(pd, p, "arange");
        int an = cJSON_GetArraySize(ja);
        if (!cJSON_IsArray(ja) || an < 2 || an > 3)
            return jsonpath_fail(c, pd, "expected [start, stop] or [start, stop, step]");
        double v[3] = {0, 0, 1};
        int i = 0;
        for (const cJSON *e = ja->child; e; e = e->next, i++) {
            char q[JSONPATH_MAX];
            jsonpath_index(q, pd, i);
            float f;
            if (!jsonpath_number(c, e, q, &f)) return false;
            v[i] = e->valuedouble;
        }
        if (v[2] == 0.0) return jsonpath_fail(c, pd, "step must not be 0");
        double count = ceil((v[1] - v[0]) / v[2]);
        if (count != (double)n)
            return jsonpath_fail(c, pd, "gives %.6g values but the shape holds %zu", count < 0 ? 0 : count,
                        n);
        if (!tensor_init(t, rank, shape)) return jsonpath_fail(c, p, "out of memory");
        for (size_t k = 0; k < n; k++) t->data[k] = (float)(v[0] + (double)k * v[2]);
        return true;
    }
    if (!nested_shape(c, j, p, o, &rank, shape)) return false;
    if (!tensor_init(t, rank, shape)) return jsonpath_fail(c, p, "out of memory");
    float *dst = t->data;
    if (!nested_fill(c, j, p, o, 0, rank, shape, &dst)) return tensor_free(t), false;
    return true;
}

void jsonpath_shape_text(int rank, const int *shape, char *buf, size_t n)
{
    Tensor tmp = {0};
    tmp.rank = rank;
    memcpy(tmp.shape, shape, (size_t)rank * sizeof(int));
    tensor_shape_str(&tmp, buf, n);
}

// written: the shape as the lesson wrote it (before any per-head stacking).
bool jsonpath_expect_shape(JsonCtx *c, const char *p, const Tensor *t, int rank, const int *shape,
                         const char *written)
{
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->shape[i] == shape[i];
    if (ok) return true;
    char want[64];
    jsonpath_shape_text(rank, shape, want, sizeof want);
    return jsonpath_fail(c, p, "expected shape %s, got %s", want, written);
}

void jsonpath_line_col(const char *text, size_t off, int *line, int *col)
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

// One pass over the text before cJSON builds anything: brackets and commas
// outside strings, and every number by JSON's grammar (cJSON reads numbers
// with strtod, which also takes "01").
JsonScan jsonpath_scan(const char *text, size_t len, int max_nesting)
{
    JsonScan s = {false, len, len, 0, 1, false, false};
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
            if (++depth > max_nesting && s.deep_at == len) s.deep_at = i;
        } else if (ch == '}' || ch == ']') {
            depth--;
        } else if (ch == ',') {
            s.values++;
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            size_t run = 1;
            while (i + run < len && number_char(text[i + run])) run++;
            if (json_number_len(text + i, run) != run && s.bad_number == len)
                s.bad_number = i, s.bad_len = run < 24 ? run : 24;
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

bool jsonpath_only_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') return false;
    return true;
}
