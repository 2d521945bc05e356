#!/usr/bin/python3
"""train_induction.py: trains a 2-layer attention-only transformer to continue repeated
random letters and writes the shipped lesson lessons/induction-heads.json.

    /usr/bin/python3 lessons/train_induction.py                 # writes lessons/induction-heads.json
    /usr/bin/python3 lessons/train_induction.py --out /tmp/x.json

The task: a training sequence is m random letters, then n distinct letters, then the same
n letters again and again (n from 2 to 7, m from 0 to 14 - 2n, all 14 + 1 tokens; every
letter before the repetition is distinct). The model predicts each next letter (loss on
every position). The repeated letters can be predicted only by looking back: find the
earlier copy of the current letter and read the letter after it. Because n and m change
from sequence to sequence, no fixed offset does it; the model learns the two-step
circuit of Olsson et al. (2022), "In-context learning and induction heads": a
previous-token head in layer 0 writes "the letter before me" into each position, and an
induction head in layer 1 matches the current letter against it.

The model: learned token and position embeddings (12 letters, 14 positions), 2 pre-norm
blocks of causal self-attention only (LayerNorm, 2 heads of d_k 8, d_model 16, no
feed-forward), a final LayerNorm and an untied unembedding. CPU, one thread, a fixed seed
and deterministic algorithms: running it twice writes byte-identical JSON
(tests/train_lessons_test.sh checks it under make test-full).

The lesson's input is the 12 letters "qkdmbxqkdmbx". The narration and the quiz are
written from the numbers the trained model gives on it, and the lesson is run again from
its own JSON by lessons/lesson_torch.py (trained.lesson_lm_forward) and compared with the model.
Documentation: lessons/README.md, section "Trained lessons".
"""

import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from from_torch import lesson_text  # noqa: E402  (the lessons' JSON text)
import trained  # noqa: E402  (the command line and the write, shared)

SEED = 3
VOCAB = list("abdgkmpqstxz")   # 12 letters; token id = index
V = len(VOCAB)
P = 14                         # learned positions = the training length
C, H, N_LAYERS = 16, 2, 2
D_K = C // H
EPS = 1e-5
FILL = -1e9
STEPS, BATCH, LR = 6000, 64, 3e-3
N_MIN, N_MAX = 2, 7            # length of the repeated block
TEXT = "qkdmbx" * 2            # the shipped input: 6 letters, then the same 6 again
PERIOD = 6
DEFAULT_OUT = os.path.join(HERE, "induction-heads.json")
# the weights kept for the training slider (attnviz's "checkpoints"): dense where the
# induction head forms, the last one the trained model; each with the loss on a fixed
# held-out batch (512 sequences of another generator)
CKPT_STEPS = [0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 600, 700, 800, 1000, 1500, 2000, 3000, 4500, 6000]
CKPT_BATCH = 512


# ----------------------------------------------------------------------------
# the model, with the lesson's names
# ----------------------------------------------------------------------------

def AttnOnly():
    return trained.TinyGPT(V, C, H, P, N_LAYERS, 0, EPS, FILL, pos_scale=0.5)


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------

def make_batch(gen, B):
    """B sequences of P + 1 tokens: m random letters, then a block of n letters repeated
    (every letter before the repetition distinct). Returns inputs (B, P), next tokens
    (B, P) and which next tokens can be found by copying (the current token has an
    earlier copy: position >= m + n)."""
    perm = torch.rand(B, V, generator=gen).argsort(dim=1)            # distinct letters a row
    n = torch.randint(N_MIN, N_MAX + 1, (B,), generator=gen)
    m = (torch.rand(B, generator=gen) * (P - 2 * n + 1).float()).floor().long()
    pos = torch.arange(P + 1)[None, :]
    m1, n1 = m[:, None], n[:, None]
    idx = torch.where(pos < m1, pos, m1 + (pos - m1) % n1)
    toks = perm.gather(1, idx)
    copyable = pos[:, :P] >= m1 + n1
    return toks[:, :P], toks[:, 1:], copyable


def checkpoint(model, step, held):
    """The weights as the lesson writes them, and the loss on the held-out batch."""
    x, y, _ = held
    with torch.no_grad():
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        # (for the log: layer 1's strongest weight on "the token after the earlier copy",
        # rows 6-11 of the shipped text, the best head)
        _, attns = model(torch.tensor([[VOCAB.index(ch) for ch in TEXT]]))
        a1 = attns[1][0]
        rows = range(PERIOD, len(TEXT))
        ind = max(float(sum(a1[h, i, i - PERIOD + 1] for i in rows)) / len(rows) for h in range(H))
    model.ckpt_log.append((step, float(loss), ind))
    return {"step": step, "loss": float(loss), "weights": trained.lm_weights(model)}


