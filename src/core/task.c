// task.c — the training scripts' data, made again in C (task.h).
#include "task.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const TASK_KIND_NAMES[TASK_KIND_COUNT] = {"", "induction", "reversal", "corpus"};

// ---- torch.Generator (CPU): MT19937 ---------------------------------------------------------

void torch_rng_seed(TorchRng *r, uint64_t seed)
{
    r->s[0] = (uint32_t)seed; // (at::mt19937's init_with_uint32: the seed's low 32 bits)
    for (int j = 1; j < 624; j++) r->s[j] = 1812433253u * (r->s[j - 1] ^ (r->s[j - 1] >> 30)) + (uint32_t)j;
    r->next = 624;
}

uint32_t torch_rng_u32(TorchRng *r)
{
    if (r->next >= 624) { // the twist
        for (int k = 0; k < 624; k++) {
            const uint32_t y = (r->s[k] & 0x80000000u) | (r->s[(k + 1) % 624] & 0x7fffffffu);
            r->s[k] = r->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        r->next = 0;
    }
    uint32_t y = r->s[r->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

float torch_rng_rand(TorchRng *r) { return (float)(torch_rng_u32(r) & 0xffffffu) * (1.0f / 16777216.0f); }

int64_t torch_rng_randint(TorchRng *r, int64_t lo, int64_t hi)
{
    assert(hi > lo && (uint64_t)(hi - lo) < (1ull << 32)); // (a wider range takes two draws in torch)
    return (int64_t)(torch_rng_u32(r) % (uint64_t)(hi - lo)) + lo;
}

// ---- the corpus: train_tiny_lm.py's load_corpus ---------------------------------------------

static const char *const CORPUS_FILES[] = {"fortunes", "literature", "riddles"};

// One UTF-8 character at s (n bytes left): its code point, *len its bytes (1 for a bad byte,
// which Python's errors="replace" makes U+FFFD).
static uint32_t utf8_at(const unsigned char *s, size_t n, int *len)
{
    int k = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (k == 0 || (size_t)k > n) return *len = 1, 0xfffd;
    uint32_t c = k == 1 ? s[0] : s[0] & (0x7f >> k);
    for (int i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return *len = 1, 0xfffd;
        c = c << 6 | (s[i] & 0x3f);
    }
    return *len = k, c;
}

// Python's str.isspace() for the code points a text may hold (re's \s).
static bool py_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// normalise(saying) appended to out (the words of ASCII letters, lower-case, one space between,
// words holding j, q, x or z dropped); returns whether it kept any word.
static bool normalise(const char *s, size_t n, char *out, size_t *len)
{
    const size_t start = *len;
    char word[4096];
    size_t wl = 0;
    bool rare = false, line_start = true, skip = false;
    for (size_t i = 0; i <= n;) {
        int k = 1;
        const uint32_t c = i < n ? utf8_at((const unsigned char *)s + i, n - i, &k) : ' ';
        if (line_start) { // a line whose stripped text starts with "--" (an attribution) is dropped
            size_t j = i;
            while (j < n && s[j] != '\n' && py_space((unsigned char)s[j])) j++;
            skip = j + 1 < n && s[j] == '-' && s[j + 1] == '-';
            line_start = false;
        }
        if (i < n && c == '\n') line_start = true;
        const bool sep = i == n || (!skip && (c == '-' || c == '/' || py_space(c))) || c == '\n';
        if (sep) {
            if (wl && !rare) {
                if (*len > start) out[(*len)++] = ' ';
                memcpy(out + *len, word, wl), *len += wl;
            }
            wl = 0, rare = false;
        } else if (!skip && c < 0x80 && ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) {
            const char ch = (char)(c | 0x20);
            rare |= ch == 'j' || ch == 'q' || ch == 'x' || ch == 'z';
            if (wl < sizeof word) word[wl++] = ch;
        }
        i += (size_t)k;
    }
    return *len > start;
}

// The first "\n%\n" (the end of a saying) in s's n bytes, or NULL.
static const char *find_sep(const char *s, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (s[i] == '\n' && s[i + 1] == '%' && s[i + 2] == '\n') return s + i;
    return NULL;
}

// The training text (every saying but each tenth, joined by one space) as token ids.
static bool corpus_read(Task *t, char *const *vocab, const char *file, char *err, size_t err_len)
{
    char *text = NULL, *out = NULL;
    size_t n_text = 0, n_out = 0;
    for (size_t f = 0; f < sizeof CORPUS_FILES / sizeof *CORPUS_FILES; f++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", TASK_CORPUS_DIR, CORPUS_FILES[f]);
        FILE *fp = fopen(path, "rb");
        if (!fp) {
            snprintf(err, err_len, "%s: task: the corpus %s cannot be read (%s); expected Debian's fortunes-min "
                     "(apt-get install fortunes-min)", file, path, strerror(errno));
            free(text);
            return false;
        }
        char buf[65536];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, fp)) > 0) {
            char *grown = realloc(text, n_text + got + 1);
            if (!grown) break;
            text = grown;
            memcpy(text + n_text, buf, got), n_text += got;
        }
        fclose(fp);
        // (the files are concatenated as Python's sayings lists are: each file's last saying ends the file)
        char *grown = realloc(text, n_text + 3);
        if (!grown) break;
        text = grown;
        memcpy(text + n_text, "\n%\n", 3), n_text += 3;
    }
    out = text ? malloc(n_text + 1) : NULL;
    int *ids = out ? malloc((n_text + 1) * sizeof *ids) : NULL;
    if (!ids) {
        free(text), free(out);
        snprintf(err, err_len, "%s: task: out of memory reading the corpus", file);
        return false;
    }
    int kept = 0;
    for (size_t i = 0; i < n_text;) { // the sayings, split at "\n%\n"
        const char *end = find_sep(text + i, n_text - i);
        const size_t len = end ? (size_t)(end - (text + i)) : n_text - i;
        size_t before = n_out;
        if (n_out) out[n_out++] = ' ';
        if (normalise(text + i, len, out, &n_out)) {
            if (kept++ % 10 == 9) n_out = before; // (held out)
        } else {
            n_out = before;
        }
        i += len + 3;
    }
    free(text);
    size_t n = 0;
    for (size_t i = 0; i < n_out; i++) {
        int id = 0;
        while (id < t->n_vocab && !(vocab[id][0] == out[i] && vocab[id][1] == '\0')) id++;
        if (id == t->n_vocab) {
            snprintf(err, err_len, "%s: task: the corpus holds \"%c\", which is not in the vocab; expected a vocab of "
                     "the space and the letters the corpus keeps", file, out[i]);
            free(out), free(ids);
            return false;
        }
        ids[n++] = id;
    }
    free(out);
    t->text = ids, t->n_text = n;
    if (n <= (size_t)t->spec.length + 1) {
        snprintf(err, err_len, "%s: task: the corpus has %zu characters; expected more than the length %d", file, n,
                 t->spec.length + 1);
        return false;
    }
    return true;
}

