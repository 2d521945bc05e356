// progress.c — the study mode's answers between sessions (see progress.h).
#define _DEFAULT_SOURCE // realpath
#include "progress.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "temp_file.h"
#include "user_dir.h"
#include "utf8.h"


bool progress_default_path(char *out, size_t n)
{
    return user_data_path("progress.json", out, n);
}

static cJSON *empty_root(void)
{
    cJSON *r = cJSON_CreateObject();
    if (!r) return NULL;
    if (!cJSON_AddNumberToObject(r, "attnviz_progress", 1) || !cJSON_AddObjectToObject(r, "lessons")) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

// Whether root has the shape progress.h describes (unknown keys are allowed).
static bool well_formed(const cJSON *root, const char **why)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "attnviz_progress");
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(root, "lessons");
    if (!cJSON_IsObject(root)) return *why = "expected a JSON object", false;
    if (!cJSON_IsNumber(v) || v->valuedouble != 1) return *why = "attnviz_progress: expected 1", false;
    if (!cJSON_IsObject(ls)) return *why = "lessons: expected an object", false;
    for (const cJSON *l = ls->child; l; l = l->next) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(l, "answers");
        if (!cJSON_IsObject(l) || !cJSON_IsObject(a)) return *why = "lessons.*.answers: expected an object", false;
        for (const cJSON *e = a->child; e; e = e->next)
            if (!cJSON_IsObject(e) || !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(e, "right")))
                return *why = "lessons.*.answers.*.right: expected true or false", false;
    }
    return true;
}

// A number JSON cannot hold (1e999 reads as infinity) is null, as the writer would
// write it: what is read is what a save writes back (found by fuzz_progress).
static void nulls_for_infinities(cJSON *j)
{
    for (; j; j = j->next) {
        if (cJSON_IsNumber(j) && !isfinite(j->valuedouble)) j->type = cJSON_NULL;
        nulls_for_infinities(j->child);
    }
}

struct cJSON *progress_parse(const char *text, size_t len, const char **why)
{
    if (len > PROGRESS_MAX_BYTES) return *why = "larger than 8 MiB", NULL;
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return *why = "not valid JSON", NULL;
    nulls_for_infinities(root);
    if (!well_formed(root, why)) cJSON_Delete(root), root = NULL;
    return root;
}

char *progress_text(const Progress *p, char *err, size_t n)
{
    // compact (what the reader accepts: never more than PROGRESS_MAX_BYTES)
    char *text = cJSON_PrintUnformatted(p->root);
    if (!text) {
        snprintf(err, n, "%.600s: out of memory", p->path);
        return NULL;
    }
    size_t len = strlen(text);
    if (len + 1 > PROGRESS_MAX_BYTES) {
        snprintf(err, n, "%.600s: would grow larger than 8 MiB (the most it may hold): this answer is not saved, "
                 "the file is left as it was", p->path);
        free(text);
        return NULL;
    }
    char *nl = realloc(text, len + 2);
    if (!nl) {
        free(text);
        snprintf(err, n, "%.600s: out of memory", p->path);
        return NULL;
    }
    nl[len] = '\n', nl[len + 1] = '\0';
    return nl;
}

bool progress_load(Progress *p, const char *path, char *note, size_t n)
{
    memset(p, 0, sizeof *p);
    note[0] = '\0';
    snprintf(p->path, sizeof p->path, "%s", path);
    // opened without blocking (a FIFO there would freeze the window), a regular file only
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *not_file = NULL;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        not_file = "it is not a regular file";
        close(fd);
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (not_file || e != ENOENT) {
            snprintf(note, n, "%.600s: cannot read: %s (your answers of this session are not saved)", path,
                     not_file ? not_file : strerror(e));
            p->path[0] = '\0'; // never replaced: the student's file stays as it is
        }
        p->root = empty_root();
        return p->root != NULL;
    }
    char *buf = malloc(PROGRESS_MAX_BYTES + 1);
    size_t len = buf ? fread(buf, 1, PROGRESS_MAX_BYTES + 1, f) : 0;
    bool read_error = ferror(f);
    fclose(f);
    if (!buf) return false;
    const char *why = NULL;
    cJSON *root = NULL;
    if (read_error) {
        snprintf(note, n, "%.600s: cannot read (your answers of this session are not saved)", path);
        free(buf);
        p->path[0] = '\0';
        p->root = empty_root();
        return p->root != NULL;
    }
    root = progress_parse(buf, len, &why);
    free(buf);
    if (root) {
        p->root = root;
        return true;
    }
    // set aside under a new name, never overwritten
    char aside[PROGRESS_PATH_MAX + 40], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(aside, sizeof aside, "%s.corrupt-%s", path, stamp);
    for (int k = 2; access(aside, F_OK) == 0 && k < 100; k++)
        snprintf(aside, sizeof aside, "%s.corrupt-%s-%d", path, stamp, k);
    if (rename(path, aside) == 0) {
        snprintf(note, n, "%.500s: %s; set aside as %.500s, starting a new progress file", path, why, aside);
    } else {
        snprintf(note, n, "%.500s: %s, and it cannot be set aside (%s): your answers of this session are not saved",
                 path, why, strerror(errno));
        p->path[0] = '\0';
    }
    p->root = empty_root();
    return p->root != NULL;
}

