// train.c — a lesson's model trained on its task (train.h).
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A batch's inputs for ls's model: ids (B, L) and ls's mask (causal or sliding window, top-left)
// for that length; false when out of memory.
static bool batch_inputs(AttnInputs *in, int **targets, const Lesson *ls, int B, int L)
{
    memset(in, 0, sizeof *in);
    in->key_is_query = in->value_is_key = true;
    in->mask_kind = ls->in.mask_kind, in->window = ls->in.window, in->sink_tokens = ls->in.sink_tokens;
    const int ids_shape[2] = {B, L}, mask_shape[3] = {B, L, L};
    *targets = malloc((size_t)B * L * sizeof **targets);
    if (!*targets || !tensor_init(&in->ids, 2, ids_shape)) return false;
    if (in->mask_kind == MASK_NONE) return true;
    if (!tensor_init(&in->mask, 3, mask_shape)) return false;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++)
            for (int j = 0; j <= i; j++) {
                const bool sees = in->mask_kind != MASK_SLIDING || j > i - in->window || j < in->sink_tokens;
                in->mask.data[((size_t)b * L + i) * L + j] = sees ? 1.0f : 0.0f;
            }
    return true;
}

static void fill_batch(Task *t, AttnInputs *in, int *targets)
{
    const size_t n = (size_t)t->spec.batch * t->spec.length;
    int *ids = malloc(n * sizeof *ids);
    if (!ids) abort(); // (B·L ints, at most 512 × 1024: a few MB)
    task_batch(t, ids, targets);
    for (size_t i = 0; i < n; i++) in->ids.data[i] = (float)ids[i];
    free(ids);
}

bool train_start(TrainRun *r, const Lesson *ls, const OptimConfig *oc, int total, bool has_seed,
                 unsigned long long seed, const char *file, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    if (!ls->vocab) {
        snprintf(err, err_len, "%s: task: not a language model (no \"vocab\"), so no targets to train on; expected a "
                 "lesson with \"vocab\" and \"task\"", file);
        return false;
    }
    if (ls->in.mask_kind != MASK_NONE && ls->in.mask_kind != MASK_CAUSAL && ls->in.mask_kind != MASK_SLIDING) {
        snprintf(err, err_len, "%s: mask: a mask of the file's own cells cannot be laid on the task's batches; "
                 "expected a causal, sliding-window or no mask to train", file);
        return false;
    }
    TaskSpec spec = ls->task;
    if (has_seed) spec.seed = seed;
    if (!task_init(&r->task, &spec, ls->vocab, ls->n_vocab, file, err, err_len)) return false;
    spec.seed += 2999;
    if (!task_init(&r->held_task, &spec, ls->vocab, ls->n_vocab, file, err, err_len)) {
        train_free(r);
        return false;
    }
    r->oc = *oc;
    r->total = total;
    r->every = total / 20 > 0 ? total / 20 : 1;
    trainer_init(&r->tr, oc);
    r->cap = total > 0 && total < 1 << 20 ? total : 1024;
    r->losses = malloc((size_t)r->cap * sizeof *r->losses);
    if (!r->losses || !batch_inputs(&r->in, &r->targets, ls, spec.batch, spec.length) ||
        !batch_inputs(&r->held, &r->held_targets, ls, spec.batch, spec.length)) {
        snprintf(err, err_len, "%s: out of memory starting the training", file);
        train_free(r);
        return false;
    }
    fill_batch(&r->held_task, &r->held, r->held_targets);
    return true;
}

void train_free(TrainRun *r)
{
    task_free(&r->task), task_free(&r->held_task);
    trainer_free(&r->tr);
    attn_inputs_free(&r->in), attn_inputs_free(&r->held);
    free(r->targets), free(r->held_targets), free(r->losses);
    for (int k = 0; k < r->n_ckpt; k++) free(r->ckpt_json[k]);
    memset(r, 0, sizeof *r);
}

