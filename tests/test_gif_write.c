// test_gif_write.c — the GIF encoder written here (gif_write.h, the page's GIF), read back
// by FFmpeg's decoder: every frame's every pixel as written (fewer than 256 colours: each
// exact), a frame a tick, the ticks' delays adding up to the length, noise that fills the
// LZW table many times over, odd sizes, a 1×1 GIF; a failed open and an abandoned file
// leave nothing. Exits 77 without ffmpeg and ffprobe.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/gif_write.h"

static char dir[64];

// n frames of w×h RGBA from fill(frame, x, y) → 0xRRGGBB.
typedef uint32_t (*FillFn)(int frame, int x, int y);

static unsigned char *make_frame(int w, int h, int k, FillFn fill)
{
    unsigned char *p = malloc((size_t)w * (size_t)h * 4);
    assert_non_null(p);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint32_t c = fill(k, x, y);
            unsigned char *q = p + ((size_t)y * (size_t)w + (size_t)x) * 4;
            q[0] = (unsigned char)(c >> 16), q[1] = (unsigned char)(c >> 8), q[2] = (unsigned char)c, q[3] = 255;
        }
    return p;
}

// Writes the frames (ticks[k] each, observed first), then reads the file back with ffmpeg
// as one RGB picture a frame and checks each tick's picture and the length.
static void round_trip(const char *name, int w, int h, int fps, int n, const int *ticks, FillFn fill)
{
    char path[256], err[512] = "", cmd[1024];
    snprintf(path, sizeof path, "%s/%s.gif", dir, name);
    GifWriter *g = gif_write_open(path, w, h, fps, err, sizeof err);
    assert_non_null(g);
    unsigned char **frames = calloc((size_t)n, sizeof *frames);
    assert_non_null(frames);
    for (int k = 0; k < n; k++) frames[k] = make_frame(w, h, k, fill);
    assert_true(gif_write_wants_observe(g));
    for (int k = 0; k < n; k++) gif_write_observe(g, frames[k], w * 4);
    int total = 0;
    for (int k = 0; k < n; k++) {
        assert_true(gif_write_frame(g, frames[k], w * 4, ticks[k], err, sizeof err));
        total += ticks[k];
    }
    assert_true(gif_write_close(g, true, err, sizeof err));
    snprintf(cmd, sizeof cmd, "ffmpeg -v error -i %s -f rawvideo -pix_fmt rgb24 -fps_mode passthrough -", path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    const size_t size = (size_t)w * (size_t)h * 3;
    unsigned char *got = malloc(size);
    assert_non_null(got);
    int t = 0;
    for (int k = 0; k < n; k++)
        for (int r = 0; r < ticks[k]; r++, t++) {
            if (fread(got, 1, size, f) != size) fail_msg("%s: %d frames read, %d written", name, t, total);
            for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
                if (memcmp(got + 3 * i, frames[k] + 4 * i, 3) != 0)
                    fail_msg("%s: tick %d, pixel (%zu, %zu): %02x%02x%02x, written %02x%02x%02x", name, t,
                             i % (size_t)w, i / (size_t)w, got[3 * i], got[3 * i + 1], got[3 * i + 2],
                             frames[k][4 * i], frames[k][4 * i + 1], frames[k][4 * i + 2]);
        }
    assert_int_equal(fread(got, 1, 1, f), 0); // no frame more
    assert_int_equal(pclose(f), 0);
    snprintf(cmd, sizeof cmd, "ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 %s", path);
    f = popen(cmd, "r");
    assert_non_null(f);
    double dur = -1;
    assert_int_equal(fscanf(f, "%lf", &dur), 1);
    pclose(f);
    // each tick's delay in hundredths, rounded as FFmpeg's muxer does: the sum is round(total · 100 / fps)
    const double want = (double)(int)((double)total * 100.0 / fps + 0.5) / 100.0;
    if (dur < want - 0.001 || dur > want + 0.001) fail_msg("%s lasts %.3f s, expected %.3f s", name, dur, want);
    free(got);
    for (int k = 0; k < n; k++) free(frames[k]);
    free(frames);
    unlink(path);
}

// a panel of cells, one moving, on a background: the flat colours of a frame
static uint32_t cells(int k, int x, int y)
{
    if (x < 3 || y < 2) return 0x1b1d23;
    const int cx = (x - 3) / 9, cy = (y - 2) / 7;
    if (cx == k % 5 && cy == 1) return 0xffbf47;
    return 0x102040u + (uint32_t)(cx * 0x1f0700 + cy * 0x000b29) % 0xffffff;
}
// noise of 250 colours: no run repeats, so LZW's table fills and clears many times a frame
static uint32_t noise(int k, int x, int y)
{
    uint32_t s = (uint32_t)(x * 7919 + y * 104729 + k * 1299709);
    s ^= s >> 13, s *= 0x5bd1e995u, s ^= s >> 15;
    const uint32_t i = s % 250;
    return (i * 0x010307u * 37u) & 0xffffff;
}
static uint32_t one(int k, int x, int y) { return (void)x, (void)y, k ? 0xff0000 : 0x0000ff; }

static void test_cells_held(void **state)
{
    (void)state;
    const int ticks[] = {1, 1, 4, 1, 2, 1};
    round_trip("cells", 97, 61, 30, 6, ticks, cells);
}

static void test_noise(void **state)
{
    (void)state;
    const int ticks[] = {1, 3, 1};
    round_trip("noise", 301, 203, 10, 3, ticks, noise);
}

static void test_one_pixel(void **state)
{
    (void)state;
    const int ticks[] = {5, 1};
    round_trip("one", 1, 1, 24, 2, ticks, one);
}

static void test_failures(void **state)
{
    (void)state;
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/no/such/dir/x.gif", dir);
    assert_null(gif_write_open(path, 8, 8, 10, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_null(gif_write_open(path, 0, 8, 10, err, sizeof err));
    assert_non_null(strstr(err, "x.gif"));
    // abandoned: no file, no temporary file
    snprintf(path, sizeof path, "%s/gone.gif", dir);
    GifWriter *g = gif_write_open(path, 8, 8, 10, err, sizeof err);
    assert_non_null(g);
    unsigned char *px = make_frame(8, 8, 0, cells);
    assert_true(gif_write_frame(g, px, 32, 1, err, sizeof err));
    free(px);
    assert_true(gif_write_close(g, false, err, sizeof err));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
    assert_int_equal(system(cmd), 0);
    // no frame: refused, nothing kept
    g = gif_write_open(path, 8, 8, 10, err, sizeof err);
    assert_non_null(g);
    assert_false(gif_write_close(g, true, err, sizeof err));
    assert_non_null(strstr(err, "no frame"));
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    if (system("command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1") != 0) {
        printf("test_gif_write: SKIP: needs ffmpeg and ffprobe (make deps installs them)\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/test_gif_write-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells_held),
        cmocka_unit_test(test_noise),
        cmocka_unit_test(test_one_pixel),
        cmocka_unit_test(test_failures),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
