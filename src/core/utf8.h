// utf8.h — strict UTF-8 decoding (no overlongs, surrogates or code points past U+10FFFF).
#ifndef ATTNVIZ_UTF8_H
#define ATTNVIZ_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// Length (1–4) of the valid UTF-8 sequence at s (n bytes available), storing
// its code point in *cp; 0 when the bytes there are not valid UTF-8.
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

// Whether byte c continues a sequence (10xxxxxx): a cut before it splits a character.
static inline bool utf8_is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }
// The largest k ≤ i where s can be cut without splitting a character (s[k] is
// not a continuation byte; s has at least i + 1 readable bytes, or i = its length).
size_t utf8_floor(const char *s, size_t i);
// How many of s's first n bytes to keep so that a last character that is not
// whole (a lead byte without all its continuation bytes: a buffer cut too short)
// is dropped; n when the last character is whole.
size_t utf8_whole(const char *s, size_t n);

// The offset of the first byte of s (len bytes) that is not valid UTF-8, or len.
size_t utf8_invalid_at(const unsigned char *s, size_t len);

// The code point at s (a NUL-terminated string) and its byte length in *len:
// lenient, for drawing: bytes that are not valid UTF-8 give U+FFFD, 1 byte.
uint32_t utf8_next(const char *s, size_t *len);

// One line of text for a message: how the character at s (n bytes left) is
// written, as its width in bytes; *adv = the bytes of s it takes. \n \t \r
// stay two-byte escapes, other C0 controls, DEL and bytes that are not UTF-8
// become \xNN, C1 controls (U+0080-U+009F) \u0085; everything else is copied.
size_t utf8_line_width(const unsigned char *s, size_t n, size_t *adv);
// Writes src (n bytes) escaped as above into dst (cap bytes, NUL-terminated
// when cap > 0), stopping before a character or escape that would not fit
// whole; returns the bytes written, *consumed (may be NULL) the bytes of src used.
size_t utf8_line_escape(char *dst, size_t cap, const char *src, size_t n, size_t *consumed);
// Prints s escaped as above and a newline: an error line stays one line.
void utf8_fputs_line(FILE *f, const char *s);

#endif
