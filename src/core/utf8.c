// utf8.c — strict UTF-8 decoding (see utf8.h).
#include "utf8.h"

#include <stdio.h>
#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return 0;
    unsigned char b = s[0];
    size_t more;
    uint32_t c;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if ((b & 0xE0) == 0xC0) {
        more = 1, c = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
        more = 2, c = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
        more = 3, c = b & 0x07;
    } else {
        return 0;
    }
    if (more >= n) return 0;
    for (size_t k = 1; k <= more; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[k] & 0x3F);
    }
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
    if (c < min_cp[more] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return more + 1;
}

uint32_t utf8_next(const char *s, size_t *len)
{
    size_t n = 0;
    while (n < 4 && s[n]) n++;
    uint32_t cp;
    size_t k = utf8_decode((const unsigned char *)s, n, &cp);
    if (k == 0) {
        *len = 1;
        return 0xFFFD;
    }
    *len = k;
    return cp;
}

size_t utf8_line_width(const unsigned char *s, size_t n, size_t *adv)
{
    uint32_t cp;
    size_t k = utf8_decode(s, n, &cp);
    if (k == 0) {   // not UTF-8: \xNN
        *adv = 1;
        return 4;
    }
    *adv = k;
    if (cp == '\n' || cp == '\t' || cp == '\r') return 2;
    if (cp < 0x20 || cp == 0x7f) return 4;
    if (cp >= 0x80 && cp <= 0x9f) return 6;   // C1 controls: \u0085
    return k;
}

size_t utf8_line_escape(char *dst, size_t cap, const char *src, size_t n, size_t *consumed)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0, i = 0;
    while (i < n) {
        size_t adv, w = utf8_line_width(s + i, n - i, &adv);
        if (o + w + 1 > cap) break;
        if (w == adv) {
            for (size_t k = 0; k < adv; k++) dst[o++] = (char)s[i + k];
        } else if (w == 2) {
            dst[o++] = '\\';
            dst[o++] = s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : 'r';
        } else if (w == 4) {
            snprintf(dst + o, 5, "\\x%02x", s[i]);
            o += 4;
        } else {
            uint32_t cp;
            utf8_decode(s + i, n - i, &cp);
            snprintf(dst + o, 7, "\\u%04x", (unsigned)cp);
            o += 6;
        }
        i += adv;
    }
    if (cap) dst[o] = '\0';
    if (consumed) *consumed = i;
    return o;
}

void utf8_fputs_line(FILE *f, const char *s)
{
    char buf[256];
    size_t n = strlen(s);
    while (n > 0) {
        size_t used = 0, w = utf8_line_escape(buf, sizeof buf, s, n, &used);
        fwrite(buf, 1, w, f);
        s += used, n -= used;
    }
    fputc('\n', f);
}

size_t utf8_floor(const char *s, size_t i)
{
    while (i > 0 && utf8_is_cont((unsigned char)s[i])) i--;
    return i;
}

size_t utf8_whole(const char *s, size_t n)
{
    size_t k = n;
    while (k > 0 && utf8_is_cont((unsigned char)s[k - 1])) k--;
    if (k == 0) return n;
    unsigned char lead = (unsigned char)s[k - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return n - (k - 1) < need ? k - 1 : n;
}

// Returns the offset of the first invalid UTF-8 byte, or len when all is valid.
size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    uint32_t cp;
    for (size_t i = 0, k; i < len; i += k)
        if ((k = utf8_decode(s + i, len - i, &cp)) == 0) return i;
    return len;
}
