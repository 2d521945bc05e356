// test_task.c — the training tasks' data (src/core/task.c) against the training scripts' own
// batches, and training on them (src/core/train.c): 50 steps of the induction lesson's model
// from the script's initial weights on the C generator's batches against the script's
// checkpoint of step 50, the lesson's "task" read and written, a lesson that cannot train, a
// step that breaks the weights, the checkpoints written and read back.
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lesson.h"
#include "train.h"

#include "ref_support.h"

static void load(Lesson *ls, const char *path, int checkpoint)
{
    char err[LESSON_ERR_MAX];
    const LessonOverride o = {NULL, checkpoint >= 0, checkpoint};
    if (!lesson_load_with(ls, path, checkpoint >= 0 ? &o : NULL, err, sizeof err)) fail_msg("%s", err);
}

// The induction task's batches are the script's: tests/ref/train/induction-50.json holds the 50
// batches train_induction.py drew (gen_optim.py), each row 15 letters: 14 inputs, then the last
// target.
static void test_induction_batches(void **state)
{
    (void)state;
    Lesson ls;
    load(&ls, "lessons/induction-heads.json", -1);
    assert_int_equal(ls.task.kind, TASK_INDUCTION);
    Task t;
    char err[LESSON_ERR_MAX];
    assert_true(task_init(&t, &ls.task, ls.vocab, ls.n_vocab, "induction", err, sizeof err));
    const int B = t.spec.batch, L = t.spec.length;
    int *ids = malloc((size_t)B * L * sizeof *ids), *tg = malloc((size_t)B * L * sizeof *tg), n = 0, bad = 0;
    cJSON *root = ref_read_json("tests/ref/train/induction-50.json"), *batch;
    cJSON_ArrayForEach(batch, cJSON_GetObjectItem(root, "batches"))
    {
        task_batch(&t, ids, tg);
        assert_int_equal(cJSON_GetArraySize(batch), B);
        for (int b = 0; b < B; b++) {
            const char *s = cJSON_GetArrayItem(batch, b)->valuestring;
            for (int l = 0; l < L; l++)
                if ((ls.vocab[ids[b * L + l]][0] != s[l] || ls.vocab[tg[b * L + l]][0] != s[l + 1]) && bad++ < 3)
                    print_error("batch %d row %d position %d: C %s, the script %c\n", n, b, l, ls.vocab[ids[b * L + l]],
                                s[l]);
        }
        n++;
    }
    assert_int_equal(n, 50);
    assert_int_equal(bad, 0);
    free(ids), free(tg);
    cJSON_Delete(root);
    task_free(&t);
    lesson_free(&ls);
}

// The other tasks against tests/ref/train/tasks.json (gen_tasks.py: the scripts' functions).
static void test_script_batches(void **state)
{
    (void)state;
    cJSON *root = ref_read_json("tests/ref/train/tasks.json"), *c;
    int cases = 0, skipped = 0;
    cJSON_ArrayForEach(c, root)
    {
        Lesson ls;
        load(&ls, cJSON_GetObjectItem(c, "lesson")->valuestring, -1);
        if (ls.task.kind == TASK_CORPUS && access(TASK_CORPUS_DIR "/fortunes", R_OK) != 0) {
            printf("%s: fortunes-min is not installed (apt-get install fortunes-min): its case skipped\n", ls.path);
            lesson_free(&ls);
            skipped++;
            continue;
        }
        TaskSpec spec = ls.task;
        spec.seed = (uint64_t)cJSON_GetObjectItem(c, "seed")->valuedouble;
        spec.batch = cJSON_GetObjectItem(c, "batch")->valueint;
        assert_int_equal(spec.length, cJSON_GetObjectItem(c, "length")->valueint);
        Task t;
        char err[LESSON_ERR_MAX];
        if (!task_init(&t, &spec, ls.vocab, ls.n_vocab, ls.path, err, sizeof err)) fail_msg("%s", err);
        if (cJSON_GetObjectItem(c, "corpus_length")) assert_int_equal((int)t.n_text, cJSON_GetObjectItem(c, "corpus_length")->valueint);
        const int B = spec.batch, L = spec.length;
        int ids[64 * 64], tg[64 * 64], bad = 0;
        assert_true(B * L <= 64 * 64);
        for (int k = 0; k < cJSON_GetArraySize(cJSON_GetObjectItem(c, "ids")); k++) {
            task_batch(&t, ids, tg);
            const cJSON *ri = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "ids"), k);
            const cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "targets"), k);
            for (int b = 0; b < B; b++)
                for (int l = 0; l < L; l++) {
                    const int wi = cJSON_GetArrayItem(cJSON_GetArrayItem(ri, b), l)->valueint;
                    const int wt = cJSON_GetArrayItem(cJSON_GetArrayItem(rt, b), l)->valueint;
                    if ((ids[b * L + l] != wi || tg[b * L + l] != wt) && bad++ < 3)
                        print_error("%s: batch %d [%d][%d]: C %d → %d, the script %d → %d\n", ls.path, k, b, l,
                                    ids[b * L + l], tg[b * L + l], wi, wt);
                }
        }
        assert_int_equal(bad, 0);
        printf("%s: task %s, %d batches equal to the script's\n", ls.path, TASK_KIND_NAMES[spec.kind],
               cJSON_GetArraySize(cJSON_GetObjectItem(c, "ids")));
        task_free(&t);
        lesson_free(&ls);
        cases++;
    }
    assert_int_equal(cases + skipped, 3); // (gen_tasks.py ran with fortunes-min: the corpus case is there)
    cJSON_Delete(root);
    if (skipped) skip();
}

