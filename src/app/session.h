// session.h — one lesson and its forward pass, loaded once, at stable addresses.
//
// The Trace borrows the Lesson's weight tensors (trace.h); both live in one
// heap object that never moves, so those pointers stay valid for its lifetime.
// Opening another lesson means creating a new Session (and destroying the old
// one only once the new one exists), never copying a Lesson or a Trace.
#ifndef ATTNVIZ_SESSION_H
#define ATTNVIZ_SESSION_H

#include <stddef.h>

#include "lesson.h"
#include "trace.h"

#define SESSION_PATH_MAX 4096   // PATH_MAX: any path the loader can open fits

typedef struct Session {
    Lesson lesson;                 // owned
    Trace trace;                   // owned; borrows weights from lesson.w
    char path[SESSION_PATH_MAX];   // the path it was loaded from, as given
} Session;

// Loads path (lesson_load) and runs the forward pass (attn_forward). NULL on
// failure with one line in err naming the file: the lesson loader's message,
// or "PATH: out of memory computing the forward pass".
Session *session_create(const char *path, char *err, size_t n);
// Frees the lesson, the trace and the session; NULL is fine.
void session_destroy(Session *s);

#endif