bool train_step(TrainRun *r, Lesson *ls, char *err, size_t err_len)
{
    if (r->step == r->cap) {
        float *grown = realloc(r->losses, (size_t)r->cap * 2 * sizeof *grown);
        if (!grown) {
            snprintf(err, err_len, "%s: out of memory at training step %d", r->file, r->step + 1);
            return false;
        }
        r->losses = grown, r->cap *= 2;
    }
    fill_batch(&r->task, &r->in, r->targets);
    r->tr.opt.cfg.lr = optim_lr_at(&r->oc, r->step);
    float loss;
    if (!trainer_step(&r->tr, &ls->cfg, ls->w, &r->in, r->targets, &loss, r->file, err, err_len)) return false;
    r->losses[r->step++] = loss;
    return true;
}

bool train_at_checkpoint(const TrainRun *r) { return r->step % r->every == 0 || r->step == r->total; }

bool train_checkpoint(TrainRun *r, Lesson *ls, float *loss, char *err, size_t err_len)
{
    Trace tr;
    Grads g;
    trace_init(&tr);
    grads_init(&g);
    bool ok = attn_forward(&ls->cfg, ls->w, &r->held, &tr) &&
              attn_backward(&ls->cfg, ls->w, &tr, r->held_targets, &g, r->file, err, err_len);
    const float held = g.loss;
    trace_free(&tr);
    grads_free(&g);
    char *json = ok ? lesson_weights_json(ls, ls->w) : NULL;
    if (!json) {
        snprintf(err, err_len, "%s: out of memory at the checkpoint of step %d", r->file, r->step);
        return false;
    }
    int k = r->n_ckpt; // (the same step again, or no room left: the latest replaces the last)
    if (k > 0 && (r->ckpt_step[k - 1] == r->step || k == LESSON_MAX_CHECKPOINTS)) free(r->ckpt_json[--k]);
    r->n_ckpt = k + 1;
    r->ckpt_step[k] = r->step, r->ckpt_loss[k] = held, r->ckpt_json[k] = json;
    if (loss) *loss = held;
    return true;
}

bool train_apply(TrainRun *r, Lesson *ls, char *err, size_t err_len)
{
    const int K = r->n_ckpt;
    int *step = malloc((size_t)K * sizeof *step);
    float *loss = malloc((size_t)K * sizeof *loss);
    char **json = calloc((size_t)K, sizeof *json);
    bool ok = step && loss && json;
    for (int k = 0; ok && k < K; k++) ok = (json[k] = strdup(r->ckpt_json[k])) != NULL;
    if (!ok || K == 0) {
        for (int k = 0; json && k < K; k++) free(json[k]);
        free(step), free(loss), free(json);
        if (K == 0) return true;
        snprintf(err, err_len, "%s: out of memory keeping the checkpoints", r->file);
        return false;
    }
    memcpy(step, r->ckpt_step, (size_t)K * sizeof *step);
    memcpy(loss, r->ckpt_loss, (size_t)K * sizeof *loss);
    lesson_free_checkpoints(ls);
    ls->ckpt_step = step, ls->ckpt_loss = loss, ls->ckpt_weights = json;
    ls->n_checkpoints = K;
    ls->checkpoint = -1;      // the model computed: the file's "weights", the trained ones
    ls->other_weights = true; // (the lesson's narration was about the old weights)
    return true;
}

// ---- one optimizer step shown -----------------------------------------------------------------

void train_shown_free(TrainShown *s)
{
    Tensor *t[] = {&s->w_old, &s->dw, &s->w_new, &s->m_hat, &s->v_hat, &s->att_before, &s->att_after, &s->att_ids};
    for (size_t k = 0; k < sizeof t / sizeof *t; k++) tensor_free(t[k]);
}

// dst = src · k as a (rows, cols) matrix (a vector as one row); false when out of memory.
static bool as_matrix(Tensor *dst, const Tensor *src, double k)
{
    const int shape[2] = {src->rank >= 2 ? src->shape[0] : 1, src->rank >= 2 ? (int)(src->size / (size_t)src->shape[0])
                                                                             : (int)src->size};
    if (!tensor_init_raw(dst, 2, shape)) return false;
    for (size_t i = 0; i < src->size; i++) dst->data[i] = k == 1.0 ? src->data[i] : (float)((double)src->data[i] / k);
    return true;
}