// ---- the tasks ------------------------------------------------------------------------------

bool task_init(Task *t, const TaskSpec *spec, char *const *vocab, int n_vocab, const char *file, char *err,
               size_t err_len)
{
    memset(t, 0, sizeof *t);
    t->spec = *spec, t->n_vocab = n_vocab;
    torch_rng_seed(&t->rng, spec->seed);
    switch (spec->kind) {
    case TASK_NONE:
        snprintf(err, err_len, "%s: task: the lesson has none; expected a lesson with a \"task\" to train "
                 "(lessons/README.md, \"Training\")", file);
        return false;
    case TASK_INDUCTION:
        if (n_vocab < 7 || spec->length < 4) {
            snprintf(err, err_len, "%s: task: induction needs at least 7 tokens and a length of 4; got %d tokens, "
                     "length %d", file, n_vocab, spec->length);
            return false;
        }
        return true;
    case TASK_REVERSAL:
        if (n_vocab < 2 || strcmp(vocab[n_vocab - 1], "|") != 0 || spec->length % 2 == 0) {
            snprintf(err, err_len, "%s: task: reversal needs \"|\" as the vocab's last token and an odd length "
                     "(N letters, \"|\", N letters); got length %d", file, spec->length);
            return false;
        }
        return true;
    case TASK_CORPUS: return corpus_read(t, vocab, file, err, err_len);
    default: break;
    }
    assert(0);
    return false;
}

