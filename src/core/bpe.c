// bpe.c — byte-level byte-pair encoding (see bpe.h). The reference it is checked against
// is tests/bpe_ref.py, written from the same description.
#include "bpe.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"

#define SPACE_MARK "\xE2\x90\xA3" // ␣: a space as the axes draw it (panel.c draws the char tokenizer's " " so)

// --- a token's bytes and label -----------------------------------------------------

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// "<0xNN>" at s: the byte NN, else -1.
static int byte_escape(const char *s)
{
    if (strncmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    const int hi = hex_digit(s[3]), lo = hi < 0 ? -1 : hex_digit(s[4]);
    return lo < 0 ? -1 : hi * 16 + lo;
}

// A vocab string's bytes into out (at least strlen(s) bytes); returns their count.
static int token_bytes(const char *s, unsigned char *out)
{
    int n = 0;
    while (*s) {
        const int b = byte_escape(s);
        if (b >= 0) out[n++] = (unsigned char)b, s += 6;
        else out[n++] = (unsigned char)*s++;
    }
    return n;
}

// The vocab string as drawn: each space as ␣ (so "␣the": the word with the space before it).
static char *token_label(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) n += *p == ' ' ? sizeof SPACE_MARK - 1 : 1;
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = s; *p; p++) {
        if (*p == ' ') memcpy(o, SPACE_MARK, sizeof SPACE_MARK - 1), o += sizeof SPACE_MARK - 1;
        else *o++ = *p;
    }
    *o = '\0';
    return out;
}

// --- the pair table: (a, b) → the merge's index ----------------------------------

static size_t pair_hash(int a, int b, int slots)
{
    uint32_t h = (uint32_t)a * 2654435761u ^ ((uint32_t)b + 0x9E3779B9u) * 40503u;
    return (size_t)(h % (uint32_t)slots);
}

static int pair_find(const Bpe *bp, int a, int b)
{
    for (size_t s = pair_hash(a, b, bp->pair_slots);; s = (s + 1) % (size_t)bp->pair_slots) {
        const int r = bp->pair_rank[s];
        if (r < 0) return -1;
        if (bp->merge[r][0] == a && bp->merge[r][1] == b) return r;
    }
}

static void pair_add(Bpe *bp, int r)
{
    size_t s = pair_hash(bp->merge[r][0], bp->merge[r][1], bp->pair_slots);
    while (bp->pair_rank[s] >= 0) s = (s + 1) % (size_t)bp->pair_slots;
    bp->pair_rank[s] = r;
}

// --- building ----------------------------------------------------------------------

void bpe_destroy(Bpe *b)
{
    if (!b) return;
    for (int i = 0; i < b->n_vocab; i++) {
        if (b->bytes) free(b->bytes[i]);
        if (b->label) free(b->label[i]);
    }
    free(b->bytes), free(b->len), free(b->label), free(b->merge), free(b->pair_rank);
    free(b);
}

// The token whose bytes are p[0 .. n − 1], or -1.
static int token_of(const Bpe *b, const unsigned char *p, int n)
{
    for (int v = 0; v < b->n_vocab; v++)
        if (b->len[v] == n && memcmp(b->bytes[v], p, (size_t)n) == 0) return v;
    return -1;
}

// The tokens' bytes and labels, each byte's token (the fallback): vocab's checks.
static Bpe *bpe_tokens(JsonCtx *c, char *const *vocab, int V, int n_merges)
{
    Bpe *b = calloc(1, sizeof *b);
    if (!b) return jsonpath_fail(c, "vocab", "out of memory"), NULL;
    b->n_vocab = V, b->n_merges = n_merges;
    b->pair_slots = 2 * n_merges + 1;
    b->bytes = calloc((size_t)V, sizeof *b->bytes);
    b->label = calloc((size_t)V, sizeof *b->label);
    b->len = calloc((size_t)V, sizeof *b->len);
    b->merge = calloc((size_t)n_merges + 1, sizeof *b->merge);
    b->pair_rank = malloc((size_t)b->pair_slots * sizeof *b->pair_rank);
    if (!b->bytes || !b->label || !b->len || !b->merge || !b->pair_rank)
        return jsonpath_fail(c, "vocab", "out of memory"), bpe_destroy(b), NULL;
    for (int s = 0; s < b->pair_slots; s++) b->pair_rank[s] = -1;
    for (int i = 0; i < 256; i++) b->byte_token[i] = -1;
    for (int v = 0; v < V; v++) {
        char p[JSONPATH_MAX];
        jsonpath_index(p, "vocab", v);
        b->bytes[v] = malloc(strlen(vocab[v]) + 1);
        b->label[v] = token_label(vocab[v]);
        if (!b->bytes[v] || !b->label[v]) return jsonpath_fail(c, p, "out of memory"), bpe_destroy(b), NULL;
        b->len[v] = token_bytes(vocab[v], b->bytes[v]);
        const int same = token_of(b, b->bytes[v], b->len[v]);
        if (same >= 0 && same < v)
            return jsonpath_fail(c, p, "\"%s\" is the bytes of vocab[%d] (\"%s\") again; expected distinct tokens",
                                 vocab[v], same, vocab[same]), bpe_destroy(b), NULL;
        if (b->len[v] == 1) b->byte_token[b->bytes[v][0]] = v;
    }
    for (int i = 0; i < 256; i++)
        if (b->byte_token[i] < 0)
            return jsonpath_fail(c, "vocab", "no token for the byte 0x%02X (\"<0x%02X>\"%s); expected a token for each of "
                                 "the 256 bytes (the byte fallback: any text tokenizes)", i, i,
                                 i >= 0x20 && i < 0x7F ? " or the character itself" : ""),
                   bpe_destroy(b), NULL;
    return b;
}