def train(log=print):
    torch.manual_seed(SEED)
    model = AttnOnly()
    gen = torch.Generator().manual_seed(SEED + 1)
    held = make_batch(torch.Generator().manual_seed(SEED + 3000), CKPT_BATCH)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    t0 = time.time()
    run_loss, run_acc, every = 0.0, 0.0, 500
    model.ckpt_log = []
    model.checkpoints = [checkpoint(model, 0, held)]
    for step in range(1, STEPS + 1):
        x, y, copyable = make_batch(gen, BATCH)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:     # cosine decay to 0
            g["lr"] = LR * 0.5 * (1 + math.cos(math.pi * step / STEPS))
        run_loss += loss.item()
        run_acc += (logits.argmax(-1) == y)[copyable].float().mean().item()
        if step in CKPT_STEPS:
            model.checkpoints.append(checkpoint(model, step, held))
        if step % every == 0:
            log("step %5d  loss %.3f  copyable accuracy %.3f  (%.0f s)"
                % (step, run_loss / every, run_acc / every, time.time() - t0))
            run_loss = run_acc = 0.0
    model.eval()
    with torch.no_grad():              # a held-out batch from another generator
        x, y, copyable = make_batch(torch.Generator().manual_seed(SEED + 2000), 4096)
        logits, _ = model(x)
        lp = torch.log_softmax(logits, -1).gather(-1, y[..., None])[..., 0]
        log("held out (4096 sequences): loss %.3f, copyable positions %.3f, others %.3f "
            "(chance ln 12 = %.3f); copyable accuracy %.4f"
            % (-lp.mean(), -lp[copyable].mean(), -lp[~copyable].mean(), math.log(V),
               (logits.argmax(-1) == y)[copyable].float().mean()))
    log("trained in %.0f s" % (time.time() - t0))
    for step, loss, ind in model.ckpt_log:
        log("checkpoint step %5d  held-out loss %.3f  induction weight (layer 1, best head) %.2f" % (step, loss, ind))
    return model


# ----------------------------------------------------------------------------
# the lesson, run from its own JSON
# ----------------------------------------------------------------------------


def measure(model):
    ids = torch.tensor([[VOCAB.index(ch) for ch in TEXT]])
    L = ids.shape[1]
    with torch.no_grad():
        logits, attns = model(ids)
        # layer 1's scaled scores (before the mask), for the induction head's narration
        x = model.embed(ids) + model.pos_embed[:L]
        x, _, _ = model.layers[0](x)
        blk = model.layers[1]
        nn1 = blk.norm(x)
        q = blk.w_q(nn1).view(1, L, H, D_K).transpose(1, 2)
        k = blk.w_k(nn1).view(1, L, H, D_K).transpose(1, 2)
        scores1 = q @ k.transpose(-2, -1) / math.sqrt(D_K)
    probs = torch.softmax(logits, -1)[0]
    nxt = [VOCAB.index(ch) for ch in (TEXT + TEXT[0])[1:]]     # the repetition continues
    p_ok = probs[torch.arange(L), nxt]
    a0, a1 = attns[0][0], attns[1][0]
    prev = [sum(float(a0[h, i, i - 1]) for i in range(1, L)) / (L - 1) for h in range(H)]
    ind_rows = range(PERIOD, L)
    ind = [sum(float(a1[h, i, i - PERIOD + 1]) for i in ind_rows) / len(ind_rows) for h in range(H)]
    ph, ih = max(range(H), key=lambda h: prev[h]), max(range(H), key=lambda h: ind[h])
    r = dict(probs=probs, p_ok=p_ok, a0=a0, a1=a1, scores1=scores1[0], prev=prev, ind=ind, ph=ph, ih=ih)
    r["prev_min"] = min(float(a0[ph, i, i - 1]) for i in range(1, L))
    r["prev_max"] = max(float(a0[ph, i, i - 1]) for i in range(1, L))
    r["prev_self"] = sum(float(a0[ph, i, i]) for i in range(1, L)) / (L - 1)
    r["other0_diag"] = sum(float(a0[1 - ph, i, i]) for i in range(L)) / L
    r["other0_prev"] = prev[1 - ph]
    r["ind_min"] = min(float(a1[ih, i, i - PERIOD + 1]) for i in ind_rows)
    r["sink"] = sum(float(a1[ih, i, 0]) for i in range(PERIOD)) / PERIOD
    r["sink_min"] = min(float(a1[ih, i, 0]) for i in range(PERIOD))
    r["other1_ind"] = ind[1 - ih]
    r["first"] = float(p_ok[: PERIOD - 1].mean())        # rows 0-4: the next letter is new
    r["at5"] = float(p_ok[PERIOD - 1])                   # row 5: will the text repeat?
    r["second"] = float(p_ok[PERIOD:].mean())            # rows 6-11: a copy exists
    r["second_min"] = float(p_ok[PERIOD:].min())
    r["argmax_ok"] = all(int(probs[i].argmax()) == nxt[i] for i in range(PERIOD, L))
    r["first_max"] = float(probs[: PERIOD].max())        # rows 0-5, any letter
    # the previous-token head on 256 other texts of the training kind (first 12 positions):
    # the same stripe whatever the letters
    x, _, _ = make_batch(torch.Generator().manual_seed(SEED + 3000), 256)
    with torch.no_grad():
        _, att = model(x[:, :L])
    r["prev_other_texts"] = float(torch.stack([att[0][:, ph, i, i - 1] for i in range(1, L)]).mean())
    r["prev_argmax_ok"] = all(int(a0[ph, i].argmax()) == i - 1 for i in range(1, L))
    return r


