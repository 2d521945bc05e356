// test_train_window.c — the window's training mode (R; src/app/app_train.c), in-process with
// SDL's offscreen driver and the fake clock (window_driver.h):
//  - train: the induction lesson from its first checkpoint; R trains, the model view and the
//    loss curve show and the frame changes as it learns; Space pauses, → then walks the stages
//    of that step's forward pass; Shift+R shows the last step's update over the frame, Esc gives
//    the frame back; Q asks (the trained model is not saved), S saves it: the
//    file reads back with its task and the checkpoints of this training, and its weights are
//    not the ones it started from;
//  - keep: Shift+U (another checkpoint: the lesson on screen replaced) while training keeps a
//    save of the trained weights first;
//  - no task: R on a lesson without one says so and trains nothing; Q then quits at once.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_support.h"
#include "lesson.h"
#include "session.h"
#include "window_driver.h"

static char save_dir[64];
static Uint32 shot_a[WD_MAX_W * WD_MAX_H], shot_b[WD_MAX_W * WD_MAX_H];

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void train_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "A"); // the model view without training: the frames' time to compare
    double t0 = wall_ms();
    wd_frames(d, 50);
    printf("train: 50 frames of the model view, not training: %.1f ms a frame (wall clock)\n", (wall_ms() - t0) / 50);
    wd_key(d, "A"), wd_key(d, "A"); // (back to the panels)
    wd_key(d, "R");
    wd_frames(d, 3);
    if (d->mv_layers != 2 || d->mv_heads != 2) wd_fail(d, "R did not show the model view (%d layers)", d->mv_layers);
    if (!d->busy) wd_fail(d, "the window waits for events while training");
    wd_shot(d, shot_a);
    t0 = wall_ms();
    wd_frames(d, 200); // a step a frame at least: checkpoints at 50, 100, 150, 200
    printf("train: 200 frames while training: %.1f ms a frame (wall clock, drawing included)\n", (wall_ms() - t0) / 200);
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "the frame did not change in 200 frames of training");
    if (d->curve.w <= 0) wd_fail(d, "no loss curve while training");
    wd_key(d, "Space"); // pause
    char before[64];
    snprintf(before, sizeof before, "%s", d->stage);
    wd_key(d, "Right");
    wd_settle(d);
    if (!strcmp(d->stage, before)) wd_fail(d, "→ at a pause did not walk to the next stage (%s)", d->stage);
    if (d->busy) wd_fail(d, "still busy when paused");
    // Shift+R: the last step's update over the frame; Esc: the frame as it was
    wd_shot(d, shot_a);
    wd_key_mod(d, "R", KMOD_LSHIFT);
    wd_frames(d, 2);
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "Shift+R did not show the optimizer step");
    wd_key(d, "Escape");
    wd_settle(d);
    wd_shot(d, shot_b);
    if (!wd_same(d, shot_a, shot_b)) wd_fail(d, "Esc from the optimizer step did not give the frame back");
    wd_key(d, "Escape"); // (never quits, never loses the weights)
    wd_frames(d, 3);
    wd_key(d, "Q");
    wd_frames(d, 5);
    if (d->exited) {
        wd_fail(d, "Q quit without asking to save the trained model");
        return;
    }
    wd_key(d, "S");
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "S at the question did not save and quit");
}

static void keep_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "R");
    wd_frames(d, 60);
    wd_key_mod(d, "U", KMOD_LSHIFT); // another checkpoint: the lesson on screen is replaced
    wd_settle(d);
    if (d->mv_layers == 0 && d->checkpoint < 0) wd_fail(d, "Shift+U did not open a checkpoint");
    wd_key(d, "Q"); // the new session: nothing unsaved, quits at once
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "Q after the save did not quit");
}

static void no_task_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "R");
    wd_frames(d, 10);
    if (d->mv_layers != 0) wd_fail(d, "R on a lesson without a task changed the view");
    wd_key(d, "Q");
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "Q did not quit (nothing was trained)");
}

