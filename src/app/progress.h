// progress.h — the study mode's answers, kept between sessions in
// $XDG_DATA_HOME/attnviz/progress.json (default ~/.local/share/attnviz):
//
//   {"attnviz_progress": 1,
//    "lessons": {"/abs/path/lesson.json": {"title": "…", "stage": "attn", "right": 7,
//                "answered": 9, "total": 19,
//                "answers": {"q_proj-shape": {"right": true, "given": "2x4x4",
//                                              "hinted": false, "gave_up": false}, …}}}}
//
// Lessons are keyed by their real path (in the page, src/web/web.js, a lesson= file's
// copy is at /url/HOST/PATH, its URL, and a dropped file's at /tmp/drop-HASH/NAME,
// a hash of its content: no two lessons share a key); answers by question id (quiz.h), so a
// lesson changed since keeps the answers whose questions are still asked. Written
// atomically (temp_file.h). A file that is not such a file is never overwritten:
// it is renamed aside (progress.json.corrupt-YYYYMMDD-HHMMSS) and reported.
//
// Plain C over cJSON, no SDL: the window uses it, the tests drive it.
#ifndef ATTNVIZ_PROGRESS_H
#define ATTNVIZ_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "study.h"

#define PROGRESS_PATH_MAX 1200
// The largest progress file read (and written: a save that would grow past it is
// refused with a message, the file left as it was). Written compactly.
#define PROGRESS_MAX_BYTES (8u << 20)

typedef struct Progress {
    struct cJSON *root;
    char path[PROGRESS_PATH_MAX];
} Progress;

// Where the progress is kept: $XDG_DATA_HOME/attnviz/progress.json, else
// $HOME/.local/share/attnviz/progress.json; false (out empty) when neither is an
// absolute path or the path does not fit.
bool progress_default_path(char *out, size_t n);

// Reads path (none there: empty progress), opened without blocking: anything but a
// regular file (a FIFO, a device) is reported and left alone. True with *note empty when read, or
// with one line in note when the file was not a progress file and has been set
// aside (its new name in the line) or could not be read (then it is left alone
// and progress_save will not replace it). False only when out of memory.
bool progress_load(Progress *p, const char *path, char *note, size_t n);
// The reader's part: text (len bytes, at most PROGRESS_MAX_BYTES) as a progress
// root; NULL with *why ("not valid JSON", "lessons: expected an object"…) otherwise.
struct cJSON *progress_parse(const char *text, size_t len, const char **why);
// The writer's part: p as the file's text (compact, a final newline; malloc'ed), NULL
// with one line in err when it would pass PROGRESS_MAX_BYTES or memory runs out.
char *progress_text(const Progress *p, char *err, size_t n);
void progress_free(Progress *p);

// The key of a lesson file: its real path; for a file not there (yet), its folder's real path
// and its name; the path itself when that fails too.
void progress_key(const char *lesson_path, char *out, size_t n);

// Gives s the answers saved for key (matched by question id). Returns the stage
// name saved (points into p; NULL when the lesson has no progress).
const char *progress_restore(const Progress *p, const char *key, Study *s);
// Records s's answers for key, with the stage on screen and the lesson's title.
bool progress_record(Progress *p, const char *key, const Study *s, const char *stage, const char *title);
// Writes the file (its directory made when missing), atomically. False with one
// line in err naming the file.
bool progress_save(Progress *p, char *err, size_t n);

// progress_record and progress_save on the file as it is now (another window may have
// written other lessons since p was read): under an exclusive lock on PATH.lock, the
// file is read again, this lesson's entry replaced, the file written. p then holds
// what was written. False with one line in err.
bool progress_update(Progress *p, const char *key, const Study *s, const char *stage, const char *title, char *err,
                     size_t n);

// Saves off the window's frame: a thread does progress_update, one request at a
// time (a newer request for the same lesson replaces one still waiting).
typedef struct ProgressSaver ProgressSaver;
ProgressSaver *progress_saver_start(void);
// Queues an update of path's file for key with a copy of s. False when out of memory.
bool progress_saver_submit(ProgressSaver *sv, const char *path, const char *key, const Study *s, const char *stage,
                           const char *title);
// The result of the latest finished update, once: true when there is one; then
// *p holds what was written (on success; *p is replaced) and err a line when it
// failed (or the file had been set aside meanwhile), else "".
bool progress_saver_poll(ProgressSaver *sv, Progress *p, char *err, size_t n, bool *failed);
// Whether an update is queued or running.
bool progress_saver_busy(ProgressSaver *sv);
// Waits until every queued update is written (a lesson opened again reads its answers).
void progress_saver_wait(ProgressSaver *sv);
// Waits for the queued updates and ends the thread (NULL: nothing).
void progress_saver_stop(ProgressSaver *sv);

// The score saved for key: right answers, answered and all questions; false when none.
bool progress_score(const Progress *p, const char *key, int *right, int *answered, int *total);

#endif
