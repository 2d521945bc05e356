// test_study.c — the study mode (study.h), its progress file (progress.h) and the
// lessons' own questions ("quiz"), SDL-free:
//   - for every shipped lesson and both languages, the student's walk: the stage of
//     the first question is the frontier (nothing later may show), every question
//     hides its stage until answered; the answer typed as a student would (from the
//     trace, not from quiz.c's text) is right, a wrong one is wrong and reveals
//     nothing of the next question; the score counts them; a language switch keeps
//     the answers;
//   - clicking keys answers argmax (and toggles masked keys);
//   - progress.json: written atomically, read back into the same answers; a corrupt
//     file is set aside (its bytes kept under the new name) and reported, never
//     overwritten; an unreadable one is left alone;
//   - "quiz" in a lesson: parsed, asked at its stage after the generated ones, checked
//     against the trace (with the JSON path in the error), written back by lesson_write.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <sys/file.h>

#include "app/progress.h"
#include "session.h"
#include "study.h"

#include "pure_support.h"

static Study study; // large: the questions with their texts

// The answer as a student types it: "2x4x4", "3", "1 3", "-15.51".
static void typed(const QuizQuestion *q, char *out, size_t n)
{
    out[0] = '\0';
    for (int i = 0; i < q->n_answer; i++) {
        size_t len = strlen(out);
        float a = q->answer[i];
        if (q->kind == QUIZ_SHAPE) snprintf(out + len, n - len, i ? "x%d" : "%d", (int)a);
        else if (a == floorf(a) && fabsf(a) < 1e6f) snprintf(out + len, n - len, i ? " %d" : "%d", (int)a);
        else snprintf(out + len, n - len, i ? " %.6f" : "%.6f", (double)a);
    }
}

static void walk_lesson(const char *path, Lang lang)
{
    Session *s = open_session(path);
    memset(&study, 0, sizeof study);
    study_load(&study, &s->trace, &s->lesson, lang, true, 0);
    study.on = true;
    assert_true(study.n > 0);
    int last = s->trace.n - 1;
    assert_int_equal(study_frontier(&study, s->trace.n), study.q[0].stage);
    int right = 0, answered = 0;
    for (int i = 0; i < study.n; i++) {
        const QuizQuestion *q = &study.q[i];
        // nothing past this question's stage may show, its stage is hidden
        assert_int_equal(study_frontier(&study, s->trace.n), q->stage);
        assert_true(study_pending(&study, q->stage));
        study_enter(&study, q->stage);
        assert_int_equal(study.focus, i);
        assert_true(study_asking(&study));
        // an empty or unreadable answer is not taken
        study.text[0] = '\0';
        assert_false(study_submit(&study, lang));
        assert_true(study.note[0] != '\0');
        snprintf(study.text, sizeof study.text, "what?");
        assert_false(study_submit(&study, lang));
        assert_false(study.a[i].answered);
        if (i % 3 == 1) { // a wrong answer: recorded as wrong, the next question still hidden
            QuizQuestion wrong = *q;
            for (int k = 0; k < wrong.n_answer; k++) wrong.answer[k] += 1000.0f;
            typed(&wrong, study.text, sizeof study.text);
            assert_true(study_submit(&study, lang));
            assert_true(study.a[i].answered);
            assert_false(study.a[i].right);
        } else if (i % 3 == 2) { // N: shown without an answer
            study_give_up(&study);
            assert_true(study.a[i].gave_up);
            assert_false(study.a[i].right);
        } else {
            typed(q, study.text, sizeof study.text);
            assert_true(study_submit(&study, lang));
            assert_true(study.a[i].right);
            right++;
        }
        answered++;
        // the feedback of this answer shows at once, whether or not the stage has more
        assert_int_equal(study.focus, i);
        assert_false(study_asking(&study));
        if (i + 1 < study.n && study.q[i + 1].stage == q->stage) {
            assert_true(study_pending(&study, q->stage)); // the stage stays hidden
            assert_true(study_next(&study));              // Enter: the next question
            assert_int_equal(study.focus, i + 1);
            assert_true(study_asking(&study));
            study_enter(&study, q->stage); // (as the window re-enters it: the question, not the feedback)
            assert_int_equal(study.focus, i + 1);
        } else {
            assert_false(study_pending(&study, q->stage)); // revealed
            assert_false(study_next(&study));              // nothing left to ask here
            assert_int_equal(study.focus, i);
            // leaving the stage and coming back: the feedback just read, not the stage's first
            study_enter(&study, q->stage + 1 < s->trace.n ? q->stage + 1 : 0);
            study_enter(&study, q->stage);
            assert_int_equal(study.focus, i);
        }
        int r, a;
        study_score(&study, &r, &a);
        assert_int_equal(r, right);
        assert_int_equal(a, answered);
    }
    assert_int_equal(study_frontier(&study, s->trace.n), last);
    // the other language: the same questions by id, the answers kept
    Lang other = lang == LANG_EN ? LANG_ZH : LANG_EN;
    study_load(&study, &s->trace, &s->lesson, other, true, 0);
    int r, a;
    study_score(&study, &r, &a);
    assert_int_equal(r, right);
    assert_int_equal(a, answered);
    session_destroy(s);
}

