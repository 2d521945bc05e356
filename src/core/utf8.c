// utf8.c — strict UTF-8 decoding (see utf8.h).
#include "utf8.h"

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
