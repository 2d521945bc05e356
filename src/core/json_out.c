// json_out.c — JSON strings and numbers (see json_out.h).
#include "json_out.h"

#include <math.h>
#include <string.h>

#include "utf8.h"

void json_write_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    fputc('"', f);
    while (n > 0) {
        uint32_t cp;
        size_t k = utf8_decode(p, n, &cp);
        if (k == 0) {
            fputs("\\ufffd", f);   // not UTF-8: the replacement character
            k = 1;
        } else if (cp == '"' || cp == '\\') {
            fprintf(f, "\\%c", (char)cp);
        } else if (cp < 0x20 || cp == 0x7f) {
            fprintf(f, "\\u%04x", (unsigned)cp);
        } else {
            fwrite(p, 1, k, f);
        }
        p += k, n -= k;
    }
    fputc('"', f);
}

void json_write_float(FILE *f, float v)
{
    if (isnan(v))
        fputs("\"nan\"", f);
    else if (isinf(v))
        fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fprintf(f, "%.9g", (double)v);
}
