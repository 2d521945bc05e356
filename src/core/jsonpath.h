// jsonpath.h — reading JSON with its paths: every error names the file, the
// JSON path ("weights.w_q[3][1]") and what was expected, on one line (control
// characters escaped, valid UTF-8, cut to the buffer), and returns false. On top
// of cJSON (getters that accept NULL; one check after parse): keys checked
// against a list, integers, booleans and float32 numbers in range, tensors in
// the three forms a lesson writes them, and one scan of the raw text before
// cJSON builds anything (nesting, JSON's number grammar, a bound on the values).
// The lesson reader (lesson.c) is written with these.
#ifndef ATTNVIZ_JSONPATH_H
#define ATTNVIZ_JSONPATH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "tensor.h"

#define JSONPATH_MAX 160      // a path longer than this is cut (it only appears in messages)
#define JSONPATH_MSG_MAX 1024 // the message part of an error (an unknown model key lists all 47 keys)

// Where errors go: the file's name (as given) and the caller's buffer.
typedef struct JsonCtx {
    const char *file;
    char *err;
    size_t err_len;
    // the file's numbers that read as the double FLT_MAX + 2^103 (the halfway point to
    // infinity): some round to FLT_MAX as decimals (strtof), some to infinity
    bool halfway_down, halfway_up;
} JsonCtx;

typedef struct JsonTensorOpts {
    bool allow_bool;   // masks: true/false as 1/0
    unsigned max_elems; // the most elements a tensor may have
} JsonTensorOpts;

typedef struct JsonScan {
    bool early;          // the text stops inside a string or with brackets open
    size_t deep_at;      // where nesting first passes max_nesting levels, or len
    size_t bad_number;   // the first number cJSON would take that JSON does not allow
                         // ("01", "1.", "-.5", "1.e5"), or len
    size_t bad_len;      // its length (at most 24 bytes: enough to quote it)
    size_t values;       // an upper bound of the JSON values: commas + containers + 1
    bool halfway_down, halfway_up; // numbers reading as the double FLT_MAX + 2^103 (see JsonCtx)
} JsonScan;


// The error: "FILE: PATH: message" (PATH may be NULL or ""); always false.
// Keys, values and file names come from the input: the line stays one line
// (control characters escaped: \n, \xNN, \u0085), valid UTF-8, and within
// err_len with the message whole whenever it fits in 5/8 of the line: a long
// file name keeps its tail, a long path its head.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
bool jsonpath_fail(JsonCtx *c, const char *path, const char *fmt, ...);
// base.key and base[i] into out (JSONPATH_MAX bytes).
void jsonpath_key(char *out, const char *base, const char *key);
void jsonpath_index(char *out, const char *base, int i);
// "a number", "an object", … ("nothing" for NULL).
const char *jsonpath_type(const cJSON *j);
// obj has only keys from allowed (NULL-terminated), each once.
bool jsonpath_check_keys(JsonCtx *c, const cJSON *obj, const char *path, const char *const *allowed);
// obj.key as an integer in [lo, hi] (dflt when absent and not required).
bool jsonpath_int(JsonCtx *c, const cJSON *obj, const char *path, const char *key, int *out, int lo, int hi,
                  bool required, int dflt);
bool jsonpath_bool(JsonCtx *c, const cJSON *obj, const char *path, const char *key, bool *out, bool dflt);
// A number that rounds to a finite float32.
bool jsonpath_number(JsonCtx *c, const cJSON *j, const char *p, float *out);
// A tensor: nested arrays; {"shape": [...], "data": [flat]}; {"shape": [...], "arange": [start, stop, step]}.
bool jsonpath_tensor(JsonCtx *c, const cJSON *j, const char *p, const JsonTensorOpts *o, Tensor *t);
// "(2,4,4)".
void jsonpath_shape_text(int rank, const int *shape, char *buf, size_t n);
// t has this shape; else the error says what was written and what was expected.
bool jsonpath_expect_shape(JsonCtx *c, const char *p, const Tensor *t, int rank, const int *shape,
                           const char *written);
// Line and column (1-based, columns in characters) of byte off of text.
void jsonpath_line_col(const char *text, size_t off, int *line, int *col);
// One pass over the text before cJSON builds anything.
JsonScan jsonpath_scan(const char *text, size_t len, int max_nesting);
// Only JSON white space.
bool jsonpath_only_space(const char *text, size_t len);

#endif
