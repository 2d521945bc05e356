// png_write.c — libspng encoder into a temp file + rename (see png_write.h).
#include "png_write.h"

#include <errno.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "temp_file.h"

bool png_write_rgba(const char *path, const void *pixels, int w, int h, int pitch, int zlib_level,
                    bool user_target, char *err, size_t err_len)
{
    if (!path || !pixels || w <= 0 || h <= 0 || pitch < w * 4) {
        snprintf(err, err_len, "%s: bad image (%dx%d, pitch %d)", path ? path : "(null)", w, h, pitch);
        return false;
    }
    char tmp[4200];
    FILE *f = user_target ? temp_file_open_target(path, tmp, sizeof tmp) : temp_file_create(path, tmp, sizeof tmp);
    if (!f) {
        snprintf(err, err_len, "%s: cannot write: %s", path, temp_file_strerror(errno));
        return false;
    }
    bool ok = false;
    unsigned char *row = NULL;
    const char *what = "out of memory";
    int rc = 0;
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    if (!ctx) goto done;
    struct spng_ihdr ihdr = {0};
    ihdr.width = (uint32_t)w;
    ihdr.height = (uint32_t)h;
    ihdr.bit_depth = 8;
    // Frames are opaque: RGB without filtering at a low zlib level encodes a
    // 1280×720 frame ~8× faster than RGBA with adaptive filters, and the flat
    // heatmap colours still compress well (measured in README "Speed").
    ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
    row = malloc((size_t)w * 3);
    if (!row) goto done;
    what = "encoding failed";
    if ((rc = spng_set_png_file(ctx, f)) != 0) goto done;
    if ((rc = spng_set_ihdr(ctx, &ihdr)) != 0) goto done;
    if ((rc = spng_set_option(ctx, SPNG_FILTER_CHOICE, SPNG_DISABLE_FILTERING)) != 0) goto done;
    if (zlib_level >= 0 && (rc = spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, zlib_level)) != 0)
        goto done;
    if ((rc = spng_encode_image(ctx, NULL, 0, SPNG_FMT_PNG, SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE)) != 0)
        goto done;
    for (int y = 0; y < h; y++) {
        const unsigned char *src = (const unsigned char *)pixels + (size_t)y * (size_t)pitch;
        for (int x = 0; x < w; x++) {
            row[3 * x] = src[4 * x], row[3 * x + 1] = src[4 * x + 1], row[3 * x + 2] = src[4 * x + 2];
        }
        rc = spng_encode_row(ctx, row, (size_t)w * 3);
        if (rc != 0 && rc != SPNG_EOI) goto done;
    }
    rc = 0;
    ok = true;
done:;
    int io_errno = errno;   // a failed write inside libspng leaves the cause here
    free(row);
    if (ctx) spng_ctx_free(ctx);
    if (!ok && rc && ferror(f)) {   // the file, not the encoder, failed: say why (ENOSPC, EFBIG, EIO)
        what = strerror(io_errno);
        rc = 0;
    }
    if (fflush(f) != 0 || ferror(f)) {
        if (ok) what = strerror(errno);
        ok = false;
    }
    if (ok && user_target && fsync(fileno(f)) != 0) {
        what = strerror(errno);
        ok = false;
    }
    if (fclose(f) != 0 && ok) {
        what = strerror(errno);
        ok = false;
    }
    int e = ok ? (user_target ? temp_file_rename(tmp, path) : rename(tmp, path) != 0 ? errno : 0) : 0;
    if (e) {
        what = temp_file_strerror(e);
        ok = false;
    }
    if (!ok) {
        remove(tmp);
        if (rc) snprintf(err, err_len, "%s: %s: %s", path, what, spng_strerror(rc));
        else snprintf(err, err_len, "%s: %s", path, what);
    }
    return ok;
}