// A merge's part (merges[i][side]): a token of the vocabulary made before merge i.
static bool merge_part(JsonCtx *c, const Bpe *b, const cJSON *e, const char *p, int i, const int *made_by, int *out)
{
    if (!cJSON_IsString(e)) return jsonpath_fail(c, p, "expected a token (a string), got %s", jsonpath_type(e));
    const size_t n = strlen(e->valuestring);
    unsigned char buf[BPE_MAX_TOKEN_BYTES + 1];
    if (n == 0 || n > BPE_MAX_TOKEN_BYTES)
        return jsonpath_fail(c, p, "expected a token of the vocab (1 to %d bytes), got %zu bytes", BPE_MAX_TOKEN_BYTES, n);
    const int t = token_of(b, buf, token_bytes(e->valuestring, buf));
    if (t < 0) return jsonpath_fail(c, p, "\"%s\" is not in the vocab; expected a token of the vocab", e->valuestring);
    if (b->len[t] > 1 && made_by[t] < 0)
        return jsonpath_fail(c, p, "\"%s\" is made by no merge before merges[%d]; expected merges in the order they apply",
                             e->valuestring, i);
    *out = t;
    return true;
}

Bpe *bpe_read(JsonCtx *c, const cJSON *m, char *const *vocab, int V)
{
    if (!m) return jsonpath_fail(c, "merges", "missing; the \"bpe\" tokenizer expected [[\"t\", \"h\"], …] (may be [])"), NULL;
    if (!cJSON_IsArray(m)) return jsonpath_fail(c, "merges", "expected an array of pairs, got %s", jsonpath_type(m)), NULL;
    const int M = cJSON_GetArraySize(m);
    Bpe *b = bpe_tokens(c, vocab, V, M);
    int *made_by = b ? malloc((size_t)V * sizeof *made_by) : NULL;
    if (b && !made_by) jsonpath_fail(c, "merges", "out of memory");
    if (!made_by) return bpe_destroy(b), NULL;
    for (int v = 0; v < V; v++) made_by[v] = -1;
    int i = 0;
    for (const cJSON *e = m->child; e; e = e->next, i++) {
        char p[JSONPATH_MAX], q[JSONPATH_MAX];
        jsonpath_index(p, "merges", i);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) {
            jsonpath_fail(c, p, "expected a pair of tokens [\"a\", \"b\"], got %s", jsonpath_type(e));
            goto fail;
        }
        int part[2];
        for (int s = 0; s < 2; s++) {
            jsonpath_index(q, p, s);
            if (!merge_part(c, b, cJSON_GetArrayItem(e, s), q, i, made_by, &part[s])) goto fail;
        }
        unsigned char joined[2 * BPE_MAX_TOKEN_BYTES];
        const int la = b->len[part[0]], lb = b->len[part[1]];
        memcpy(joined, b->bytes[part[0]], (size_t)la), memcpy(joined + la, b->bytes[part[1]], (size_t)lb);
        const int t = token_of(b, joined, la + lb);
        if (t < 0) {
            jsonpath_fail(c, p, "\"%s\" + \"%s\" is not in the vocab; expected each merge's result among its tokens "
                          "(the merges form the vocabulary)", vocab[part[0]], vocab[part[1]]);
            goto fail;
        }
        if (made_by[t] >= 0) {
            jsonpath_fail(c, p, "makes \"%s\" again (merges[%d] made it); expected one merge a token", vocab[t], made_by[t]);
            goto fail;
        }
        made_by[t] = i;
        b->merge[i][0] = part[0], b->merge[i][1] = part[1], b->merge[i][2] = t;
        pair_add(b, i);
    }
    for (int v = 0; v < V; v++)
        if (b->len[v] > 1 && made_by[v] < 0) {
            char p[JSONPATH_MAX];
            jsonpath_index(p, "vocab", v);
            jsonpath_fail(c, p, "\"%s\" is made by no merge; expected each token of several bytes to be a merge's result "
                          "(the merges form the vocabulary)", vocab[v]);
            goto fail;
        }
    free(made_by);
    return b;