// Issue 38's check with the C generator: the induction lesson's model from the script's initial
// weights (checkpoint 0), 50 steps of Adam (lr 3e-3, its cosine decay over 6000 steps) on the
// task's batches, against the script's checkpoint of step 50 (b_k apart, as test_optim's
// test_induction_50 says why); the checkpoints kept, written and read back.
static void test_train_50(void **state)
{
    (void)state;
    Lesson ls, ck;
    load(&ls, "lessons/induction-heads.json", 0);
    load(&ck, "lessons/induction-heads.json", 1);
    assert_int_equal(ck.ckpt_step[1], 50);
    OptimConfig oc;
    char err[LESSON_ERR_MAX];
    assert_true(optim_parse(&oc, "adamw:lr=3e-3,weight_decay=0,cosine=6000", "--step", err, sizeof err));
    TrainRun r;
    if (!train_start(&r, &ls, &oc, 50, false, 0, "induction", err, sizeof err)) fail_msg("%s", err);
    assert_true(train_checkpoint(&r, &ls, NULL, err, sizeof err));
    while (r.step < 50) {
        if (!train_step(&r, &ls, err, sizeof err)) fail_msg("%s", err);
        if (train_at_checkpoint(&r)) assert_true(train_checkpoint(&r, &ls, NULL, err, sizeof err));
    }
    cJSON *root = ref_read_json("tests/ref/train/induction-50.json");
    RefWorst lw = {0, 0}, ww = {0, 0};
    int bad = 0;
    for (int k = 0; k < 50; k++) bad += ref_check(r.losses[k], cJSON_GetArrayItem(cJSON_GetObjectItem(root, "losses"), k)->valuedouble, &lw);
    double worst_bk = 0.0;
    for (int l = 0; l < ls.cfg.n_layers; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) {
            const Tensor *a = attn_weight(&ls.w[l], s), *b = attn_weight(&ck.w[l], s);
            for (size_t i = 0; tensor_present(b) && i < b->size; i++)
                if (s == WEIGHT_B_K)
                    worst_bk = fmax(worst_bk, fabs((double)a->data[i] - (double)b->data[i]));
                else
                    bad += ref_check(a->data[i], b->data[i], &ww);
        }
    printf("induction, 50 steps on the C generator's batches: max |loss C − torch| %.3g, max |weight C − torch| "
           "%.3g, b_k apart %.3g\n", lw.abs, ww.abs, worst_bk);
    assert_int_equal(bad, 0);
    assert_true(worst_bk < 50 * 3e-3);
    // the checkpoints: steps 0, 2, …, 50 (every 50/20 = 2), the held-out loss falling
    assert_int_equal(r.n_ckpt, 26);
    assert_true(r.ckpt_step[0] == 0 && r.ckpt_step[25] == 50 && r.ckpt_loss[25] < r.ckpt_loss[0]);
    assert_true(train_apply(&r, &ls, err, sizeof err));
    char path[] = "/tmp/attnviz-test-task-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (!lesson_save(&ls, path, err, sizeof err)) fail_msg("%s", err);
    Lesson back;
    load(&back, path, -1);
    assert_int_equal(back.n_checkpoints, 26);
    assert_int_equal(back.task.kind, TASK_INDUCTION);
    assert_int_equal(back.task.seed, 4);
    for (int l = 0; l < ls.cfg.n_layers; l++) // the trained weights, bit for bit
        assert_memory_equal(back.w[l].w_q.data, ls.w[l].w_q.data, ls.w[l].w_q.size * sizeof(float));
    Lesson at0, orig0;
    load(&at0, path, 0); // checkpoint 0: the weights before training, the script's
    load(&orig0, "lessons/induction-heads.json", 0);
    for (int l = 0; l < ls.cfg.n_layers; l++)
        assert_memory_equal(at0.w[l].w_o.data, orig0.w[l].w_o.data, orig0.w[l].w_o.size * sizeof(float));
    lesson_free(&at0), lesson_free(&back), lesson_free(&orig0);
    unlink(path);
    cJSON_Delete(root);
    train_free(&r);
    lesson_free(&ls), lesson_free(&ck);
}

