// i18n.c — key = text tables per language, sorted for binary search.
#include "i18n.h"
#include "utf8.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define I18N_MAX_KEYS 1024

typedef struct Entry {
    const char *key, *text; // point into Table.buf
} Entry;

typedef struct Table {
    char *buf;
    Entry e[I18N_MAX_KEYS];
    int n;
} Table;

static Table tables[LANG_COUNT];
static const char *const lang_code[LANG_COUNT] = {"en", "zh"};

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const Entry *)a)->key, ((const Entry *)b)->key);
}

static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    *end = '\0';
    return s;
}

bool i18n_parse(Lang lang, const char *name, const char *text, size_t len, char *err,
                size_t err_len)
{
    Table *t = &tables[lang];
    free(t->buf);
    memset(t, 0, sizeof *t);
    t->buf = malloc(len + 1);
    if (!t->buf) {
        snprintf(err, err_len, "%s: out of memory", name);
        return false;
    }
    memcpy(t->buf, text, len);
    t->buf[len] = '\0';
    int line = 0;
    for (char *p = t->buf; *p;) {
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        char *next = nl ? nl + 1 : end;
        line++;
        char *s = trim(p, end);
        if (*s && *s != '#') {
            char *eq = strchr(s, '=');
            if (!eq) {
                snprintf(err, err_len, "%s:%d: expected `key = text`", name, line);
                return false;
            }
            char *key = trim(s, eq);
            char *val = trim(eq + 1, eq + 1 + strlen(eq + 1));
            // unescape \n and \\ in place
            char *w = val;
            for (char *r = val; *r; r++) {
                if (r[0] == '\\' && r[1] == 'n') *w++ = '\n', r++;
                else if (r[0] == '\\' && r[1] == 't') *w++ = '\t', r++;
                else if (r[0] == '\\' && r[1] == '\\') *w++ = '\\', r++;
                else *w++ = *r;
            }
            *w = '\0';
            if (t->n >= I18N_MAX_KEYS) {
                snprintf(err, err_len, "%s:%d: more than %d keys", name, line, I18N_MAX_KEYS);
                return false;
            }
            t->e[t->n].key = key;
            t->e[t->n].text = val;
            t->n++;
        }
        p = next;
    }
    qsort(t->e, (size_t)t->n, sizeof t->e[0], entry_cmp);
    return true;
}

// Language files are small (en.txt is ~24 KiB): a larger one is refused, as is
// anything that is not a regular file (a FIFO, /dev/zero through a link).
#define I18N_MAX_BYTES (1u << 20)

static bool load_file(Lang lang, const char *path, bool required, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (required) snprintf(err, err_len, "%s: cannot open the language file", path);
        return !required;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)I18N_MAX_BYTES) {
        bool reg = S_ISREG(st.st_mode);
        close(fd);
        snprintf(err, err_len, "%s: %s", path, reg ? "the language file is larger than 1 MiB" :
                 "the language file is not a regular file");
        return false;
    }
    char *buf = malloc(I18N_MAX_BYTES + 1);
    size_t n = 0;
    while (buf && n <= I18N_MAX_BYTES) {
        ssize_t got = read(fd, buf + n, I18N_MAX_BYTES + 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (!buf) {
        snprintf(err, err_len, "%s: out of memory", path);
        return false;
    }
    if (n > I18N_MAX_BYTES) { // grew since fstat
        free(buf);
        snprintf(err, err_len, "%s: the language file is larger than 1 MiB", path);
        return false;
    }
    bool ok = i18n_parse(lang, path, buf, n, err, err_len);
    free(buf);
    return ok;
}

bool i18n_load(const char *assets_dir, char *err, size_t err_len)
{
    char path[1024];
    for (int l = 0; l < LANG_COUNT; l++) {
        snprintf(path, sizeof path, "%s/lang/%s.txt", assets_dir, lang_code[l]);
        if (!load_file((Lang)l, path, l == LANG_EN, err, err_len)) return false;
    }
    return true;
}

void i18n_free(void)
{
    for (int l = 0; l < LANG_COUNT; l++) {
        free(tables[l].buf);
        memset(&tables[l], 0, sizeof tables[l]);
    }
}

static const char *find(const Table *t, const char *key)
{
    Entry k = {key, NULL};
    const Entry *e = t->n ? bsearch(&k, t->e, (size_t)t->n, sizeof t->e[0], entry_cmp) : NULL;
    return e ? e->text : NULL;
}

// i18n_alias's table: key → the key whose text it takes (kept across i18n_load and i18n_free)
#define I18N_MAX_ALIASES 8
static struct {
    char key[64], as[64];
} aliases[I18N_MAX_ALIASES];

void i18n_alias(const char *key, const char *as)
{
    int free_at = -1;
    for (int i = 0; i < I18N_MAX_ALIASES; i++) {
        if (!strcmp(aliases[i].key, key)) free_at = i;
        else if (!aliases[i].key[0] && free_at < 0) free_at = i;
    }
    assert(free_at >= 0 && strlen(key) < sizeof aliases[0].key && (!as || strlen(as) < sizeof aliases[0].as));
    snprintf(aliases[free_at].key, sizeof aliases[0].key, "%s", as ? key : "");
    snprintf(aliases[free_at].as, sizeof aliases[0].as, "%s", as ? as : "");
}

const char *i18n_lookup(Lang lang, const char *key)
{
    assert((unsigned)lang < LANG_COUNT); // a Lang: args.c, url_args.c and the L key make only these
    for (int i = 0; i < I18N_MAX_ALIASES; i++)
        if (aliases[i].key[0] && !strcmp(aliases[i].key, key)) key = aliases[i].as;
    const char *s = find(&tables[lang], key);
    return s ? s : find(&tables[LANG_EN], key);
}

const char *i18n_get(Lang lang, const char *key)
{
    const char *s = i18n_lookup(lang, key);
    return s ? s : key;
}

int i18n_count(Lang lang)
{
    assert((unsigned)lang < LANG_COUNT);
    return tables[lang].n;
}

const char *i18n_key_at(Lang lang, int i)
{
    assert(i >= 0 && i < i18n_count(lang)); // callers count up to i18n_count
    return tables[lang].e[i].key;
}

void i18n_format(char *out, size_t n, const char *tpl, int nargs, const char *const *args)
{
    if (n == 0) return;
    size_t o = 0;
    bool cut = false;
    for (const char *p = tpl; *p && !cut; p++) {
        const char *a = p, *end = p + 1;
        if (p[0] == '{' && p[1] >= '1' && p[1] <= '9' && p[2] == '}') {
            int i = p[1] - '1';
            a = i < nargs && args[i] ? args[i] : "";
            end = a + strlen(a);
            p += 2;
        }
        for (; a < end; a++) {
            if (o + 1 >= n) {
                cut = true;
                break;
            }
            out[o++] = *a;
        }
    }
    if (cut) { // do not leave half a UTF-8 sequence
        o = utf8_whole(out, o);
    }
    out[o] = '\0';
}

void i18n_fmt(char *out, size_t n, Lang lang, const char *key, int nargs, const char *const *args)
{
    i18n_format(out, n, i18n_get(lang, key), nargs, args);
}
