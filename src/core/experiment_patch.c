// experiment_patch.c — activation patching: a clean run's activation put into a corrupted run
// (see experiment.h).
#include "experiment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

static int layers_of(const Lesson *ls) { return ls->cfg.n_layers > 1 ? ls->cfg.n_layers : 1; }

bool experiment_patch_check(const Lesson *ls, const Trace *clean, PatchKind kind, int layer, int head, int pos,
                            const char *what, char *err, size_t n)
{
    const int L = layers_of(ls), H = ls->cfg.n_heads, len = ls->len_q;
    if (ls->cfg.vocab_size <= 0) {
        snprintf(err, n, "%s: patching compares next-token probabilities: a language model's (a lesson with a "
                 "\"vocab\")", what);
        return false;
    }
    for (int l = 0; l < ls->cfg.n_layer_types; l++)
        if (ls->cfg.layer_types[l] == LAYER_LINEAR) { // (delta.c: no head_out stage there)
            snprintf(err, n, "%s: model.layer_types: a \"linear_attention\" layer is not patched yet; patch in a lesson "
                     "without one", what);
            return false;
        }
    if (ls->cfg.flash_block_k > 0 || ls->cfg.decode) {
        snprintf(err, n, "%s: model.%s computes head_out again apart; patch in a lesson without it", what,
                 ls->cfg.decode ? "decode" : "flash");
        return false;
    }
    if (layer < 0 || layer >= L || (kind == PATCH_HEAD && (head < 0 || head >= H))) {
        snprintf(err, n, "%s: no such %s: the model has %d layer%s of %d heads", what, kind == PATCH_HEAD ? "head" : "layer",
                 L, L > 1 ? "s" : "", H);
        return false;
    }
    if (pos < 0 || pos >= len) {
        snprintf(err, n, "%s: position %d is outside the text (positions 0 … %d)", what, pos, len - 1);
        return false;
    }
    if (clean->batch != ls->batch || clean->len_q != len || clean->n_layers != L) {
        snprintf(err, n, "%s: the clean run is %d × %d tokens, the corrupted %d × %d: patching needs texts of one "
                 "length", what, clean->batch, clean->len_q, ls->batch, len);
        return false;
    }
    return true;
}

bool experiment_patch_run(const Lesson *ls, const Trace *clean, PatchKind kind, int layer, int head, int pos, Trace *tr,
                          const char *what, char *err, size_t n)
{
    if (!experiment_patch_check(ls, clean, kind, layer, head, pos, what, err, n)) return false;
    const int B = ls->batch, len = ls->len_q, d = kind == PATCH_HEAD ? clean->d_v : clean->d_model;
    int src = -1;
    if (kind == PATCH_HEAD) {
        char name[32];
        if (layers_of(ls) > 1) snprintf(name, sizeof name, "l%d.head_out", layer);
        else snprintf(name, sizeof name, "head_out");
        src = trace_find(clean, name);
    } else {
        src = experiment_layer_output(clean, layer);
    }
    float *values = malloc((size_t)B * d * sizeof(float));
    if (src < 0 || !values) {
        free(values);
        snprintf(err, n, "%s: %s", what, src < 0 ? "the clean run has no such stage" : "out of memory");
        return false;
    }
    const float *x = clean->stages[src].t.data; // head_out (B, H, L, d_v) or the residual (B, L, C)
    for (int b = 0; b < B; b++) {
        const size_t row = kind == PATCH_HEAD ? ((size_t)b * clean->n_heads + head) * len + pos : (size_t)b * len + pos;
        memcpy(values + (size_t)b * d, x + row * d, (size_t)d * sizeof(float));
    }
    AttnConfig cfg = ls->cfg;
    cfg.patch = (AttnPatch){kind, layer, head, pos, values};
    trace_init(tr);
    const bool ok = attn_forward(&cfg, ls->w, &ls->in, tr);
    free(values);
    if (!ok) {
        trace_free(tr); // (nothing kept)
        snprintf(err, n, "%s: out of memory", what);
    }
    return ok;
}

// The probability of token t at batch 0's last position of tr.
static float last_prob(const Trace *tr, int t)
{
    const int p = trace_find(tr, "probs");
    return tr->stages[p].t.data[(size_t)(tr->len_q - 1) * tr->vocab_size + t];
}

void patching_free(Patching *p)
{
    free(p->residual), free(p->heads);
    memset(p, 0, sizeof *p);
}

bool experiment_patching(const Lesson *clean, const Lesson *corrupt, Patching *out, const char *what, char *err,
                         size_t n)
{
    memset(out, 0, sizeof *out);
    if (corrupt->batch != clean->batch || corrupt->len_q != clean->len_q) {
        snprintf(err, n, "%s: the corrupted text is %d token%s, the clean text %d: patching needs texts of one length",
                 what, corrupt->len_q, corrupt->len_q == 1 ? "" : "s", clean->len_q);
        return false;
    }
    Trace tc, tx, tp;
    trace_init(&tc), trace_init(&tx);
    bool ok = attn_forward(&clean->cfg, clean->w, &clean->in, &tc) && attn_forward(&corrupt->cfg, corrupt->w, &corrupt->in, &tx);
    if (!ok) snprintf(err, n, "%s: out of memory", what);
    const int L = layers_of(clean), H = clean->cfg.n_heads, len = clean->len_q;
    ok = ok && experiment_patch_check(corrupt, &tc, PATCH_RESIDUAL, 0, 0, 0, what, err, n);
    if (ok) {
        out->n_layers = L, out->n_heads = H, out->batch = clean->batch, out->len = len;
        const int pr = trace_find(&tc, "probs"), V = tc.vocab_size;
        const float *pc = tc.stages[pr].t.data + (size_t)(len - 1) * V;
        int top = 0;
        for (int v = 1; v < V; v++) top = pc[v] > pc[top] ? v : top;
        out->token = top, out->p_clean = pc[top], out->p_corrupt = last_prob(&tx, top);
        // (a corrupted text that leaves the prediction as it is — the clean text itself, a change the
        // last position does not read — has nothing to recover: every fraction 0 / 0, shown as nan)
        if (fabsf(out->p_clean - out->p_corrupt) < 5e-5f) {
            const char *tok = lesson_vocab_label(clean, top);
            snprintf(err, n, "%s: the corrupted text gives \"%s\" (the clean prediction at the last position) "
                     "the clean text's probability, %.4f: nothing to recover; change a token that prediction reads",
                     what, tok ? tok : "?", (double)out->p_clean);
            ok = false;
        }
    }
    if (ok) {
        out->residual = malloc((size_t)L * len * sizeof(float));
        out->heads = malloc((size_t)L * H * len * sizeof(float));
        if (!(ok = out->residual && out->heads)) snprintf(err, n, "%s: out of memory", what);
    }
    const float gap = out->p_clean - out->p_corrupt;
    for (int k = 0; ok && k < L * len + L * H * len; k++) {
        const bool head = k >= L * len;
        const int r = head ? k - L * len : k, pos = r % len, layer = head ? r / len / H : r / len, h = head ? r / len % H : 0;
        if (!(ok = experiment_patch_run(corrupt, &tc, head ? PATCH_HEAD : PATCH_RESIDUAL, layer, h, pos, &tp, what, err,
                                        n)))
            break;
        const float rec = (last_prob(&tp, out->token) - out->p_corrupt) / gap; // (gap ≠ 0: checked above)
        (head ? out->heads : out->residual)[r] = rec;
        trace_free(&tp);
    }
    trace_free(&tc), trace_free(&tx);
    if (!ok) patching_free(out);
    return ok;
}