static void expect_parse(const char *task, const char *want)
{
    char text[4096], err[LESSON_ERR_MAX];
    snprintf(text, sizeof text, "{\"title\": \"t\", \"vocab\": [\"a\", \"b\", \"c\", \"|\"], \"model\": {\"d_model\": 4, "
             "\"n_heads\": 1, \"positions\": \"learned\", \"max_positions\": 6}, \"input\": {\"text\": \"abc\"}, "
             "\"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}%s%s}", task ? ", \"task\": " : "", task ? task : "");
    Lesson ls;
    const bool ok = lesson_parse(&ls, "t.json", text, strlen(text), err, sizeof err);
    if (!want) {
        if (!ok) fail_msg("%s: %s", task, err);
        lesson_free(&ls);
        return;
    }
    if (ok) fail_msg("%s: accepted", task);
    if (!strstr(err, want)) fail_msg("%s: the message \"%s\" lacks \"%s\"", task, err, want);
    assert_null(strchr(err, '\n'));
}

static void test_task_key(void **state)
{
    (void)state;
    expect_parse("{\"kind\": \"reversal\", \"length\": 5, \"batch\": 2, \"seed\": 7}", NULL);
    expect_parse("{\"kind\": \"sorting\", \"length\": 5, \"batch\": 2, \"seed\": 7}",
                 "t.json: task.kind: expected \"induction\", \"reversal\" or \"corpus\", got \"sorting\"");
    expect_parse("{\"kind\": \"reversal\", \"length\": 7, \"batch\": 2, \"seed\": 7}", "t.json: task.length:");
    expect_parse("{\"kind\": \"reversal\", \"length\": 5, \"batch\": 0, \"seed\": 7}", "t.json: task.batch:");
    expect_parse("{\"kind\": \"reversal\", \"length\": 5, \"batch\": 2, \"seed\": -1}",
                 "t.json: task.seed: expected a whole number");
    expect_parse("{\"kind\": \"reversal\", \"length\": 5, \"batch\": 2}", "t.json: task.seed:");
    expect_parse("{\"kind\": \"reversal\", \"length\": 5, \"batch\": 2, \"seed\": 1, \"steps\": 3}", "t.json: task");
    expect_parse("[1]", "t.json: task: expected {\"kind\"");
    // a lesson without a task, or without a vocab (no targets), cannot be trained: one line
    Lesson ls;
    char err[LESSON_ERR_MAX];
    OptimConfig oc;
    TrainRun r;
    assert_true(optim_parse(&oc, "adamw", "--step", err, sizeof err));
    load(&ls, "lessons/sentence-the-cat.json", -1);
    assert_false(train_start(&r, &ls, &oc, 10, false, 0, "lessons/sentence-the-cat.json", err, sizeof err));
    assert_non_null(strstr(err, "lessons/sentence-the-cat.json: task: not a language model (no \"vocab\")"));
    lesson_free(&ls);
    load(&ls, "tests/ref/backward/post-norm-relu-learned.lesson.json", -1);
    assert_false(train_start(&r, &ls, &oc, 10, false, 0, "x.json", err, sizeof err));
    assert_non_null(strstr(err, "x.json: task: the lesson has none; expected a lesson with a \"task\""));
    assert_null(strchr(err, '\n'));
    lesson_free(&ls);
}

