// session.c — load → forward, once (see session.h).
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

Session *session_create(const char *path, char *err, size_t n)
{
    Session *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, n, "%s: out of memory loading the lesson", path);
        return NULL;
    }
    if (!lesson_load(&s->lesson, path, err, n)) {
        free(s);
        return NULL;
    }
    // the loader opened it, so it fits (a longer path fails with ENAMETOOLONG)
    if (strlen(path) >= sizeof s->path) {
        snprintf(err, n, "%.400s...: path too long", path);
        lesson_free(&s->lesson);
        free(s);
        return NULL;
    }
    memcpy(s->path, path, strlen(path) + 1);
    trace_init(&s->trace);
    if (!attn_forward(&s->lesson.cfg, &s->lesson.w, &s->lesson.in, &s->trace)) {
        snprintf(err, n, "%s: out of memory computing the forward pass", path);
        session_destroy(s);
        return NULL;
    }
    trace_compute_stats(&s->trace); // the colour ranges, once per lesson
    return s;
}

void session_destroy(Session *s)
{
    if (!s) return;
    trace_free(&s->trace);
    lesson_free(&s->lesson);
    free(s);
}