void progress_free(Progress *p)
{
    cJSON_Delete(p->root);
    p->root = NULL;
}

void progress_key(const char *lesson_path, char *out, size_t n)
{
    char real[PATH_MAX], dir[PATH_MAX];
    if (realpath(lesson_path, real)) {
        snprintf(out, n, "%s", real);
        return;
    }
    // not there (the page's lessons before they are fetched): its folder's real path and its name,
    // the key it will have once it is there
    const char *slash = strrchr(lesson_path, '/');
    const size_t d = slash ? (size_t)(slash - lesson_path) : 0;
    if (slash && d > 0 && d < sizeof dir) {
        memcpy(dir, lesson_path, d);
        dir[d] = '\0';
        if (realpath(dir, real)) {
            snprintf(out, n, "%s%s", strcmp(real, "/") == 0 ? "" : real, slash);
            return;
        }
    }
    snprintf(out, n, "%s", lesson_path);
}

static cJSON *lesson_entry(const Progress *p, const char *key)
{
    if (!p->root) return NULL;
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->root, "lessons"), key);
}

static bool get_bool(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

const char *progress_restore(const Progress *p, const char *key, Study *s)
{
    const cJSON *l = lesson_entry(p, key);
    if (!l) return NULL;
    const cJSON *ans = cJSON_GetObjectItemCaseSensitive(l, "answers");
    for (int i = 0; i < s->n; i++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(ans, s->q[i].id);
        if (!e) continue;
        StudyAnswer *a = &s->a[i];
        a->answered = true;
        a->right = get_bool(e, "right");
        a->hinted = get_bool(e, "hinted");
        a->gave_up = get_bool(e, "gave_up");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(e, "given");
        snprintf(a->given, sizeof a->given, "%s", cJSON_IsString(g) ? g->valuestring : "");
        // cut on a character, never inside one: a last lead byte without all its continuation bytes goes
        a->given[utf8_whole(a->given, strlen(a->given))] = '\0';
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(l, "stage");
    return cJSON_IsString(st) ? st->valuestring : NULL;
}

bool progress_record(Progress *p, const char *key, const Study *s, const char *stage, const char *title)
{
    cJSON *lessons = p->root ? cJSON_GetObjectItemCaseSensitive(p->root, "lessons") : NULL;
    if (!lessons) return false;
    // the answers saved before to questions not asked now stay (another language, an older version)
    cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(lessons, key);
    cJSON *l = cJSON_CreateObject(), *ans = NULL;
    cJSON *old_ans = old ? cJSON_DetachItemFromObjectCaseSensitive(old, "answers") : NULL;
    cJSON_Delete(old);
    for (cJSON *dup; (dup = cJSON_DetachItemFromObjectCaseSensitive(lessons, key));) cJSON_Delete(dup); // (a hand-edited file)
    if (!l) {
        cJSON_Delete(old_ans);
        return false;
    }
    ans = old_ans ? old_ans : cJSON_CreateObject();
    int right, answered;
    study_score(s, &right, &answered);
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bool ok = ans && cJSON_AddStringToObject(l, "title", title ? title : "") && cJSON_AddStringToObject(l, "stage", stage) &&
              cJSON_AddNumberToObject(l, "right", right) && cJSON_AddNumberToObject(l, "answered", answered) &&
              cJSON_AddNumberToObject(l, "total", s->n) && cJSON_AddStringToObject(l, "updated", stamp);
    for (int i = 0; ok && i < s->n; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(ans, s->q[i].id);
        const StudyAnswer *a = &s->a[i];
        if (!a->answered) continue;
        cJSON *e = cJSON_AddObjectToObject(ans, s->q[i].id);
        ok = e && cJSON_AddBoolToObject(e, "right", a->right) && cJSON_AddStringToObject(e, "given", a->given) &&
             cJSON_AddBoolToObject(e, "hinted", a->hinted) && cJSON_AddBoolToObject(e, "gave_up", a->gave_up);
    }
    if (ans) cJSON_AddItemToObject(l, "answers", ans);
    cJSON_AddItemToObject(lessons, key, l);
    return ok;
}

// The folder of path, made when missing.
static bool make_parent(const char *path, char *err, size_t n)
{
    char dir[PROGRESS_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return true;
    *slash = '\0';
    if (temp_file_make_dirs(dir)) return true;
    snprintf(err, n, "%.600s: cannot create the folder: %s", dir, strerror(errno));
    return false;
}

bool progress_save(Progress *p, char *err, size_t n)
{
    if (!p->path[0]) {
        snprintf(err, n, "the progress file could not be read at start: it is left as it was");
        return false;
    }
    if (!make_parent(p->path, err, n)) return false;
    char *text = progress_text(p, err, n);
    if (!text) return false;
    char tmp[PROGRESS_PATH_MAX + 4200];
    FILE *f = temp_file_open_target(p->path, tmp, sizeof tmp); // a symbolic link is written through
    if (!f) {
        snprintf(err, n, "%.600s: cannot write: %s", p->path, temp_file_strerror(errno));
        free(text);
        return false;
    }
    int e = fputs(text, f) >= 0 ? 0 : (errno ? errno : EIO);
    free(text);
    if (e) fclose(f), unlink(tmp);
    else e = temp_file_finish(f, tmp, p->path);
    if (e) {
        snprintf(err, n, "%.600s: cannot write: %s", p->path, temp_file_strerror(e));
        return false;
    }
    return true;
}

bool progress_update(Progress *p, const char *key, const Study *s, const char *stage, const char *title, char *err,
                     size_t n)
{
    if (!p->path[0]) {
        snprintf(err, n, "the progress file could not be read at start: it is left as it was");
        return false;
    }
    if (!make_parent(p->path, err, n)) return false;
    char lock[PROGRESS_PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s.lock", p->path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(err, n, "%.600s: cannot lock: %s", lock, strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    Progress now;
    char note[1400];
    bool ok = progress_load(&now, p->path, note, sizeof note);
    if (!ok) snprintf(err, n, "%.600s: out of memory", p->path);
    else if (!now.path[0]) snprintf(err, n, "%s", note), ok = false; // unreadable now: left alone
    else if (!progress_record(&now, key, s, stage, title)) snprintf(err, n, "%.600s: out of memory", p->path), ok = false;
    else ok = progress_save(&now, err, n);
    close(fd); // (the lock goes with it)
    if (ok) {
        progress_free(p);
        *p = now;
        if (note[0]) snprintf(err, n, "%s", note); // set aside meanwhile: said, and written anew
    } else {
        progress_free(&now);
    }
    return ok;
}

bool progress_score(const Progress *p, const char *key, int *right, int *answered, int *total)
{
    const cJSON *l = lesson_entry(p, key);
    if (!l) return false;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(l, "right"), *a = cJSON_GetObjectItemCaseSensitive(l, "answered"),
                *t = cJSON_GetObjectItemCaseSensitive(l, "total");
    if (!cJSON_IsNumber(r) || !cJSON_IsNumber(a) || !cJSON_IsNumber(t)) return false;
    // (a hand-edited file may say anything: within 0 ≤ right ≤ answered ≤ total ≤ 10⁶)
    double tv = fmin(fmax(t->valuedouble, 0.0), 1e6), av = fmin(fmax(a->valuedouble, 0.0), tv),
           rv = fmin(fmax(r->valuedouble, 0.0), av);
    if (isnan(tv) || isnan(av) || isnan(rv)) return false;
    *right = (int)rv, *answered = (int)av, *total = (int)tv;
    return true;
}

// --- saving off the frame ---------------------------------------------------------

enum { SAVER_QUEUE = 4 };

typedef struct SaveJob {
    char path[PROGRESS_PATH_MAX], key[PROGRESS_PATH_MAX], stage[128], title[512];
    Study *study;
} SaveJob;

struct ProgressSaver {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    SaveJob q[SAVER_QUEUE];
    int n;            // queued
    bool running;     // a job is being written
    bool stop;
    bool have_result, result_ok;
    Progress result;  // what the last finished update wrote
    char err[1400];
};

static void *saver_main(void *arg)
{
    ProgressSaver *sv = arg;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (sv->n == 0 && !sv->stop) pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->n == 0) break;
        SaveJob job = sv->q[0];
        memmove(sv->q, sv->q + 1, (size_t)(sv->n - 1) * sizeof *sv->q);
        sv->n--;
        sv->running = true;
        pthread_mutex_unlock(&sv->mu);
        Progress p = {0};
        snprintf(p.path, sizeof p.path, "%s", job.path);
        char err[1400] = "";
        bool ok = progress_update(&p, job.key, job.study, job.stage, job.title, err, sizeof err);
        free(job.study);
        pthread_mutex_lock(&sv->mu);
        if (sv->have_result) progress_free(&sv->result);
        sv->result = p;
        sv->result_ok = ok;
        snprintf(sv->err, sizeof sv->err, "%s", err);
        sv->have_result = true;
        sv->running = false;
        pthread_cond_broadcast(&sv->cv);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

ProgressSaver *progress_saver_start(void)
{
    ProgressSaver *sv = calloc(1, sizeof *sv);
    if (!sv) return NULL;
    pthread_mutex_init(&sv->mu, NULL);
    pthread_cond_init(&sv->cv, NULL);
    if (pthread_create(&sv->thread, NULL, saver_main, sv) != 0) {
        pthread_mutex_destroy(&sv->mu);
        pthread_cond_destroy(&sv->cv);
        free(sv);
        return NULL;
    }
    return sv;
}

bool progress_saver_submit(ProgressSaver *sv, const char *path, const char *key, const Study *s, const char *stage,
                           const char *title)
{
    Study *copy = malloc(sizeof *copy);
    if (!copy) return false;
    memcpy(copy, s, sizeof *copy);
    pthread_mutex_lock(&sv->mu);
    int at = -1;
    for (int i = 0; i < sv->n; i++)
        if (strcmp(sv->q[i].key, key) == 0 && strcmp(sv->q[i].path, path) == 0) at = i; // newer answers replace it
    while (at < 0 && sv->n == SAVER_QUEUE) pthread_cond_wait(&sv->cv, &sv->mu); // (several lessons at once: rare)
    if (at < 0) at = sv->n++;
    else free(sv->q[at].study);
    SaveJob *j = &sv->q[at];
    snprintf(j->path, sizeof j->path, "%s", path);
    snprintf(j->key, sizeof j->key, "%s", key);
    snprintf(j->stage, sizeof j->stage, "%s", stage ? stage : "");
    snprintf(j->title, sizeof j->title, "%s", title ? title : "");
    j->study = copy;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    return true;
}

bool progress_saver_poll(ProgressSaver *sv, Progress *p, char *err, size_t n, bool *failed)
{
    if (!sv) return false;
    pthread_mutex_lock(&sv->mu);
    bool have = sv->have_result;
    if (have) {
        sv->have_result = false;
        *failed = !sv->result_ok;
        snprintf(err, n, "%s", sv->err);
        if (sv->result_ok) {
            progress_free(p);
            *p = sv->result;
        } else {
            progress_free(&sv->result);
        }
        memset(&sv->result, 0, sizeof sv->result);
    }
    pthread_mutex_unlock(&sv->mu);
    return have;
}

bool progress_saver_busy(ProgressSaver *sv)
{
    if (!sv) return false;
    pthread_mutex_lock(&sv->mu);
    bool busy = sv->n > 0 || sv->running;
    pthread_mutex_unlock(&sv->mu);
    return busy;
}

void progress_saver_wait(ProgressSaver *sv)
{
    if (!sv) return;
    pthread_mutex_lock(&sv->mu);
    while (sv->n > 0 || sv->running) pthread_cond_wait(&sv->cv, &sv->mu);
    pthread_mutex_unlock(&sv->mu);
}

void progress_saver_stop(ProgressSaver *sv)
{
    if (!sv) return;
    pthread_mutex_lock(&sv->mu);
    sv->stop = true;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    pthread_join(sv->thread, NULL);
    if (sv->have_result) progress_free(&sv->result);
    pthread_mutex_destroy(&sv->mu);
    pthread_cond_destroy(&sv->cv);
    free(sv);
}
