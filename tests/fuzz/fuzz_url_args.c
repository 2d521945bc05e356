// libFuzzer target: the page's address read as its command line (url_args_parse,
// compiled natively). The input's first byte picks the browser's language (none,
// en-US, zh-CN, ZH), the rest is location.search. Oracle: a refusal gives a reason
// and leaves nothing; an accepted address gives a command line of the known options
// only ("--lang=en|zh" first, each value as decoded, a shipped lesson's path after
// "--" exactly when lesson= is a shipped name), every argument inside the struct;
// and the address written back (url_args_query, the page's "Start again" and
// address bar) always fits and reads back to the same fields. Build and run: make fuzz.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/url_args.h"

#ifndef FUZZ_URL_ENTRY
#define FUZZ_URL_ENTRY LLVMFuzzerTestOneInput
#endif

static bool url_same(const UrlArgs *a, const UrlArgs *b)
{
    return strcmp(a->lesson, b->lesson) == 0 && a->shipped == b->shipped && a->has_stage == b->has_stage &&
           a->has_batch == b->has_batch && a->has_head == b->has_head && strcmp(a->stage, b->stage) == 0 &&
           strcmp(a->batch, b->batch) == 0 && strcmp(a->head, b->head) == 0 && strcmp(a->lang, b->lang) == 0 &&
           a->projector == b->projector && a->study == b->study;
}

// The argument "--name=value" for a field given, in order.
static bool url_arg_is(const UrlArgs *u, int *i, const char *name, bool has, const char *value)
{
    if (!has) return true;
    if (*i >= u->argc) return false;
    const char *a = u->argv[(*i)++];
    size_t n = strlen(name);
    return strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, n) == 0 &&
           (value ? a[2 + n] == '=' && strcmp(a + 3 + n, value) == 0 : a[2 + n] == '\0');
}

static bool url_argv_ok(const UrlArgs *u)
{
    if (u->argc < 1 || u->argc > URL_ARGS_ARGV_MAX) return false;
    for (int k = 0; k < u->argc; k++) {
        const char *a = u->argv[k];
        bool inside = a >= u->arg_buf && a < u->arg_buf + sizeof u->arg_buf &&
                      memchr(a, '\0', (size_t)(u->arg_buf + sizeof u->arg_buf - a)) != NULL;
        if (!inside && strcmp(a, "--") != 0) return false;
    }
    int i = 0;
    if (!url_arg_is(u, &i, "lang", true, u->lang) || !(strcmp(u->lang, "en") == 0 || strcmp(u->lang, "zh") == 0) ||
        !url_arg_is(u, &i, "stage", u->has_stage, u->stage) || !url_arg_is(u, &i, "batch", u->has_batch, u->batch) ||
        !url_arg_is(u, &i, "head", u->has_head, u->head) || !url_arg_is(u, &i, "projector", u->projector, NULL) ||
        !url_arg_is(u, &i, "study", u->study, NULL))
        return false;
    if (u->shipped != url_args_shipped_name(u->lesson)) return false;
    if (!u->shipped) return i == u->argc;
    char path[URL_ARGS_LESSON_MAX + 32];
    snprintf(path, sizeof path, "/attnviz/lessons/%s.json", u->lesson);
    return i + 2 == u->argc && strcmp(u->argv[i], "--") == 0 && strcmp(u->argv[i + 1], path) == 0;
}

int FUZZ_URL_ENTRY(const uint8_t *data, size_t size);

int FUZZ_URL_ENTRY(const uint8_t *data, size_t size)
{
    static const char *const navs[] = {NULL, "en-US", "zh-CN", "ZH"};
    if (size < 1 || size > URL_ARGS_QUERY_MAX + 16) return 0;
    char *query = malloc(size);
    if (!query) return 0;
    memcpy(query, data + 1, size - 1);
    query[size - 1] = '\0'; // (a NUL inside ends it, as a C string does)
    static UrlArgs u, back;
    char err[256] = "", q[URL_ARGS_QUERY_MAX + 1];
    bool ok = url_args_parse(&u, query, navs[data[0] & 3], err, sizeof err);
    free(query);
    if (!ok) {
        if (!err[0] || u.argc != 0 || u.lesson[0]) __builtin_trap();
        return 0;
    }
    if (err[0] || !url_argv_ok(&u)) __builtin_trap();
    size_t len = url_args_query(&u, q, sizeof q);
    if (len == 0 || len != strlen(q)) __builtin_trap(); // (lang= at least; it always fits)
    if (!url_args_parse(&back, q, navs[(data[0] + 1) & 3], err, sizeof err) || !url_same(&u, &back)) __builtin_trap();
    return 0;
}
