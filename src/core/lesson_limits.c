// lesson_limits.c — what a lesson's forward pass and weights would cost, checked before
// anything is computed or generated (lesson.h: lesson_check_size, lesson_check_weights).
// Every path that changes the input goes through lesson_check_size: the loader (a file,
// --text, --checkpoint), the text box (lesson_retext) and the session's forward pass
// (--set, the what-if lab, the temperature, undo and redo).
#include "lesson.h"

#include <stdint.h>
#include <stdio.h>

#include "jsonpath.h"
#include "tensor.h"

// Whether `rank` dims of shape fit within max elements (no overflow on the way).
static bool fits(int rank, const int *shape, unsigned max) { return tensor_shape_size(rank, shape, max) != 0; }

bool lesson_check_size(const Lesson *ls, const char *file, const char *input_path, char *err, size_t err_len)
{
    JsonCtx ctx = {file, err, err_len, false, false}, *c = &ctx;
    const AttnConfig *cfg = &ls->cfg;
    const unsigned M = LESSON_MAX_ELEMS;
    // the largest stages: the scores (B,H,Lq,Lk), the heads (B,H,L,d), the feed-forward
    // layer (B,Lq,F), the hidden states (B,L,C) and a language model's logits (B,L,V)
    const int B = ls->batch, Lq = ls->len_q, Lk = ls->len_k, L = Lq > Lk ? Lq : Lk;
    const int dmax = cfg->d_k > cfg->d_v ? cfg->d_k : cfg->d_v;
    const int s1[4] = {B, cfg->n_heads, Lq, Lk};
    const int s2[4] = {B, cfg->n_heads, L, dmax};
    const int s3[3] = {B, Lq, cfg->ffn_hidden > 0 ? cfg->ffn_hidden : 1};
    const int s5[3] = {B, L, cfg->d_model};
    const int s6[3] = {B, Lq, cfg->vocab_size > 0 ? cfg->vocab_size : 1};
    if (!fits(4, s1, M))
        return jsonpath_fail(c, input_path, "the scores would have B·H·Lq·Lk = %d·%d·%d·%d elements, over the limit of %u",
                             s1[0], s1[1], s1[2], s1[3], M);
    // several layers: all of them together within the limit of one (the memory of a model
    // stays that of a one-layer lesson's largest few stages)
    const int NL = cfg->n_layers > 1 ? cfg->n_layers : 1;
    if (NL > 1 && (!fits(4, s1, M / (unsigned)NL) || !fits(4, s2, M / (unsigned)NL) || !fits(3, s3, M / (unsigned)NL) ||
                   !fits(3, s5, M / (unsigned)NL)))
        return jsonpath_fail(c, "model.n_layers", "%d layers of scores, heads, hidden states and feed-forward layers "
                             "(B·H·Lq·Lk = %d·%d·%d·%d) would pass the limit of %u elements for all layers together; "
                             "expected fewer layers or a smaller input", NL, s1[0], s1[1], s1[2], s1[3], M);
    if (!fits(4, s2, M))
        return jsonpath_fail(c, cfg->d_k >= cfg->d_v ? "model.d_k" : "model.d_v",
                             "the heads would have B·H·L·d = %d·%d·%d·%d elements, over the limit of %u", s2[0], s2[1],
                             s2[2], s2[3], M);
    if (!fits(3, s3, M))
        return jsonpath_fail(c, "model.ffn_hidden", "the feed-forward layer would have B·Lq·F = %d·%d·%d elements, over the "
                             "limit of %u", s3[0], s3[1], s3[2], M);
    if (!fits(3, s5, M))
        return jsonpath_fail(c, cfg->vocab_size > 0 ? input_path : "model.d_model", "the hidden states would have B·L·C = "
                             "%d·%d·%d elements, over the limit of %u; expected fewer or shorter inputs", s5[0], s5[1],
                             s5[2], M);
    if (cfg->vocab_size > 0 && !fits(3, s6, M))
        return jsonpath_fail(c, input_path, "the logits would have B·L·V = %d·%d·%d elements, over the limit of %u; "
                             "expected fewer or shorter texts", s6[0], s6[1], s6[2], M);
    // FlashAttention's accumulator after each key block: (B, H, Lq, n_key_blocks·d_v)
    const int bk = cfg->flash_block_k;
    if (bk > 0) {
        long nkb = ((long)Lk + bk - 1) / bk;
        int s4[4] = {B, cfg->n_heads, Lq, nkb * cfg->d_v > INT32_MAX ? INT32_MAX : (int)(nkb * cfg->d_v)};
        if (!fits(4, s4, M))
            return jsonpath_fail(c, "model.flash.block_k", "%d: the accumulator after each key block would have "
                                 "B·H·Lq·(Lk/block_k)·d_v = %d·%d·%d·%ld·%d elements, over the limit of %u; expected "
                                 "larger blocks%s", bk, s4[0], s4[1], s4[2], nkb, cfg->d_v, M,
                                 cfg->vocab_size > 0 ? " or a shorter text" : "");
    }
    return true;
}

bool lesson_check_weights(const AttnConfig *cfg, int n_checkpoints, bool has_weights, const char *file, char *err,
                          size_t err_len)
{
    JsonCtx ctx = {file, err, err_len, false, false};
    const size_t one = attn_json_weight_floats(cfg); // (each factor is checked: no overflow)
    const size_t sets = (size_t)n_checkpoints + (has_weights || n_checkpoints == 0 ? 1 : 0);
    if (one > LESSON_MAX_WEIGHT_FLOATS)
        return jsonpath_fail(&ctx, "weights", "the model has %zu weights, over the budget of %u for all weights and "
                             "checkpoints together; expected a smaller model (fewer layers, heads or d_model)", one,
                             LESSON_MAX_WEIGHT_FLOATS);
    if (one * sets > LESSON_MAX_WEIGHT_FLOATS)
        return jsonpath_fail(&ctx, "checkpoints", "%d checkpoints%s of %zu weights each would need %zu, over the budget "
                             "of %u for all weights and checkpoints together; expected at most %zu checkpoints or a "
                             "smaller model", n_checkpoints, has_weights ? " and the weights" : "", one, one * sets,
                             LESSON_MAX_WEIGHT_FLOATS, LESSON_MAX_WEIGHT_FLOATS / one - (has_weights ? 1 : 0));
    return true;
}
