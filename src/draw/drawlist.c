// drawlist.c — the growing arrays behind drawlist.h.
#include "drawlist.h"

#include <stdlib.h>
#include <string.h>

void draw_list_init(DrawList *dl) { *dl = (DrawList){0}; }

void draw_list_free(DrawList *dl)
{
    free(dl->cmd);
    free(dl->text);
    *dl = (DrawList){0};
}

void draw_list_clear(DrawList *dl)
{
    dl->n = 0;
    dl->text_n = 0;
    dl->oom = false;
}

// Room for `more` more elements of size `size` in *buf (holding n of cap).
static bool grow(void **buf, size_t *cap, size_t n, size_t more, size_t size, size_t first)
{
    if (n + more <= *cap) return true;
    size_t c = *cap ? *cap : first;
    while (c < n + more) {
        if (c > SIZE_MAX / 2 / size) return false;
        c *= 2;
    }
    void *p = realloc(*buf, c * size);
    if (!p) return false;
    *buf = p;
    *cap = c;
    return true;
}

bool draw_list_push(DrawList *dl, DrawCmd c)
{
    if (!grow((void **)&dl->cmd, &dl->cap, dl->n, 1, sizeof *dl->cmd, 256)) {
        dl->oom = true;
        return false;
    }
    dl->cmd[dl->n++] = c;
    return true;
}

bool draw_list_push_text(DrawList *dl, DrawCmd c, const char *s)
{
    size_t len = strlen(s) + 1;
    if (len > UINT32_MAX - dl->text_n || !grow((void **)&dl->text, &dl->text_cap, dl->text_n, len, 1, 4096)) {
        dl->oom = true;
        return false;
    }
    c.op = DRAW_TEXT;
    c.text = (uint32_t)dl->text_n;
    memcpy(dl->text + dl->text_n, s, len);
    size_t before = dl->text_n;
    dl->text_n += len;
    if (!draw_list_push(dl, c)) {
        dl->text_n = before;
        return false;
    }
    return true;
}

const char *draw_list_str(const DrawList *dl, const DrawCmd *c) { return dl->text + c->text; }

bool draw_list_uses_image(const DrawList *dl, const PaintImage *img)
{
    for (size_t i = 0; i < dl->n; i++)
        if (dl->cmd[i].op == DRAW_IMAGE && dl->cmd[i].img == img) return true;
    return false;
}

const char *draw_op_name(DrawOp op)
{
    static const char *const names[] = {"clear", "clip", "push", "pop", "fill", "frame", "line", "text", "image"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}
