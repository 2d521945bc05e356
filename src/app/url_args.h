// url_args.h — the page's address as a command line (the browser build: web.js
// hands location.search to web_main.c, which parses it here; plain C, compiled
// natively too, where the tests and fuzz_url_args drive it).
//
//   ?lesson=causal-decoder&stage=attn&lang=zh&batch=1&head=0&projector=1&study=1
//   lesson=NAME            a shipped lesson: /attnviz/lessons/NAME.json
//   lesson=path/x.json     a lesson file on the same site: fetched by the page first
//   stage, batch, head     --stage, --batch, --head (args.c checks the values)
//   lang=en|zh             else the browser's language (zh…: Chinese)
//   projector, study       on unless 0, false or no
//
// The query is read as a browser's URLSearchParams reads it ('&' between pairs,
// '+' a space, %XX a byte, the first of a repeated name counts; other names are
// ignored), and written back by url_args_query so that reading it again gives the
// same fields (the page's "Start again" link).
#ifndef ATTNVIZ_URL_ARGS_H
#define ATTNVIZ_URL_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#define URL_ARGS_QUERY_MAX 8192  // the longest query read (a longer one is refused; url_args_query always fits)
#define URL_ARGS_LESSON_MAX 1024 // lesson= (a path on the site), decoded
#define URL_ARGS_VALUE_MAX 128   // stage=, batch=, head=, decoded
#define URL_ARGS_ARGV_MAX 12

typedef struct UrlArgs {
    char lesson[URL_ARGS_LESSON_MAX]; // lesson= as given, decoded ("": the default lesson)
    bool shipped;                     // lesson is a shipped lesson's name ([A-Za-z0-9_-]+)
    char stage[URL_ARGS_VALUE_MAX], batch[URL_ARGS_VALUE_MAX], head[URL_ARGS_VALUE_MAX];
    bool has_stage, has_batch, has_head; // (given, even empty: args.c then says what is wrong)
    char lang[3];                        // "en" or "zh"
    bool projector, study;
    // The command line (after the program's name): --lang=…, --stage=…, --batch=…,
    // --head=…, --projector, --study, then "--" and the shipped lesson's path.
    // Points into u; a lesson to fetch is not in it (the page adds "--" and its copy).
    const char *argv[URL_ARGS_ARGV_MAX];
    int argc;
    char arg_buf[4 * URL_ARGS_VALUE_MAX + URL_ARGS_LESSON_MAX + 64];
} UrlArgs;

// Reads query (with or without its leading '?'; NULL: empty) with nav_lang, the
// browser's language (navigator.language; NULL: none). False with one line in err
// (naming the field, in words a reader of the address understands) when the query
// or a value is too long or a value holds a NUL byte (%00); u is then cleared.
bool url_args_parse(UrlArgs *u, const char *query, const char *nav_lang, char *err, size_t n);

// The query that opens u again (no leading '?'): lesson, stage, batch, head, lang,
// projector, study, each only when set, percent-encoded. The length written, or 0
// when it does not fit in n (out then "").
size_t url_args_query(const UrlArgs *u, char *out, size_t n);

// Whether name is a shipped lesson's name as lesson= takes it ([A-Za-z0-9_-]{1,200}).
bool url_args_shipped_name(const char *name);

#endif
