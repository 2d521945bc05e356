// utf8.h — strict UTF-8 decoding (no overlongs, surrogates or code points past U+10FFFF).
#ifndef ATTNVIZ_UTF8_H
#define ATTNVIZ_UTF8_H

#include <stddef.h>
#include <stdint.h>

// Length (1–4) of the valid UTF-8 sequence at s (n bytes available), storing
// its code point in *cp; 0 when the bytes there are not valid UTF-8.
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

// The code point at s (a NUL-terminated string) and its byte length in *len:
// lenient, for drawing: bytes that are not valid UTF-8 give U+FFFD, 1 byte.
uint32_t utf8_next(const char *s, size_t *len);

#endif