def report(r, log=print):
    log("layer 0: mean weight on the previous token, by head: %s -> previous-token head %d "
        "(rows 1-11 from %.2f to %.2f, on itself %.2f)"
        % (", ".join("%.3f" % v for v in r["prev"]), r["ph"], r["prev_min"], r["prev_max"], r["prev_self"]))
    log("layer 0, head %d on 256 other texts of the training kind: %.3f on the previous token"
        % (r["ph"], r["prev_other_texts"]))
    log("layer 1: mean weight of rows 6-11 on the token after the earlier copy (key i-5), by head: %s "
        "-> induction head %d (min %.2f); its rows 0-5 on key 0: %.2f"
        % (", ".join("%.3f" % v for v in r["ind"]), r["ih"], r["ind_min"], r["sink"]))
    log("p(correct next letter) by row: %s" % " ".join("%.2f" % v for v in r["p_ok"].tolist()))
    log("first half (rows 0-4) mean %.3f, row 5 %.3f, second half (rows 6-11) mean %.3f (min %.3f)"
        % (r["first"], r["at5"], r["second"], r["second_min"]))


# ----------------------------------------------------------------------------
# narration, written from the measurements
# ----------------------------------------------------------------------------

def f2(x):
    """Two decimals, with a real minus sign as the other lessons write it."""
    return ("%.2f" % float(x)).replace("-", "\u2212")


