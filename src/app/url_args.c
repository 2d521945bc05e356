// url_args.c — the page's address as a command line (see url_args.h).
#include "url_args.h"

#include <stdio.h>
#include <string.h>

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

enum { DECODED, TOO_LONG, HAS_NUL };

// s[0..len) decoded as URLSearchParams does ('+' a space, %XX a byte; a '%' not
// followed by two hex digits stays as it is) into out (cap bytes with its NUL).
static int decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%' && i + 2 < len && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
            c = (char)(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
            i += 2;
            if (c == '\0') return HAS_NUL;
        }
        if (k + 1 >= cap) return TOO_LONG;
        out[k++] = c;
    }
    out[k] = '\0';
    return DECODED;
}

bool url_args_shipped_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 200) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

static bool flag_on(const char *v)
{
    return strcmp(v, "0") != 0 && strcmp(v, "false") != 0 && strcmp(v, "no") != 0;
}

// "en" or "zh": lang= when it is one of them (any case), else the browser's.
static void pick_lang(UrlArgs *u, const char *given, bool has, const char *nav_lang)
{
    char v[3] = "";
    if (has && strlen(given) == 2) v[0] = (char)(given[0] | 0x20), v[1] = (char)(given[1] | 0x20);
    if (strcmp(v, "zh") == 0 || strcmp(v, "en") == 0) {
        memcpy(u->lang, v, 3);
        return;
    }
    bool zh = nav_lang && (nav_lang[0] | 0x20) == 'z' && nav_lang[0] && (nav_lang[1] | 0x20) == 'h';
    memcpy(u->lang, zh ? "zh" : "en", 3);
}

// Appends "--name=value" (or "--name" when value is NULL) to the command line.
static void push(UrlArgs *u, size_t *used, const char *name, const char *value)
{
    char *p = u->arg_buf + *used;
    size_t room = sizeof u->arg_buf - *used;
    int w = value ? snprintf(p, room, "--%s=%s", name, value) : snprintf(p, room, "--%s", name);
    if (w < 0 || (size_t)w >= room || u->argc >= URL_ARGS_ARGV_MAX) return; // (sized for every field: never)
    u->argv[u->argc++] = p;
    *used += (size_t)w + 1;
}

static void build_argv(UrlArgs *u)
{
    size_t used = 0;
    u->argc = 0;
    push(u, &used, "lang", u->lang);
    if (u->has_stage) push(u, &used, "stage", u->stage);
    if (u->has_batch) push(u, &used, "batch", u->batch);
    if (u->has_head) push(u, &used, "head", u->head);
    if (u->projector) push(u, &used, "projector", NULL);
    if (u->study) push(u, &used, "study", NULL);
    if (u->shipped) {
        char *p = u->arg_buf + used;
        size_t room = sizeof u->arg_buf - used;
        int w = snprintf(p, room, "/attnviz/lessons/%s.json", u->lesson);
        if (w > 0 && (size_t)w < room && u->argc + 2 <= URL_ARGS_ARGV_MAX) {
            u->argv[u->argc++] = "--";
            u->argv[u->argc++] = p;
        }
    }
}

typedef struct Field {
    const char *name;
    char *value;
    size_t cap;
    bool *has;
} Field;

bool url_args_parse(UrlArgs *u, const char *query, const char *nav_lang, char *err, size_t n)
{
    memset(u, 0, sizeof *u);
    if (n) err[0] = '\0';
    if (!query) query = "";
    if (*query == '?') query++;
    size_t qlen = strlen(query);
    if (qlen > URL_ARGS_QUERY_MAX) {
        snprintf(err, n, "the address is too long (%zu characters after the '?'; at most %d)", qlen, URL_ARGS_QUERY_MAX);
        memset(u, 0, sizeof *u);
        return false;
    }
    char lang[8] = "", projector[8] = "", study[8] = "";
    bool has_lesson = false, has_lang = false, has_projector = false, has_study = false;
    const Field fields[] = {
        {"lesson", u->lesson, sizeof u->lesson, &has_lesson}, {"stage", u->stage, sizeof u->stage, &u->has_stage},
        {"batch", u->batch, sizeof u->batch, &u->has_batch},   {"head", u->head, sizeof u->head, &u->has_head},
        {"lang", lang, sizeof lang, &has_lang},                {"projector", projector, sizeof projector, &has_projector},
        {"study", study, sizeof study, &has_study},
    };
    for (const char *p = query; *p;) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t name_len = eq ? (size_t)(eq - p) : len;
        char name[16];
        if (len > 0 && decode(p, name_len, name, sizeof name) == DECODED) {
            for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
                if (strcmp(name, fields[f].name) != 0 || *fields[f].has) continue; // (the first one counts)
                const char *v = eq ? eq + 1 : p + len;
                size_t vlen = (size_t)(p + len - v);
                int r = decode(v, vlen, fields[f].value, fields[f].cap);
                // (lang, projector, study: a value longer than any meaningful one reads as "other")
                if (r == TOO_LONG && fields[f].cap < 16) r = DECODED, snprintf(fields[f].value, fields[f].cap, "?");
                if (r != DECODED) {
                    snprintf(err, n, "the address's %s= %s", fields[f].name,
                             r == HAS_NUL ? "holds a zero byte (%00)" : "is too long");
                    memset(u, 0, sizeof *u);
                    return false;
                }
                *fields[f].has = true;
            }
        }
        p += len;
        if (*p == '&') p++;
    }
    pick_lang(u, lang, has_lang, nav_lang);
    u->projector = has_projector && flag_on(projector);
    u->study = has_study && flag_on(study);
    u->shipped = url_args_shipped_name(u->lesson); // ("" : the default lesson)
    build_argv(u);
    return true;
}

// Appends "name=" and value percent-encoded (all but A-Z a-z 0-9 - _ . ~ /).
static bool put(char *out, size_t n, size_t *k, const char *name, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    int w = snprintf(out + *k, n - *k, "%s%s=", *k ? "&" : "", name);
    if (w < 0 || (size_t)w >= n - *k) return false; // a lesson path longer than the address's room
    *k += (size_t)w;
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        bool plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                     strchr("-_.~/", *c) != NULL;
        if (*k + (plain ? 1 : 3) >= n) return false;
        if (plain) {
            out[(*k)++] = (char)*c;
        } else {
            out[(*k)++] = '%', out[(*k)++] = hex[*c >> 4], out[(*k)++] = hex[*c & 15];
        }
    }
    out[*k] = '\0';
    return true;
}

size_t url_args_query(const UrlArgs *u, char *out, size_t n)
{
    if (n == 0) return 0;
    size_t k = 0;
    out[0] = '\0';
    bool ok = (!u->lesson[0] || put(out, n, &k, "lesson", u->lesson)) &&
              (!u->has_stage || put(out, n, &k, "stage", u->stage)) &&
              (!u->has_batch || put(out, n, &k, "batch", u->batch)) &&
              (!u->has_head || put(out, n, &k, "head", u->head)) && put(out, n, &k, "lang", u->lang) &&
              (!u->projector || put(out, n, &k, "projector", "1")) && (!u->study || put(out, n, &k, "study", "1"));
    if (!ok) {
        out[0] = '\0';
        return 0;
    }
    return k;
}