// The attention row (over every layer's attn) that differs most between tr0 and tr1.
static void most_changed_row(TrainShown *s, const Trace *tr0, const Trace *tr1)
{
    s->att_change = -1.0f;
    for (int i = 0; i < tr0->n && i < tr1->n; i++) {
        const Stage *a = &tr0->stages[i], *b = &tr1->stages[i];
        if (a->id != STAGE_ATTN || a->t.rank != 4 || b->t.size != a->t.size) continue;
        const int B = a->t.shape[0], H = a->t.shape[1], Lq = a->t.shape[2], Lk = a->t.shape[3];
        for (int r = 0; r < B * H * Lq; r++) {
            float d = 0.0f;
            for (int j = 0; j < Lk; j++) d += fabsf(b->t.data[(size_t)r * Lk + j] - a->t.data[(size_t)r * Lk + j]);
            if (d > s->att_change) {
                s->att_change = d, s->att_layer = a->layer > 0 ? a->layer : 0;
                s->att_batch = r / (H * Lq), s->att_head = r / Lq % H, s->att_row = r % Lq;
                tensor_free(&s->att_before), tensor_free(&s->att_after);
                const int shape[2] = {1, Lk};
                if (!tensor_init_raw(&s->att_before, 2, shape) || !tensor_init_raw(&s->att_after, 2, shape)) return;
                memcpy(s->att_before.data, a->t.data + (size_t)r * Lk, (size_t)Lk * sizeof(float));
                memcpy(s->att_after.data, b->t.data + (size_t)r * Lk, (size_t)Lk * sizeof(float));
            }
        }
    }
}

bool train_show_step(const TrainRun *r, const Lesson *ls, int layer, int slot, TrainShown *s, char *err,
                     size_t err_len)
{
    memset(s, 0, sizeof *s);
    if (err_len) err[0] = '\0';
    const Trainer *t = &r->tr;
    if (r->step == 0 || layer < 0 || layer >= TRACE_MAX_LAYERS || slot < 0 || slot >= WEIGHT_COUNT ||
        !tensor_present(&t->g.dw[layer][slot]) || !tensor_present(&t->keep[layer][slot])) {
        snprintf(err, err_len, "%s: no step of this weight to show yet", r->file);
        return false;
    }
    s->step = r->step, s->layer = layer, s->slot = slot, s->oc = t->opt.cfg;
    s->bc1 = 1.0 - pow(s->oc.beta1, t->opt.t), s->bc2 = 1.0 - pow(s->oc.beta2, t->opt.t);
    const bool adamw = s->oc.kind == OPTIM_ADAMW;
    bool ok = as_matrix(&s->w_old, &t->keep[layer][slot], 1.0) && as_matrix(&s->dw, &t->g.dw[layer][slot], 1.0) &&
              as_matrix(&s->w_new, attn_weight((AttnWeights *)&ls->w[layer], slot), 1.0);
    if (ok && adamw)
        ok = as_matrix(&s->m_hat, &t->opt.m[layer][slot], s->bc1) && as_matrix(&s->v_hat, &t->opt.v[layer][slot], s->bc2);
    s->loss_before = r->losses[r->step - 1];
    Trace after;
    Grads g;
    trace_init(&after);
    grads_init(&g);
    ok = ok && attn_forward(&ls->cfg, ls->w, &r->in, &after) &&
         attn_backward(&ls->cfg, ls->w, &after, r->targets, &g, r->file, err, err_len);
    if (ok) s->loss_after = g.loss, most_changed_row(s, &t->tr, &after);
    if (ok && s->att_before.rank == 2 && r->in.ids.rank == 2 && r->in.ids.shape[1] == s->att_before.shape[1]) {
        ok = as_matrix(&s->att_ids, &r->in.ids, 1.0);
        if (ok) memmove(s->att_ids.data, s->att_ids.data + (size_t)s->att_batch * s->att_ids.shape[1],
                        (size_t)s->att_ids.shape[1] * sizeof(float));
        s->att_ids.shape[0] = 1, s->att_ids.size = (size_t)s->att_ids.shape[1];
    }
    trace_free(&after);
    grads_free(&g);
    if (!ok) {
        if (!err[0]) snprintf(err, err_len, "%s: out of memory showing step %d", r->file, r->step);
        train_shown_free(s);
    }
    return ok;
}