def texts(r):
    """title, description, steps, notes and quiz from the measured numbers."""
    ph, ih, oh0, oh1 = r["ph"], r["ih"], 1 - r["ph"], 1 - r["ih"]
    a0, a1, s1, probs = r["a0"], r["a1"], r["scores1"], r["probs"]
    im = VOCAB.index("m")
    w_dm = f2(a0[ph, 3, 2])            # layer 0, row 3 ("m") on key 2 ("d")
    w_ind8 = f2(a1[ih, 8, 3])          # layer 1, row 8 (second "d") on key 3 ("m")
    row8 = s1[ih, 8, :9]
    s_83 = f2(row8[3])
    j_next = max((j for j in range(9) if j != 3), key=lambda j: float(row8[j]))
    s_next = f2(row8[j_next])
    s_84 = f2(s1[ih, 8, 2])            # key 2: the first "d" itself
    p8 = f2(probs[8, im])
    p2 = f2(probs[2, im])
    prev, ind = f2(r["prev"][ph]), f2(r["ind"][ih])
    first, second, at5 = f2(r["first"]), f2(r["second"]), f2(r["at5"])
    if r["second_min"] >= 0.995:
        second_en = "1.00 each, to two decimals"
        second_zh = "每一行都是 1.00（保留两位小数）"
    else:
        second_en = "%s on average (at least %s)" % (second, f2(r["second_min"]))
        second_zh = "平均 %s（最少 %s）" % (second, f2(r["second_min"]))

    title = {"en": "Induction heads: a trained 2-layer model copies a repeated text",
             "zh": "归纳头：训练好的两层模型复制重复的文本"}
    description = {
        "en": "A 2-layer attention-only transformer (d_model 16, 2 heads a layer, learned positions, no "
              "feed-forward) trained by lessons/train_induction.py on random letters that repeat. On "
              "“qkdmbxqkdmbx” it finds the two-step circuit of Olsson et al. (2022): a previous-token "
              "head in layer 0 (head %d) and an induction head in layer 1 (head %d). Before the repetition the "
              "correct next letter gets %s on average (chance: 0.08); from the second “q” on, %s."
              % (ph, ih, first, second),
        "zh": "一个两层、只有注意力的 Transformer（d_model 16，每层 2 个头，学习到的位置编码，没有前馈网络），"
              "由 lessons/train_induction.py 在会重复的随机字母上训练。在“qkdmbxqkdmbx”上它形成了 "
              "Olsson 等人（2022）描述的两步电路：第 0 层的前一词元头（头 %d）和第 1 层的归纳头（头 %d）。"
              "重复开始之前，正确的下一个字母平均只得到 %s（瞎猜：0.08）；从第二个“q”起，平均 %s。"
              % (ph, ih, first, second)}

    steps = {
        "input": {
            "en": "Twelve characters, one token each: “qkdmbx” and then the same six letters again. The "
                  "vocabulary is 12 letters (a b d g k m p q s t x z), so guessing gives 1/12 = 0.08. "
                  "The model was trained only on such texts: random letters, then a block that repeats. "
                  "It reads left to right (causal mask) and at every position predicts the next letter.",
            "zh": "十二个字符，每个字符一个词元：“qkdmbx”，然后同样的六个字母再来一遍。词表是 12 个字母"
                  "（a b d g k m p q s t x z），所以瞎猜的概率是 1/12 = 0.08。模型只在这样的文本上训练过："
                  "随机字母，然后一段重复的字母。它从左往右读（因果掩码），在每个位置预测下一个字母。"},
        "token_embed": {
            "en": "Each letter's row of the learned table embed (12 × 16): both “d”s (rows 2 and 8) get "
                  "exactly the same 16 numbers. Nothing here says where a letter stands.",
            "zh": "每个字母取学习到的 embed 表（12 × 16）中的一行：两个“d”（第 2 行和第 8 行）得到完全相同的"
                  " 16 个数。这里没有任何关于字母位置的信息。"},
        "pos_embed": {
            "en": "One learned row per position (the table has 14, for the training length; the text uses "
                  "0–11). This is the only place the model learns where a token stands — the "
                  "previous-token head in layer 0 is built on these rows.",
            "zh": "每个位置一行学习到的向量（表中有 14 行，对应训练长度；这段文本用到 0–11）。模型只能在这里"
                  "得知词元的位置——第 0 层的前一词元头正是建立在这些行之上。"},
        "embedding": {
            "en": "x = token row + position row. Now the two “d”s differ: same letter, different position.",
            "zh": "x = 词元行 + 位置行。现在两个“d”不同了：字母相同，位置不同。"},
        "mask": {
            "en": "Causal: row i sees keys 0…i. Row 8 (the second “d”) can look back at the first “d” "
                  "(key 2) and at the letter after it, “m” (key 3) — that is all it needs.",
            "zh": "因果掩码：第 i 行能看到键 0…i。第 8 行（第二个“d”）可以回看第一个“d”（键 2）和它后面的"
                  "“m”（键 3）——这正是它需要的。"},
        "norm": {
            "en": "Pre-norm: each layer's attention reads LayerNorm(x)·γ + β, while x itself goes around "
                  "it and gets the attention's output added. A final LayerNorm comes before the logits.",
            "zh": "前置归一化：每层注意力读的是 LayerNorm(x)·γ + β，而 x 本身绕过注意力，再加上注意力的输出。"
                  "计算 logits 之前还有一个最终的 LayerNorm。"},
        "projection": {
            "en": "Q, K and V come from the normalised rows (d_model 16 → 2 heads × 8). In layer 1 the "
                  "rows already hold what layer 0 wrote into them, so a key can say “the letter before "
                  "me was d”.",
            "zh": "Q、K、V 由归一化后的行算出（d_model 16 → 2 个头 × 8）。在第 1 层，这些行里已经有第 0 层"
                  "写进去的信息，所以一个键可以表达“我前面的字母是 d”。"},
        "split": {
            "en": "16 columns become 2 heads of 8. The two heads of a layer learned different jobs; the "
                  "attention stage shows which.",
            "zh": "16 列分成 2 个头，每个 8 列。同一层的两个头学会了不同的工作；注意力阶段会显示是哪一个。"},
        "scores": {
            "en": "Q·Kᵀ / √8 for every pair of positions, in each head. High scores mark what a query "
                  "looks for.",
            "zh": "每个头里，每对位置的 Q·Kᵀ / √8。分数高表示查询在找的东西。"},
        "l1.scores": {
            "en": "Layer 1, head %d, row 8 (the second “d”): key 3 (“m”) scores %s; the next best is key %d "
                  "(“%s”) with %s. Key 2, the first “d” itself, scores only %s: the head does not look for "
                  "the same letter, it looks for the position whose previous letter is “d”."
                  % (ih, s_83, j_next, TEXT[j_next], s_next, s_84),
            "zh": "第 1 层头 %d，第 8 行（第二个“d”）：键 3（“m”）的分数是 %s；其次是键 %d（“%s”），%s。"
                  "键 2，即第一个“d”本身，只有 %s：这个头找的不是同一个字母，而是前一个字母为“d”的位置。"
                  % (ih, s_83, j_next, TEXT[j_next], s_next, s_84),
            "head": ih},
        "softmax": {
            "en": "Each row of scores becomes weights that sum to 1; a lead of a few points in the scores "
                  "becomes nearly all of the weight.",
            "zh": "每行分数变成和为 1 的权重；分数上领先几分，就几乎拿走全部权重。"},
        "l0.attn": {
            "en": "Layer 0, head %d is the previous-token head: in every row i from 1 to 11 its largest "
                  "weight is on key i − 1, on average %s (from %s to %s), and %s on itself. Row 3 (“m”) "
                  "gives %s to key 2 (“d”). The letters do not matter: on 256 other texts of the training "
                  "kind the same stripe averages %s, so it is built from the position rows. Head %d does "
                  "another job: on average %s on the diagonal, the token itself, and only %s on i − 1."
                  % (ph, prev, f2(r["prev_min"]), f2(r["prev_max"]), f2(r["prev_self"]), w_dm,
                     f2(r["prev_other_texts"]), oh0, f2(r["other0_diag"]), f2(r["other0_prev"])),
            "zh": "第 0 层的头 %d 是前一词元头：从第 1 行到第 11 行，每一行 i 的最大权重都在键 i − 1 上，平均 %s"
                  "（从 %s 到 %s），放在自己身上的平均 %s。第 3 行（“m”）给键 2（“d”）%s。字母是什么无关紧要："
                  "在另外 256 段训练类型的文本上，这条带平均为 %s，所以它是由位置行构成的。头 %d 做的是别的事："
                  "平均把 %s 放在对角线上，即词元自己，在 i − 1 上只有 %s。"
                  % (ph, prev, f2(r["prev_min"]), f2(r["prev_max"]), f2(r["prev_self"]), w_dm,
                     f2(r["prev_other_texts"]), oh0, f2(r["other0_diag"]), f2(r["other0_prev"])),
            "head": ph},
        "l0.weighted_sum": {
            "en": "attn·V: each row takes the values of the keys it attends to. In layer 0's head %d, "
                  "row 3 (“m”) mostly takes the value of “d”: after this layer, position 3 carries "
                  "“the letter before me was d”."
                  % ph,
            "zh": "attn·V：每行取它所关注的键的值。在第 0 层的头 %d 中，第 3 行（“m”）主要取“d”的值：这一层"
                  "之后，位置 3 带着“我前面的字母是 d”这一信息。" % ph,
            "head": ph},
        "l1.weighted_sum": {
            "en": "attn·V in layer 1: each row takes the values of the keys it attends to. The induction "
                  "head's rows 6–11 take the value of the key after the earlier copy: what came next last time.",
            "zh": "第 1 层的 attn·V：每行取它所关注的键的值。归纳头的第 6–11 行取的是前一次出现之后那个键的值："
                  "上次接下来是什么。",
            "head": ih},
        "concat": {
            "en": "The two heads' 8 columns side by side again: 16 columns.",
            "zh": "两个头的 8 列重新并排：16 列。"},
        "output": {
            "en": "W_O mixes the heads back into d_model 16: this is what the layer adds to x.",
            "zh": "W_O 把各个头混合回 d_model 16：这就是这一层要加到 x 上的东西。"},
        "add_norm": {
            "en": "x + output: the residual stream keeps the token and its position and gains what the "
                  "layer found. There is no feed-forward block; layer 1 reads this sum.",
            "zh": "x + 输出：残差流保留词元和它的位置，并加上这一层找到的信息。没有前馈网络；第 1 层读的就是"
                  "这个和。"},
        "l1.attn": {
            "en": "Layer 1, head %d is the induction head. Row 8 (the second “d”) puts %s on key 3 (“m”), "
                  "the letter that followed “d” before. Rows 6–11 put on average %s on key i − 5, the "
                  "token after the earlier copy (at least %s). Rows 0–5 have no earlier copy and rest on "
                  "key 0 (%s on average). Head %d does not copy: only %s on key i − 5 in rows 6–11, on average."
                  % (ih, w_ind8, ind, f2(r["ind_min"]), f2(r["sink"]), oh1, f2(r["other1_ind"])),
            "zh": "第 1 层的头 %d 是归纳头。第 8 行（第二个“d”）把 %s 放在键 3（“m”）上，也就是之前跟在“d”"
                  "后面的字母。第 6–11 行平均把 %s 放在键 i − 5 上，即前一次出现之后的那个词元（最少 %s）。"
                  "第 0–5 行没有更早的副本，就停在键 0 上（平均 %s）。头 %d 不复制：第 6–11 行在键 i − 5 上平均只有 "
                  "%s。"
                  % (ih, w_ind8, ind, f2(r["ind_min"]), f2(r["sink"]), oh1, f2(r["other1_ind"])),
            "head": ih},
        "final_norm": {
            "en": "The final LayerNorm before the unembedding, as in GPT-2.",
            "zh": "反嵌入之前的最终 LayerNorm，与 GPT-2 相同。"},
        "logits": {
            "en": "One score per letter of the vocabulary at each position: x · lm_headᵀ (12 × 16, no bias).",
            "zh": "每个位置对词表中每个字母各有一个分数：x · lm_headᵀ（12 × 16，没有偏置）。"},
        "probs": {
            "en": "Softmax over the 12 letters. Rows 0–4, where the next letter is new, give the correct "
                  "one %s on average (chance is 0.08). Row 5 cannot know the text will repeat: %s for "
                  "“q”. No row from 0 to 5 gives any letter more than %s. Rows 6–11 give the correct "
                  "next letter %s, row 11 included: after “x” comes “q” again. Row 8 gives “m” %s; "
                  "row 2, the first “d”, only %s."
                  % (first, at5, f2(r["first_max"]), second_en, p8, p2),
            "zh": "对 12 个字母做 softmax。第 0–4 行的下一个字母是新的，正确字母的概率平均 %s（瞎猜是 0.08）。"
                  "第 5 行无法知道文本会重复：“q”只有 %s。第 0 到 5 行没有哪一行给任何字母超过 %s。第 6–11 行"
                  "给正确的下一个字母的概率%s，第 11 行也一样：“x”之后又是“q”。第 8 行给“m” %s；第 2 行，"
                  "即第一个“d”，只有 %s。"
                  % (first, at5, f2(r["first_max"]), second_zh, p8, p2)},
    }

    notes = {
        "input": {
            "en": "Ask the room to predict each next letter aloud. They fail on the first six and get "
                  "the last six right — and so will the model. Ask how they did it.",
            "zh": "让学生大声预测每个下一个字母。前六个猜不中，后六个全对——模型也一样。问他们是怎么做到的。"},
        "token_embed": {
            "en": "Point at rows 2 and 8: identical. Attention will have to tell them apart.",
            "zh": "指出第 2 行和第 8 行：完全相同。注意力必须把它们区分开。"},
        "pos_embed": {
            "en": "Ask: without these rows, could any head find “the token just before me”? (No: "
                  "attention alone does not know order.)",
            "zh": "提问：没有这些行，还有哪个头能找到“紧挨在我前面的词元”吗？（不能：注意力本身不知道顺序。）"},
        "embedding": {
            "en": "Compare rows 2 and 8 again: now they differ by the position rows only.",
            "zh": "再比较第 2 行和第 8 行：现在它们只差位置行。"},
        "mask": {
            "en": "Ask which keys row 8 needs for its prediction (2 and 3) and check the mask allows them.",
            "zh": "问第 8 行做预测需要哪些键（2 和 3），并检查掩码允许看到它们。"},
        "norm": {
            "en": "Remind: pre-norm, as GPT-2. The residual x is never normalised until the final norm.",
            "zh": "提醒：前置归一化，和 GPT-2 一样。残差 x 直到最终归一化之前都不做归一化。"},
        "projection": {
            "en": "In layer 1, ask what the key at position 3 can “know” that the raw embedding of “m” "
                  "did not (its previous letter, from layer 0).",
            "zh": "在第 1 层，问位置 3 的键能“知道”什么原始“m”嵌入不知道的东西（它前面的字母，来自第 0 层）。"},
        "split": {
            "en": "Ask the class to guess, before the attention stage, whether both heads will do the "
                  "same thing.",
            "zh": "在看注意力阶段之前，让学生猜两个头会不会做同样的事。"},
        "scores": {
            "en": "Hover a score to show the dot product; the scale is √8 = 2.83.",
            "zh": "悬停一个分数，展示点积；缩放因子是 √8 = 2.83。"},
        "l1.scores": {
            "en": "Put keys 2 and 3 of row 8 side by side: the same letter scores low, the letter after "
                  "it high. This is K-composition: the key was built from layer 0's output.",
            "zh": "把第 8 行的键 2 和键 3 放在一起比较：同一个字母分数低，它后面的字母分数高。这就是 K 组合："
                  "键是由第 0 层的输出构成的。"},
        "softmax": {
            "en": "Ask what happens to a row whose best score leads by 5 (e^5 ≈ 150: almost all weight).",
            "zh": "问：一行中最高分领先 5 会怎样（e^5 ≈ 150：几乎全部权重）。"},
        "l0.attn": {
            "en": "Trace the stripe just below the diagonal in head %d. Ask why a model that must copy "
                  "text needs it. Switch to head %d for contrast."
                  % (ph, oh0),
            "zh": "沿着头 %d 对角线正下方的那条带指一遍。问一个要复制文本的模型为什么需要它。切换到头 %d 对比。"
                  % (ph, oh0)},
        "l0.weighted_sum": {
            "en": "Say it in words: “position 3 now remembers d”. Ask where that will be used (layer 1's keys).",
            "zh": "用话说出来：“位置 3 现在记住了 d”。问这会在哪里用到（第 1 层的键）。"},
        "l1.weighted_sum": {
            "en": "Point at rows 6–11: each copies the value of the letter that followed last time; the "
                  "logits turn it into the prediction.",
            "zh": "指着第 6–11 行：每一行都复制了上次跟在后面的那个字母的值；logits 把它变成预测。"},
        "concat": {
            "en": "Nothing new is computed here; it is bookkeeping.",
            "zh": "这里没有新的计算，只是整理。"},
        "output": {
            "en": "Ask how layer 1 can read head %d's result separately (W_O writes it into its own "
                  "directions of the residual stream)." % ph,
            "zh": "问第 1 层怎样能单独读到头 %d 的结果（W_O 把它写进残差流中自己的方向）。" % ph},
        "add_norm": {
            "en": "Point out that x + output keeps the original token: layer 1's query still knows "
                  "“I am d” while its key side knows “I follow d”.",
            "zh": "指出 x + 输出保留了原来的词元：第 1 层的查询仍然知道“我是 d”，而键一侧知道“我跟在 d 后面”。"},
        "l1.attn": {
            "en": "Draw the shifted diagonal of head %d from row 6 down: each row looks 5 back, one "
                  "after the earlier copy. Ask why not 6 back (that is the same letter, not the next). "
                  "Rows 0–5 park on key 0 when nothing matches." % ih,
            "zh": "从第 6 行往下画出头 %d 的错位对角线：每行往回看 5 个，即前一次出现之后的那一个。问为什么不是"
                  "往回看 6 个（那是同一个字母，不是下一个）。第 0–5 行找不到匹配时就停在键 0 上。" % ih},
        "final_norm": {
            "en": "Quick stage; no question needed.",
            "zh": "过渡阶段，不需要提问。"},
        "logits": {
            "en": "Ask which column should be largest in row 8 (“m”) and check.",
            "zh": "问第 8 行哪一列应该最大（“m”），然后验证。"},
        "probs": {
            "en": "Compare rows 2 and 8: same letter “d”, a flat row before, a certain one after. The "
                  "difference is all in context — in-context learning in its simplest form.",
            "zh": "比较第 2 行和第 8 行：同样是字母“d”，前者平坦，后者确定。差别全在上下文中——这是最简单形式"
                  "的上下文学习。"},
    }

    quiz = [
        {"id": "previous-token", "stage": "l0.attn", "batch": 0, "head": ph, "cell": [3],
         "question": {"en": "Layer 0, head %d, row 3 (“m”): which key gets the most weight?" % ph,
                      "zh": "第 0 层头 %d，第 3 行（“m”）：哪个键得到的权重最多？" % ph},
         "answer": 2,
         "explanation": {"en": "Key 2, “d”, with %s: the token just before. This head does that in every row."
                               % w_dm,
                         "zh": "键 2，“d”，%s：紧挨在前面的词元。这个头在每一行都这样做。" % w_dm}},
        {"id": "induction", "stage": "l1.attn", "batch": 0, "head": ih, "cell": [8],
         "question": {"en": "Layer 1, head %d, row 8 (the second “d”): which key gets the most weight?" % ih,
                      "zh": "第 1 层头 %d，第 8 行（第二个“d”）：哪个键得到的权重最多？" % ih},
         "answer": 3,
         "explanation": {"en": "Key 3, “m”, with %s: the letter after the first “d”, the one to predict next."
                               % w_ind8,
                         "zh": "键 3，“m”，%s：第一个“d”后面的字母，也就是接下来要预测的字母。" % w_ind8}},
    ]
    return title, description, steps, notes, quiz