static void test_walk_every_lesson(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++)
        for (int l = 0; l < LANG_COUNT; l++) walk_lesson(g.gl_pathv[i], (Lang)l);
    globfree(&g);
}

static void test_pick_keys(void **state)
{
    (void)state;
    Session *s = open_session("lessons/causal-decoder.json");
    memset(&study, 0, sizeof study);
    study_load(&study, &s->trace, &s->lesson, LANG_EN, true, 0);
    study.on = true;
    bool argmax = false, masked = false;
    for (int i = 0; i < study.n; i++) {
        QuizQuestion *q = &study.q[i];
        study.focus = i, study.stage = q->stage, study.text[0] = '\0';
        if (q->kind == QUIZ_ARGMAX) {
            assert_false(study_pick_key(&study, q->cell[0] + 1, 0)); // another row: not this question
            assert_true(study_pick_key(&study, q->cell[0], (int)q->answer[0]));
            char want[16];
            snprintf(want, sizeof want, "%d", (int)q->answer[0]);
            assert_string_equal(study.text, want);
            argmax = true;
        } else if (q->kind == QUIZ_MASKED && q->n_cell == 1) {
            for (int k = q->n_answer - 1; k >= 0; k--) assert_true(study_pick_key(&study, q->cell[0], (int)q->answer[k]));
            assert_true(study_pick_key(&study, q->cell[0], 0)); // on and off again
            assert_true(study_pick_key(&study, q->cell[0], 0));
            char want[STUDY_TEXT_MAX];
            typed(q, want, sizeof want);
            if (q->answer[0] != 0.0f) assert_string_equal(study.text, want);
            assert_true(study_submit(&study, LANG_EN));
            assert_true(study.a[i].right);
            masked = true;
        } else {
            assert_false(study_pick_key(&study, 0, 0));
        }
    }
    assert_true(argmax);
    assert_true(masked);
    session_destroy(s);
}