fail:
    free(made_by);
    bpe_destroy(b);
    return NULL;
}

Bpe *bpe_copy(const Bpe *src, char *const *vocab)
{
    char err[8];
    JsonCtx c = {"copy", err, sizeof err, false, false};
    Bpe *b = bpe_tokens(&c, vocab, src->n_vocab, src->n_merges);
    if (!b) return NULL;
    memcpy(b->merge, src->merge, (size_t)src->n_merges * sizeof *b->merge);
    memcpy(b->pair_rank, src->pair_rank, (size_t)src->pair_slots * sizeof *b->pair_rank);
    return b;
}

int bpe_merge_part(const Bpe *b, int i, int side)
{
    assert(i >= 0 && i < b->n_merges && (side == 0 || side == 1));
    return b->merge[i][side];
}

// --- encoding ------------------------------------------------------------------------

enum { CH_LETTER, CH_DIGIT, CH_SPACE, CH_OTHER };

// A byte's class for the chunks: ASCII letters and every byte of a non-ASCII character
// are letters (so a Chinese run or an accented word is one chunk).
static int byte_class(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch >= 0x80) return CH_LETTER;
    if (ch >= '0' && ch <= '9') return CH_DIGIT;
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') return CH_SPACE;
    return CH_OTHER;
}

// The length of the chunk at s[i] (n bytes): " ?letters+", " ?digits+", " ?others+", or
// white space (but not a last space that a word, number or punctuation follows).
static size_t chunk_len(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;
    if (s[j] == ' ' && j + 1 < n && byte_class(s[j + 1]) != CH_SPACE) j++;
    const int k = byte_class(s[j]);
    while (j < n && byte_class(s[j]) == k) j++;
    if (k == CH_SPACE && j < n && j - i > 1 && s[j - 1] == ' ') j--; // (the space goes with what follows)
    return j - i;
}

// One chunk's tokens (t, n of them, the bytes' tokens on entry): the first merge of any
// adjacent pair applied everywhere, again until none applies; returns the count left.
static int merge_chunk(const Bpe *b, int *t, int n)
{
    for (;;) {
        int best = -1;
        for (int i = 0; i + 1 < n; i++) {
            const int r = pair_find(b, t[i], t[i + 1]);
            if (r >= 0 && (best < 0 || r < best)) best = r;
        }
        if (best < 0) return n;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (i + 1 < n && t[i] == b->merge[best][0] && t[i + 1] == b->merge[best][1]) t[k++] = b->merge[best][2], i++;
            else t[k++] = t[i];
        }
        n = k;
    }
}

int bpe_encode(const Bpe *b, const char *str, int *ids, int max)
{
    const unsigned char *s = (const unsigned char *)str;
    const size_t n = strlen(str);
    // a token is at most BPE_MAX_TOKEN_BYTES bytes: a longer text is past max before any work
    if (n > (size_t)max * BPE_MAX_TOKEN_BYTES) return -2;
    int *t = malloc((n + 1) * sizeof *t), count = 0;
    if (!t) return -3;
    for (size_t i = 0; i < n;) {
        const size_t len = chunk_len(s, i, n);
        for (size_t j = 0; j < len; j++) t[j] = b->byte_token[s[i + j]];
        const int k = merge_chunk(b, t, (int)len);
        if (count + k > max) return free(t), -2;
        if (ids) memcpy(ids + count, t, (size_t)k * sizeof *t);
        count += k;
        i += len;
    }
    free(t);
    return count;
}

size_t bpe_decode(const Bpe *b, const int *ids, int n, char *out, size_t cap)
{
    size_t k = 0;
    if (!cap) return 0;
    for (int i = 0; i < n; i++) {
        const int id = ids[i];
        assert(id >= 0 && id < b->n_vocab);
        const size_t len = (size_t)b->len[id];
        if (k + len >= cap) break;
        memcpy(out + k, b->bytes[id], len);
        k += len;
    }
    out[k] = '\0';
    return k;
}