def build_lesson(model, r):
    title, description, steps, notes, quiz = texts(r)
    return {
        "title": title,
        "description": description,
        "vocab": VOCAB,
        "tokenizer": "char",
        "model": {"n_layers": N_LAYERS, "d_model": C, "n_heads": H, "norm_first": True,
                  "residual_norm": True, "ffn_hidden": 0, "positions": "learned", "max_positions": P,
                  "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": EPS},
        "input": {"text": TEXT},
        "mask": "causal",
        # the data of make_batch for attnviz --train (lessons/README.md, "Training")
        "task": {"kind": "induction", "length": P, "batch": BATCH, "seed": SEED + 1},
        "weights": trained.lm_weights(model),
        "checkpoints": model.checkpoints,
        "steps": steps,
        "notes": notes,
        "quiz": quiz,
    }


def check(lesson, model, r):
    """The claims the narration makes, and the lesson run from its own JSON text."""
    problems = []
    if r["prev"][r["ph"]] < 0.6 or r["prev_min"] < 0.4 or not r["prev_argmax_ok"] \
            or abs(r["prev_other_texts"] - r["prev"][r["ph"]]) > 0.1:
        problems.append("no clear previous-token head in layer 0")
    if r["ind"][r["ih"]] < 0.9 or r["ind_min"] < 0.8 or r["other1_ind"] > 0.3 or r["sink_min"] < 0.9:
        problems.append("no single clear induction head in layer 1")
    if r["second"] < 0.9 or r["first"] > 0.2 or not r["argmax_ok"]:
        problems.append("the second half is not predicted")
    a0, a1 = r["a0"], r["a1"]
    if int(a0[r["ph"], 3].argmax()) != 2 or int(a1[r["ih"], 8].argmax()) != 3:
        problems.append("the quiz answers do not hold")
    problems += trained.text_problems(lesson)
    got = trained.lesson_lm_forward(json.loads(lesson_text(lesson)))
    ids = torch.tensor([[VOCAB.index(ch) for ch in TEXT]])
    with torch.no_grad():
        logits, attns = model(ids)
    diffs = [float((got["probs"] - torch.softmax(logits, -1)).abs().max())]
    diffs += [float((g - a).abs().max()) for g, a in zip(got["attn"], attns)]
    if max(diffs) > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % max(diffs))
    return problems, max(diffs)


def make(log):
    log("training %d steps of %d sequences, seed %d (torch %s)" % (STEPS, BATCH, SEED, torch.__version__))
    model = train(log)
    r = measure(model)
    report(r, log)
    lesson = build_lesson(model, r)
    problems, diff = check(lesson, model, r)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_induction.py", "Train the induction-heads model and write its lesson.", DEFAULT_OUT,
                       make, argv)


if __name__ == "__main__":
    sys.exit(main())