// ---- progress.json ------------------------------------------------------------------

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/attnviz-study-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static long count_entries(const char *prefix)
{
    glob_t g;
    char pat[700];
    snprintf(pat, sizeof pat, "%s*", prefix);
    long n = glob(pat, 0, NULL, &g) == 0 ? (long)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

static void test_progress_round_trip(void **state)
{
    (void)state;
    char path[512], note[1400], err[1400], key[PROGRESS_PATH_MAX];
    snprintf(path, sizeof path, "%s/sub/dir/progress.json", dir);
    Session *s = open_session("lessons/arange-2x4x4.json");
    progress_key(s->path, key, sizeof key);
    assert_true(key[0] == '/'); // the real path
    Progress p;
    assert_true(progress_load(&p, path, note, sizeof note)); // none yet: empty
    assert_string_equal(note, "");
    memset(&study, 0, sizeof study);
    study_load(&study, &s->trace, &s->lesson, LANG_EN, true, 0);
    study.on = true;
    for (int i = 0; i < 5; i++) {
        study_enter(&study, study.q[i].stage);
        if (i == 3) study_give_up(&study);
        else {
            typed(&study.q[i], study.text, sizeof study.text);
            if (i == 1) snprintf(study.text, sizeof study.text, "123456");
            study.hint = i == 2;
            assert_true(study_submit(&study, LANG_EN));
        }
    }
    assert_true(progress_record(&p, key, &study, "k_proj", "The classic"));
    assert_true(progress_save(&p, err, sizeof err)); // the folders are made
    progress_free(&p);
    assert_int_equal(count_entries(path), 1); // no temporary file left
    // read back: the same answers by id, the stage, the score
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_string_equal(note, "");
    int r, a, t;
    assert_true(progress_score(&p, key, &r, &a, &t));
    assert_int_equal(r, 3);
    assert_int_equal(a, 5);
    assert_int_equal(t, study.n);
    Study *fresh = calloc(1, sizeof *fresh);
    assert_non_null(fresh);
    study_load(fresh, &s->trace, &s->lesson, LANG_ZH, true, 0);
    const char *stage = progress_restore(&p, key, fresh);
    assert_non_null(stage);
    assert_string_equal(stage, "k_proj");
    for (int i = 0; i < study.n; i++) {
        assert_int_equal(fresh->a[i].answered, study.a[i].answered);
        assert_int_equal(fresh->a[i].right, study.a[i].right);
        assert_int_equal(fresh->a[i].gave_up, study.a[i].gave_up);
        assert_int_equal(fresh->a[i].hinted, study.a[i].hinted);
        assert_string_equal(fresh->a[i].given, study.a[i].given);
    }
    // another lesson's progress does not touch this one's
    assert_false(progress_score(&p, "/no/such/lesson.json", &r, &a, &t));
    free(fresh);
    progress_free(&p);
    session_destroy(s);
}

// Two windows: each records its lesson into the file as it is now, never over the other's.
static void test_progress_two_windows(void **state)
{
    (void)state;
    char path[512], note[1400], err[1400];
    snprintf(path, sizeof path, "%s/progress.json", dir);
    Session *s = open_session("lessons/arange-2x4x4.json");
    memset(&study, 0, sizeof study);
    study_load(&study, &s->trace, &s->lesson, LANG_EN, true, 0);
    study.on = true;
    study_enter(&study, study.q[0].stage);
    typed(&study.q[0], study.text, sizeof study.text);
    assert_true(study_submit(&study, LANG_EN));
    Progress a, b;
    assert_true(progress_load(&a, path, note, sizeof note)); // both read the file before either writes
    assert_true(progress_load(&b, path, note, sizeof note));
    assert_true(progress_update(&a, "/lessons/a.json", &study, "q_proj", "A", err, sizeof err));
    assert_true(progress_update(&b, "/lessons/b.json", &study, "k_proj", "B", err, sizeof err));
    assert_true(progress_update(&a, "/lessons/a.json", &study, "v_proj", "A", err, sizeof err));
    progress_free(&a);
    progress_free(&b);
    assert_true(progress_load(&a, path, note, sizeof note));
    int r, n, t;
    assert_true(progress_score(&a, "/lessons/a.json", &r, &n, &t));
    assert_true(progress_score(&a, "/lessons/b.json", &r, &n, &t));
    assert_int_equal(r, 1);
    assert_int_equal(n, 1);
    progress_free(&a);
    // a hand-edited file: the same lesson twice, scores out of range, a long given cut on a character
    char text[1400];
    snprintf(text, sizeof text, "{\"attnviz_progress\": 1, \"lessons\": {"
             "\"/x.json\": {\"right\": 1e300, \"answered\": -5, \"total\": 1e300, \"answers\": {\"%s\": "
             "{\"right\": true, \"given\": \"一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十\"}}},"
             "\"/x.json\": {\"right\": 2, \"answered\": 2, \"total\": 3, \"answers\": {}}}}", study.q[0].id);
    write_file(path, text);
    assert_true(progress_load(&a, path, note, sizeof note));
    assert_true(progress_score(&a, "/x.json", &r, &n, &t));
    assert_true(r >= 0 && r <= n && n <= t && t <= 1000000);
    Study *fresh = calloc(1, sizeof *fresh);
    assert_non_null(fresh);
    study_load(fresh, &s->trace, &s->lesson, LANG_EN, true, 0);
    progress_restore(&a, "/x.json", fresh);
    size_t len = strlen(fresh->a[0].given);
    assert_true(len > 0 && len % 3 == 0); // whole three-byte characters
    assert_true(progress_update(&a, "/x.json", &study, "q_proj", "X", err, sizeof err));
    progress_free(&a);
    assert_true(progress_load(&a, path, note, sizeof note));
    assert_true(progress_score(&a, "/x.json", &r, &n, &t));
    assert_int_equal(n, 1); // the one entry now, this study's
    assert_int_equal(t, study.n);
    progress_free(&a);
    free(fresh);
    session_destroy(s);
}

static void test_progress_corrupt_set_aside(void **state)
{
    (void)state;
    char path[512], note[1400], err[1400];
    const char *bad[] = {"{\"attnviz_progress\": 1, \"lessons\": {\"x\": {\"answers\": {\"q\": {\"right\": 3}}}}}",
                         "{not json", "[]", "{\"attnviz_progress\": 2, \"lessons\": {}}"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(path, sizeof path, "%s/corrupt%zu.json", dir, k);
        write_file(path, bad[k]);
        Progress p;
        assert_true(progress_load(&p, path, note, sizeof note));
        assert_non_null(strstr(note, "set aside as"));
        assert_null(strchr(note, '\n'));
        assert_int_equal(access(path, F_OK), -1); // moved away, not deleted:
        char aside[512];
        const char *as = strstr(note, "set aside as ") + strlen("set aside as ");
        snprintf(aside, sizeof aside, "%.*s", (int)strcspn(as, ","), as);
        FILE *f = fopen(aside, "r");
        assert_non_null(f);
        char buf[256] = "";
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        assert_string_equal(buf, bad[k]); // its bytes kept
        // a new progress file is written beside it
        assert_true(progress_save(&p, err, sizeof err));
        assert_int_equal(access(path, F_OK), 0);
        progress_free(&p);
    }
    // an unreadable one (a directory in its place) is left alone and not replaced
    snprintf(path, sizeof path, "%s/isdir.json", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    Progress p;
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_true(note[0] != '\0');
    assert_false(progress_save(&p, err, sizeof err));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    progress_free(&p);
}

// ---- the lesson's own questions ------------------------------------------------------

static const char *const QUIZ_LESSON =
    "{\"title\": \"q\", \"model\": {\"d_model\": 4, \"n_heads\": 2},"
    " \"input\": {\"query\": {\"shape\": [1, 3, 4], \"arange\": [0, 12]}}, \"weights\": {\"init\": {\"seed\": 1}},"
    " \"quiz\": [%s]}";

static bool parse_quiz_lesson(const char *quiz, Lesson *ls, char *err, size_t n)
{
    char text[4096];
    snprintf(text, sizeof text, QUIZ_LESSON, quiz);
    return lesson_parse(ls, "q.json", text, strlen(text), err, n);
}

static void test_authored_quiz(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    Lesson ls;
    const char *good =
        "{\"id\": \"why-scale\", \"stage\": \"scores\", \"question\": {\"en\": \"Which head?\", \"zh\": \"哪个头？\"},"
        " \"answer\": [1, 0], \"unordered\": true, \"head\": 1, \"batch\": 0, \"cell\": [2, 1],"
        " \"explanation\": \"Because.\"},"
        "{\"stage\": \"attn\", \"question\": \"Sum?\", \"answer\": 1, \"tolerance\": 0.01}";
    if (!parse_quiz_lesson(good, &ls, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(ls.n_quiz, 2);
    assert_string_equal(ls.quiz[1].id, "authored-2");
    Trace tr;
    trace_init(&tr);
    assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
    assert_true(lesson_check_quiz(&ls, &tr, err, sizeof err));
    QuizQuestion *qs = calloc(STUDY_MAX, sizeof *qs);
    assert_non_null(qs);
    int n = quiz_all(&tr, &ls, LANG_ZH, 1, true, qs, STUDY_MAX);
    int found = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0) assert_true(qs[i - 1].stage <= qs[i].stage); // in stage order
        if (qs[i].kind != QUIZ_AUTHORED) continue;
        found++;
        if (strcmp(qs[i].id, "why-scale") == 0) {
            assert_string_equal(qs[i].question, "哪个头？");
            assert_string_equal(qs[i].explanation, "Because."); // zh falls back to en
            assert_true(qs[i].unordered);
            float given[2] = {0, 1};
            assert_true(quiz_check(&qs[i], given, 2));
            assert_string_equal(tr.stages[qs[i].stage].name, "scores");
        } else {
            float given = 0.995f, off = 0.98f;
            assert_true(quiz_check(&qs[i], &given, 1));
            assert_false(quiz_check(&qs[i], &off, 1));
        }
    }
    assert_int_equal(found, 2);
    assert_int_equal(quiz_all(&tr, &ls, LANG_EN, 1, false, qs, STUDY_MAX), n - 2); // edited: not asked
    // written back the same
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(lesson_write(&ls, f));
    fclose(f);
    Lesson back;
    if (!lesson_parse(&back, "back.json", buf, len, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(back.n_quiz, 2);
    assert_string_equal(back.quiz[0].question[LANG_ZH], "哪个头？");
    assert_int_equal(back.quiz[0].cell[1], 1);
    assert_true(back.quiz[0].unordered);
    assert_true(back.quiz[1].has_tolerance);
    assert_false(back.quiz[0].has_tolerance);
    assert_float_equal(back.quiz[1].tolerance, 0.01f, 1e-9);
    lesson_free(&back);
    free(buf);
    // checked against the trace: a stage this lesson has not, a cell outside the tensor
    ls.quiz[1].stage[0] = 'x';
    assert_false(lesson_check_quiz(&ls, &tr, err, sizeof err));
    assert_non_null(strstr(err, "q.json: quiz[1].stage: \"xttn\" is not a stage of this lesson"));
    ls.quiz[1].stage[0] = 'a';
    ls.quiz[0].cell[1] = 7;
    assert_false(lesson_check_quiz(&ls, &tr, err, sizeof err));
    assert_non_null(strstr(err, "quiz[0].cell: column 7 is out of range"));
    free(qs);
    trace_free(&tr);
    lesson_free(&ls);
    // refused as it is read, with the JSON path
    static const struct {
        const char *quiz, *want;
    } bad[] = {
        {"{\"question\": \"q\", \"answer\": 1}", "quiz[0].stage: missing"},
        {"{\"stage\": \"attn\", \"answer\": 1}", "quiz[0].question: missing"},
        {"{\"stage\": \"attn\", \"question\": \"q\"}", "quiz[0].answer: missing"},
        {"{\"stage\": \"attn\", \"question\": \"q\", \"answer\": \"3\"}", "quiz[0].answer: expected a number"},
        {"{\"stage\": \"attn\", \"question\": \"q\", \"answer\": 1, \"unordered\": true}", "quiz[0].unordered: only a list"},
        {"{\"stage\": \"attn\", \"question\": \"q\", \"answer\": 1, \"tolerance\": -1}", "quiz[0].tolerance: expected a number >= 0"},
        {"{\"stage\": \"attn\", \"question\": \"q\", \"answer\": 1, \"colour\": 1}", "quiz[0].colour: unknown key"},
        {"{\"stage\": \"attn\", \"question\": \"q\", \"answer\": 1, \"cell\": [1, 2, 3]}", "quiz[0].cell: expected [row]"},
        {"{\"id\": \"a\", \"stage\": \"attn\", \"question\": \"q\", \"answer\": 1},"
         "{\"id\": \"a\", \"stage\": \"attn\", \"question\": \"q\", \"answer\": 2}",
         "quiz[1].id: \"a\" is used twice"},
        // issue 27 item 9: the question with the id is named, not quiz[1] that has none
        {"{\"id\": \"authored-2\", \"stage\": \"attn\", \"question\": \"q\", \"answer\": 1},"
         "{\"stage\": \"attn\", \"question\": \"q\", \"answer\": 2}",
         "quiz[0].id: \"authored-2\" is the name of quiz[1], which has no id of its own"},
        {"3", "quiz[0]: expected an object"},
        {"{\"id\": \"attn-argmax-b1-h0-3\", \"stage\": \"attn\", \"question\": \"q\", \"answer\": 1}",
         "quiz[0].id: \"attn-argmax-b1-h0-3\" has the form of a generated question's id"},
        {"{\"stage\": \"attn\", \"question\": {\"en\": \"q\", \"zh\": \"\"}, \"answer\": 1}",
         "quiz[0].question: the Chinese text empty; expected 1 to 500 bytes"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        assert_false(parse_quiz_lesson(bad[k].quiz, &ls, err, sizeof err));
        if (!strstr(err, bad[k].want)) fail_msg("%s: got \"%s\"", bad[k].want, err);
    }
}


// Answers to the first 3 questions of s's lesson in `study`.
static void answer_three(const Session *s)
{
    memset(&study, 0, sizeof study);
    study_load(&study, &s->trace, &s->lesson, LANG_EN, true, 0);
    study.on = true;
    for (int i = 0; i < 3; i++) {
        study_enter(&study, study.q[i].stage);
        typed(&study.q[i], study.text, sizeof study.text);
        assert_true(study_submit(&study, LANG_EN));
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

// A progress file of about `bytes` bytes, compact, valid: many lessons.
static void write_big_progress(const char *path, long bytes)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"attnviz_progress\":1,\"lessons\":{", f);
    long n = 33;
    for (int i = 0; n < bytes - 300; i++) {
        int w = fprintf(f, "%s\"/lessons/l%07d.json\":{\"title\":\"t\",\"stage\":\"attn\",\"right\":1,"
                        "\"answered\":1,\"total\":9,\"answers\":{\"q_proj-shape\":{\"right\":true,\"given\":"
                        "\"2x4x4\",\"hinted\":false,\"gave_up\":false}}}", i ? "," : "", i);
        n += w;
    }
    // the last lesson's title fills it up to `bytes` (with the closing "}}\n")
    static const char head[] = ",\"/lessons/last.json\":{\"title\":\"", tail[] = "\",\"answers\":{}}";
    long pad = bytes - n - (long)(sizeof head - 1) - (long)(sizeof tail - 1) - 3;
    fputs(head, f);
    for (long i = 0; i < pad; i++) fputc('t', f);
    fputs(tail, f);
    fputs("}}\n", f);
    fclose(f);
}

// Issue 27 item 3: one answer never turns a file the reader accepts into one it
// rejects: written compactly, and a save that would pass 8 MiB is refused with a
// message, the file left as it was.
static void test_progress_compact_and_capped(void **state)
{
    (void)state;
    char path[512], note[1400], err[1400], key[PROGRESS_PATH_MAX];
    snprintf(path, sizeof path, "%s/progress.json", dir);
    Session *s = open_session("lessons/arange-2x4x4.json");
    progress_key(s->path, key, sizeof key);
    answer_three(s);
    // ~8.0 MB compact: indented it would be ~11.5 MB, past what the reader takes
    write_big_progress(path, (long)PROGRESS_MAX_BYTES - 400 * 1024);
    long before = file_size(path);
    Progress p;
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_string_equal(note, "");
    assert_true(progress_update(&p, key, &study, "attn", "The classic", err, sizeof err));
    progress_free(&p);
    long after = file_size(path);
    assert_true(after <= (long)PROGRESS_MAX_BYTES);
    assert_true(after < before + 4096);
    assert_true(progress_load(&p, path, note, sizeof note)); // read back, not set aside
    assert_string_equal(note, "");
    int r, a, t;
    assert_true(progress_score(&p, key, &r, &a, &t));
    assert_int_equal(a, 3);
    assert_true(progress_score(&p, "/lessons/l0000007.json", &r, &a, &t)); // the others kept
    progress_free(&p);
    char aside[600];
    snprintf(aside, sizeof aside, "%s.corrupt", path);
    assert_int_equal(count_entries(aside), 0); // nothing set aside
    // a file just under the limit: the answer's save is refused, the file unchanged
    write_big_progress(path, (long)PROGRESS_MAX_BYTES - 200);
    before = file_size(path);
    assert_true(before <= (long)PROGRESS_MAX_BYTES);
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_string_equal(note, "");
    assert_false(progress_update(&p, key, &study, "attn", "The classic", err, sizeof err));
    assert_non_null(strstr(err, "8 MiB"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(before, (long)PROGRESS_MAX_BYTES - 200);
    assert_int_equal(file_size(path), before);
    progress_free(&p);
    assert_true(progress_load(&p, path, note, sizeof note)); // still accepted
    assert_string_equal(note, "");
    progress_free(&p);
    session_destroy(s);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "progress_load blocked on a FIFO\n";
    if (write(2, msg, sizeof msg - 1)) {}
    _exit(1);
}

// Issue 27 item 2: a FIFO (anything but a regular file) named progress.json is
// reported at once and left alone, never opened blocking; item 9: a symbolic link
// is written through (the linked file gets the answers, the link stays).
static void test_progress_not_a_file(void **state)
{
    (void)state;
    char path[512], other[512], note[1400], err[1400], key[PROGRESS_PATH_MAX];
    snprintf(path, sizeof path, "%s/progress.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    signal(SIGALRM, on_alarm);
    alarm(10);
    Progress p;
    assert_true(progress_load(&p, path, note, sizeof note));
    alarm(0);
    assert_non_null(strstr(note, "not a regular file"));
    assert_string_equal(p.path, ""); // nothing will be written over it
    progress_free(&p);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(path);
    // the link
    Session *s = open_session("lessons/arange-2x4x4.json");
    progress_key(s->path, key, sizeof key);
    answer_three(s);
    snprintf(other, sizeof other, "%s/synced.json", dir);
    write_file(other, "{\"attnviz_progress\": 1, \"lessons\": {}}\n");
    assert_int_equal(symlink("synced.json", path), 0);
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_true(progress_update(&p, key, &study, "attn", "The classic", err, sizeof err));
    progress_free(&p);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(progress_load(&p, other, note, sizeof note));
    int r, a, t;
    assert_true(progress_score(&p, key, &r, &a, &t));
    assert_int_equal(a, 3);
    progress_free(&p);
    session_destroy(s);
}

// Issue 27 item 3: the save is off the frame: submitting returns while the file is
// locked by another window; the answers are written once the lock is free.
static void test_progress_saver(void **state)
{
    (void)state;
    char path[512], lock[600], err[1400], key[PROGRESS_PATH_MAX], note[1400];
    snprintf(path, sizeof path, "%s/progress.json", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    Session *s = open_session("lessons/arange-2x4x4.json");
    progress_key(s->path, key, sizeof key);
    answer_three(s);
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0); // another window is writing
    ProgressSaver *sv = progress_saver_start();
    assert_non_null(sv);
    assert_true(progress_saver_submit(sv, path, key, &study, "attn", "The classic")); // returns at once
    Progress p = {0};
    bool failed = true;
    assert_false(progress_saver_poll(sv, &p, err, sizeof err, &failed));
    assert_true(progress_saver_busy(sv));
    assert_int_equal(file_size(path), -1);
    close(fd); // the lock is free
    bool got = false;
    for (int i = 0; i < 2000 && !got; i++) { // poll, up to ~20 s
        got = progress_saver_poll(sv, &p, err, sizeof err, &failed);
        if (!got) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    assert_true(got);
    assert_false(failed);
    int r, a, t;
    assert_true(progress_score(&p, key, &r, &a, &t)); // what was written, handed back
    assert_int_equal(a, 3);
    progress_free(&p);
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_true(progress_score(&p, key, &r, &a, &t));
    progress_free(&p);
    // queued answers are written before the thread ends
    answer_three(s);
    study_enter(&study, study.q[3].stage); // (the third's feedback shows: the fourth asked)
    study_give_up(&study);
    assert_true(study.a[3].gave_up);
    assert_true(progress_saver_submit(sv, path, key, &study, "scores", "The classic"));
    progress_saver_stop(sv);
    assert_true(progress_load(&p, path, note, sizeof note));
    assert_true(progress_score(&p, key, &r, &a, &t));
    assert_int_equal(a, 4);
    progress_free(&p);
    session_destroy(s);
}

// A lesson's key before its file is there (the page's picker lists lessons it fetches only when
// they are opened: their study scores are found by the key the file will have) equals the key
// once it is there, whatever "dir/.." the path takes; a folder that is not there: the path itself.
static void test_progress_key_before_the_file(void **state)
{
    (void)state;
    char sub[300], path[400], before[PATH_MAX + 64], after[PATH_MAX + 64], gone[400];
    snprintf(sub, sizeof sub, "%s/assets", dir);
    assert_int_equal(mkdir(sub, 0777), 0);
    snprintf(path, sizeof path, "%s/../x.json", sub);
    progress_key(path, before, sizeof before);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    progress_key(path, after, sizeof after);
    assert_string_equal(before, after);
    assert_null(strstr(after, ".."));
    snprintf(gone, sizeof gone, "%s/no-such-folder/x.json", dir);
    progress_key(gone, before, sizeof before);
    assert_string_equal(before, gone);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_every_lesson),
        cmocka_unit_test(test_pick_keys),
        cmocka_unit_test_setup_teardown(test_progress_round_trip, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_progress_corrupt_set_aside, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_progress_two_windows, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_progress_compact_and_capped, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_progress_not_a_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_progress_saver, make_dir, remove_dir),
        cmocka_unit_test(test_authored_quiz),
        cmocka_unit_test_setup_teardown(test_progress_key_before_the_file, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
