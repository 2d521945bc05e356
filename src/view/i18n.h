// i18n.h — every UI string, looked up by key from assets/lang/<lang>.txt.
//
// File format (UTF-8): one `key = text` per line; `#` starts a comment line;
// `\n` in text is a newline, `\t` a tab, `\\` a backslash. Missing keys in a language fall
// back to English, then to the key itself (so a typo shows, never crashes).
#ifndef ATTNVIZ_I18N_H
#define ATTNVIZ_I18N_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h" // Lang

// Loads assets_dir/lang/en.txt (required) and the other languages (optional).
// Returns false with one line "path: what went wrong" in err.
bool i18n_load(const char *assets_dir, char *err, size_t err_len);
void i18n_free(void);
// The text for key in lang; never NULL.
const char *i18n_get(Lang lang, const char *key);
// The text for key in lang, else in English, else NULL (for optional keys).
const char *i18n_lookup(Lang lang, const char *key);
// From now on key's text is as_key's (as NULL: its own again), in every language: the page
// says what it makes (its E row in the help, keys.export → keys.export_web). At most 8.
void i18n_alias(const char *key, const char *as_key);
// Number of keys loaded for lang, and the i-th key in sorted order (tests).
int i18n_count(Lang lang);
const char *i18n_key_at(Lang lang, int i);
// Parses one language from a buffer (used by i18n_load and the tests).
bool i18n_parse(Lang lang, const char *name, const char *text, size_t len, char *err,
                size_t err_len);

#endif

#ifndef ATTNVIZ_I18N_FORMAT
#define ATTNVIZ_I18N_FORMAT
// Copies tpl into out replacing {1}..{9} by args[0..8] (missing args → "").
// Always NUL-terminates; truncates at n.
void i18n_format(char *out, size_t n, const char *tpl, int nargs, const char *const *args);
// Shorthand: i18n_format of i18n_get(lang, key).
void i18n_fmt(char *out, size_t n, Lang lang, const char *key, int nargs, const char *const *args);
#endif
