// json_out.h — writing JSON text (for --dump and frames.json).
#ifndef ATTNVIZ_JSON_OUT_H
#define ATTNVIZ_JSON_OUT_H

#include <stdio.h>

// Writes s as a JSON string: quotes, backslashes and control characters
// escaped; bytes that are not valid UTF-8 (a file name, say) become U+FFFD, so
// the output is always valid UTF-8 JSON.
void json_write_string(FILE *f, const char *s);
// A float with 9 significant digits (round-trips float32); non-finite values
// as the strings "inf", "-inf", "nan".
void json_write_float(FILE *f, float v);

#endif