void task_free(Task *t)
{
    free(t->text);
    memset(t, 0, sizeof *t);
}

// train_induction.py's make_batch.
static void induction_batch(Task *t, int *ids, int *targets)
{
    const int B = t->spec.batch, P = t->spec.length, V = t->n_vocab;
    const int n_max = P / 2 < 7 ? P / 2 : 7;
    int *perm = malloc((size_t)B * V * sizeof *perm);
    float *u = malloc((size_t)B * V * sizeof *u);
    int *n = malloc((size_t)B * sizeof *n);
    assert(perm && u && n); // (a few kilobytes)
    for (int i = 0; i < B * V; i++) u[i] = torch_rng_rand(&t->rng);
    for (int b = 0; b < B; b++) { // argsort of the row (ties in order: torch's sort of so few is an insertion sort)
        int *p = perm + b * V;
        for (int v = 0; v < V; v++) {
            int k = v;
            while (k > 0 && u[b * V + p[k - 1]] > u[b * V + v]) p[k] = p[k - 1], k--;
            p[k] = v;
        }
    }
    for (int b = 0; b < B; b++) n[b] = (int)torch_rng_randint(&t->rng, 2, n_max + 1);
    for (int b = 0; b < B; b++) {
        const int m = (int)floorf(torch_rng_rand(&t->rng) * (float)(P - 2 * n[b] + 1));
        for (int l = 0; l <= P; l++) {
            const int tok = perm[b * V + (l < m ? l : m + (l - m) % n[b])];
            if (l < P) ids[b * P + l] = tok;
            if (l > 0) targets[b * P + l - 1] = tok;
        }
    }
    free(perm), free(u), free(n);
}

void task_batch(Task *t, int *ids, int *targets)
{
    const int B = t->spec.batch, P = t->spec.length;
    switch (t->spec.kind) {
    case TASK_INDUCTION: induction_batch(t, ids, targets); break;
    case TASK_REVERSAL: {
        const int N = (P - 1) / 2, sep = t->n_vocab - 1;
        int row[2 * TASK_MAX_LENGTH + 2];
        assert(P <= TASK_MAX_LENGTH);
        int *letters = malloc((size_t)B * N * sizeof *letters);
        assert(letters);
        for (int i = 0; i < B * N; i++) letters[i] = (int)torch_rng_randint(&t->rng, 0, sep);
        for (int b = 0; b < B; b++) {
            for (int i = 0; i < N; i++) row[i] = letters[b * N + i], row[N + 1 + i] = letters[b * N + N - 1 - i];
            row[N] = row[2 * N + 1] = sep;
            for (int l = 0; l < P; l++) ids[b * P + l] = row[l], targets[b * P + l] = row[l + 1];
        }
        free(letters);
        break;
    }
    case TASK_CORPUS:
        for (int b = 0; b < B; b++) {
            const size_t s = (size_t)torch_rng_randint(&t->rng, 0, (int64_t)(t->n_text - (size_t)P - 1));
            for (int l = 0; l < P; l++) ids[b * P + l] = t->text[s + l], targets[b * P + l] = t->text[s + l + 1];
        }
        break;
    default: assert(0);
    }
}