// The one file in save_dir (its path into out), or false.
static bool the_save(char *out, size_t n)
{
    DIR *dir = opendir(save_dir);
    int k = 0;
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (strstr(e->d_name, ".json")) snprintf(out, n, "%s/%s", save_dir, e->d_name), k++;
    if (dir) closedir(dir);
    return k == 1;
}

static void clear_saves(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -f %s/*.json", save_dir);
    assert_int_equal(system(cmd), 0);
}

static void test_train(void **state)
{
    (void)state;
    clear_saves();
    const SessionEdits at0 = {.has_checkpoint = true, .checkpoint = 0};
    AppOptions o = {.lesson_path = "lessons/induction-heads.json", .lang = LANG_EN, .width = 1280, .height = 720,
                    .edits = &at0};
    assert_int_equal(wd_run("train", train_script, &o), 0);
    char path[400], err[LESSON_ERR_MAX];
    assert_true(the_save(path, sizeof path));
    Lesson ls, start;
    if (!lesson_load(&ls, path, err, sizeof err)) fail_msg("%s", err);
    const LessonOverride o0 = {NULL, true, 0};
    assert_true(lesson_load_with(&start, "lessons/induction-heads.json", &o0, err, sizeof err));
    printf("train: saved %s: %d checkpoints, the last at step %d, held-out loss %.3f → %.3f\n", path,
           ls.n_checkpoints, ls.ckpt_step[ls.n_checkpoints - 1], (double)ls.ckpt_loss[0],
           (double)ls.ckpt_loss[ls.n_checkpoints - 1]);
    assert_int_equal(ls.task.kind, TASK_INDUCTION);
    assert_true(ls.n_checkpoints >= 5 && ls.ckpt_step[0] == 0 && ls.ckpt_step[ls.n_checkpoints - 1] >= 200);
    assert_true(ls.ckpt_loss[ls.n_checkpoints - 1] < ls.ckpt_loss[0]);
    assert_true(memcmp(ls.w[1].w_q.data, start.w[1].w_q.data, start.w[1].w_q.size * sizeof(float)) != 0);
    lesson_free(&ls), lesson_free(&start);
}

static void test_keep(void **state)
{
    (void)state;
    clear_saves();
    AppOptions o = {.lesson_path = "lessons/induction-heads.json", .lang = LANG_ZH, .width = 1280, .height = 720};
    assert_int_equal(wd_run("keep", keep_script, &o), 0);
    char path[400], err[LESSON_ERR_MAX];
    assert_true(the_save(path, sizeof path)); // kept before the session was replaced
    Lesson ls;
    if (!lesson_load(&ls, path, err, sizeof err)) fail_msg("%s", err);
    assert_true(ls.n_checkpoints >= 2 && ls.ckpt_step[ls.n_checkpoints - 1] >= 50);
    lesson_free(&ls);
}

static void test_no_task(void **state)
{
    (void)state;
    clear_saves();
    AppOptions o = {.lesson_path = "lessons/sentence-the-cat.json", .lang = LANG_EN, .width = 1280, .height = 720};
    assert_int_equal(wd_run("no task", no_task_script, &o), 0);
    char path[400];
    assert_false(the_save(path, sizeof path));
}

int main(void)
{
    setenv("SDL_VIDEODRIVER", "offscreen", 0);
    unsetenv("ATTNVIZ_TEST_CLOCK");
    snprintf(save_dir, sizeof save_dir, "/tmp/attnviz-train-XXXXXX");
    if (!mkdtemp(save_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("ATTNVIZ_SAVE_DIR", save_dir, 1);
    setenv("ATTNVIZ_ASSETS", "assets", 0);
    char data[128];
    snprintf(data, sizeof data, "%s/data", save_dir);
    setenv("XDG_DATA_HOME", data, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train),
        cmocka_unit_test(test_keep),
        cmocka_unit_test(test_no_task),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", save_dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