// A step far too large makes a number infinite: the run stops naming the step and the stage,
// and the weights are the ones before that step, bit for bit.
static void test_breaks(void **state)
{
    (void)state;
    Lesson ls;
    load(&ls, "lessons/reversal-anti-diagonal.json", -1);
    OptimConfig oc;
    char err[LESSON_ERR_MAX];
    assert_true(optim_parse(&oc, "sgd:lr=1e37", "--step", err, sizeof err));
    TrainRun r;
    if (!train_start(&r, &ls, &oc, 10, true, 9, "rev.json", err, sizeof err)) fail_msg("%s", err);
    static float before[11][4096]; // w_q before each step
    const Tensor *w = &ls.w[0].w_q;
    assert_true(w->size <= 4096);
    bool broke = false;
    while (!broke && r.step < 10) {
        memcpy(before[r.step], w->data, w->size * sizeof(float));
        broke = !train_step(&r, &ls, err, sizeof err);
    }
    assert_true(broke);
    printf("%s\n", err);
    // the step named is the last one taken (its update broke the weights: the next pass saw it)
    char want[64];
    snprintf(want, sizeof want, "rev.json: step %d: ", r.step);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "is not finite after it"));
    assert_memory_equal(before[r.step - 1], w->data, w->size * sizeof(float));
    for (size_t i = 0; i < w->size; i++) assert_true(isfinite(w->data[i]));
    train_free(&r);
    lesson_free(&ls);
}

// One optimizer step shown: its panels add up — SGD's new W is old W − η·dW bit for bit, AdamW's
// old W·(1 − ηλ) − η·m̂/(√v̂ + ε) within float32 rounding —, the loss before is the step's, the
// loss after is the batch's with the new weights, the attention row's change is its Σ|Δ|.
static void test_show_step(void **state)
{
    (void)state;
    static const char *const specs[] = {"sgd:lr=0.05", "adamw:lr=0.01,weight_decay=0.1"};
    for (int k = 0; k < 2; k++) {
        Lesson ls;
        load(&ls, "lessons/reversal-anti-diagonal.json", -1);
        OptimConfig oc;
        char err[LESSON_ERR_MAX];
        assert_true(optim_parse(&oc, specs[k], "--step", err, sizeof err));
        TrainRun r;
        if (!train_start(&r, &ls, &oc, 10, false, 0, "rev", err, sizeof err)) fail_msg("%s", err);
        TrainShown s;
        assert_false(train_show_step(&r, &ls, 0, WEIGHT_W_Q, &s, err, sizeof err)); // (no step yet)
        for (int i = 0; i < 3; i++) assert_true(train_step(&r, &ls, err, sizeof err));
        if (!train_show_step(&r, &ls, 0, WEIGHT_W_Q, &s, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(s.step, 3);
        assert_int_equal(s.w_old.rank, 2);
        assert_int_equal(s.w_old.shape[0], ls.w[0].w_q.shape[0]);
        double worst = 0.0;
        for (size_t i = 0; i < s.w_old.size; i++) {
            const float w = s.w_old.data[i], d = s.dw.data[i], n = s.w_new.data[i];
            if (k == 0) {
                assert_true(n == w + (float)-oc.lr * d);
            } else {
                const double want = (double)w * (1.0 - oc.lr * oc.weight_decay) -
                                    oc.lr * (double)s.m_hat.data[i] / (sqrt((double)s.v_hat.data[i]) + oc.eps);
                worst = fmax(worst, fabs((double)n - want));
            }
        }
        assert_true(worst <= 1e-6); // (a step is about lr = 0.01)
        assert_true(s.loss_before == r.losses[2] && isfinite(s.loss_after) && s.loss_after != s.loss_before);
        float sum = 0.0f;
        for (int j = 0; j < s.att_before.shape[1]; j++) sum += fabsf(s.att_after.data[j] - s.att_before.data[j]);
        assert_true(sum == s.att_change && s.att_change > 0.0f);
        printf("%s: step 3's W_Q update (%d×%d), AdamW max |new − formula| %.3g; loss %.4f → %.4f; attention row "
               "l%d h%d b%d q%d changed by %.4f\n", specs[k], s.w_old.shape[0], s.w_old.shape[1], worst,
               (double)s.loss_before, (double)s.loss_after, s.att_layer, s.att_head, s.att_batch, s.att_row,
               (double)s.att_change);
        train_shown_free(&s);
        train_free(&r);
        lesson_free(&ls);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_induction_batches), cmocka_unit_test(test_script_batches),
        cmocka_unit_test(test_train_50),          cmocka_unit_test(test_task_key),
        cmocka_unit_test(test_breaks),            cmocka_unit_test(test_show_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
