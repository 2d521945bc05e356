#!/usr/bin/python3
"""train_textbook.py: trains a one-layer attention-only transformer to reverse six letters
and writes the shipped lesson lessons/reversal-anti-diagonal.json.

    /usr/bin/python3 lessons/train_textbook.py                 # writes lessons/reversal-anti-diagonal.json
    /usr/bin/python3 lessons/train_textbook.py --out /tmp/x.json

The task (a textbook one, chosen because its learned attention is a shape anyone can
read): a training text is six random letters (repeats allowed), a separator "|", the same
six letters reversed and "|" again, as "stream|maerts|". The model reads the first 13
tokens and predicts each next one (loss on every position). Before the first "|" the next
letter is random and cannot be predicted; after it, the letter that follows position i
(position i + 1) is a copy of the one at 11 - i, its mirror image about the "|" at 6. Since the letters are
random and may repeat, only the position tells where to look: the model learns a head
whose weights lie on the anti-diagonal of the heatmap, rows 6-11.

The model: learned token and position embeddings (11 letters and "|", 13 positions), one
pre-norm block of causal self-attention only (LayerNorm, 2 heads of d_k 8, d_model 16, no
feed-forward), a final LayerNorm and an untied unembedding. CPU, one thread, a fixed seed
and deterministic algorithms: running it twice writes byte-identical JSON
(tests/train_lessons_test.sh checks it under make test-full).

The lesson's input is "stream|maerts". The narration and the quiz are written from the
numbers the trained model gives on it and on held-out random texts; the script writes
nothing if a claim does not hold. The lesson is run again from its own JSON by
lessons/lesson_torch.py (trained.lesson_lm_forward) and compared with the model.
Documentation: lessons/README.md, section "Trained lessons".
"""

import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from from_torch import lesson_text  # noqa: E402  (the lessons' JSON text)
import trained  # noqa: E402  (the command line and the write, shared)

SEED = 3
LETTERS = list("adeilmnorst")  # 11 letters
VOCAB = LETTERS + ["|"]        # token id = index; "|" is the separator (and the end)
V = len(VOCAB)
SEP = VOCAB.index("|")
N = 6                          # letters to reverse
P = 2 * N + 1                  # learned positions: the model reads 13 tokens
C, H = 16, 2
D_K = C // H
EPS = 1e-5
FILL = -1e9
STEPS, BATCH, LR = 3000, 64, 3e-3
WORD = "stream"
TEXT = WORD + "|" + WORD[::-1]  # the shipped input, 13 tokens
ROWS = range(N, 2 * N)          # the rows that copy a letter: row i reads key 2N - 1 - i
DEFAULT_OUT = os.path.join(HERE, "reversal-anti-diagonal.json")


def mirror(i):
    """The key row i must read: the position whose letter comes next."""
    return 2 * N - 1 - i


# ----------------------------------------------------------------------------
# the model, with the lesson's names
# ----------------------------------------------------------------------------

class Reverser(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, C)
        self.pos_embed = nn.Parameter(0.5 * torch.randn(P, C))
        self.block = trained.Block(C, H, EPS, FILL)
        self.final_norm = nn.LayerNorm(C, eps=EPS)
        self.lm_head = nn.Linear(C, V, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.pos_embed[: ids.shape[1]]
        x, attn, scores = self.block(x)
        return self.lm_head(self.final_norm(x)), attn, scores


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------

def make_batch(gen, B):
    """B texts of 2N + 2 tokens: N random letters (repeats allowed), "|", the letters
    reversed, "|". Returns the inputs (B, 2N + 1) and the next tokens (B, 2N + 1)."""
    letters = torch.randint(0, len(LETTERS), (B, N), generator=gen)
    sep = torch.full((B, 1), SEP)
    t = torch.cat([letters, sep, letters.flip(1), sep], dim=1)
    return t[:, :-1], t[:, 1:]


def train(log=print):
    torch.manual_seed(SEED)
    model = Reverser()
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    t0 = time.time()
    run_loss, run_acc, every = 0.0, 0.0, 500
    for step in range(1, STEPS + 1):
        x, y = make_batch(gen, BATCH)
        logits, _, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:     # cosine decay to 0
            g["lr"] = LR * 0.5 * (1 + math.cos(math.pi * step / STEPS))
        run_loss += loss.item()
        run_acc += (logits[:, N:].argmax(-1) == y[:, N:]).float().mean().item()
        if step % every == 0:
            log("step %5d  loss %.3f  accuracy from the separator on %.3f  (%.0f s)"
                % (step, run_loss / every, run_acc / every, time.time() - t0))
            run_loss = run_acc = 0.0
    model.eval()
    log("trained in %.0f s" % (time.time() - t0))
    return model


# ----------------------------------------------------------------------------
# the lesson, run from its own JSON
# ----------------------------------------------------------------------------


def ids_of(text):
    return torch.tensor([[VOCAB.index(ch) for ch in text]])


def measure(model):
    ids = ids_of(TEXT)
    L = ids.shape[1]
    with torch.no_grad():
        logits, attn, scores = model(ids)
    probs = torch.softmax(logits, -1)[0]
    a, s = attn[0], scores[0]
    nxt = [VOCAB.index(ch) for ch in TEXT[1:]] + [SEP]   # the text ends with "|" again
    p_ok = probs[torch.arange(L), nxt]
    r = dict(probs=probs, a=a, s=s, p_ok=p_ok, nxt=nxt)
    # per head: the weight each of rows 6-11 puts on its mirror key
    mir = [[float(a[h, i, mirror(i)]) for i in ROWS] for h in range(H)]
    rh = max(range(H), key=lambda h: sum(mir[h]))
    oh = 1 - rh
    r.update(rh=rh, oh=oh, mir=mir[rh], mir_mean=sum(mir[rh]) / N, mir_min=min(mir[rh]),
             other_mir=sum(mir[oh]) / N,
             other_max=max(float(a[oh, i].max()) for i in ROWS),
             mir_argmax=all(int(a[rh, i].argmax()) == mirror(i) for i in ROWS),
             rest0=sum(float(a[rh, i, 0]) for i in range(N - 1)) / (N - 1),
             row5=float(a[rh, N - 1, N - 2]), row5_argmax=int(a[rh, N - 1].argmax()))
    # the scores of the reversal head in row 6 ("|"): the mirror key against the others
    row = s[rh, N, : N + 1]
    second = max((j for j in range(N + 1) if j != mirror(N)), key=lambda j: float(row[j]))
    r.update(s_mirror=float(row[mirror(N)]), s_second=float(row[second]), s_second_j=second)
    # the predictions on the shipped text
    r["first"] = float(p_ok[: N - 1].mean())                 # rows 0-4: a random next letter
    r["first_max"] = float(probs[: N - 1].max())             # ... any token
    r["sep5"] = float(probs[N - 1, SEP])                     # row 5: "|" after six letters
    r["copy"] = [float(p_ok[i]) for i in ROWS]               # rows 6-11: the mirrored letter
    r["copy_min"] = min(r["copy"])
    r["end"] = float(probs[2 * N, SEP])                      # row 12: "|", the end
    r["shipped_ok"] = all(int(probs[i].argmax()) == nxt[i] for i in range(N - 1, L))
    # held-out texts, from a generator training never used
    x, y = make_batch(torch.Generator().manual_seed(SEED + 2000), 4096)
    with torch.no_grad():
        lg, at, _ = model(x)
    hit = lg.argmax(-1) == y
    r["held_pos"] = float(hit[:, N - 1:].float().mean())     # rows 5-12, every graded row
    r["held_seq"] = float(hit[:, N - 1:].all(1).float().mean())
    r["held_first"] = float(torch.softmax(lg, -1)[:, : N - 1].max())
    heldmir = torch.stack([at[:, rh, i, mirror(i)] for i in ROWS], 1)     # (4096, 6)
    r["held_mir"] = float(heldmir.mean())
    r["held_mir_min"] = float(heldmir.min())
    r["held_argmax"] = float(torch.stack([at[:, rh, i].argmax(-1) == mirror(i) for i in ROWS], 1)
                             .float().mean())
    r["held_other_mir"] = float(torch.stack([at[:, oh, i, mirror(i)] for i in ROWS]).mean())
    # one letter six times: the letters cannot tell the positions apart, the head still can
    with torch.no_grad():
        _, at1, _ = model(ids_of("eeeeee|eeeeee"))
    r["same_mir"] = min(float(at1[0, rh, i, mirror(i)]) for i in ROWS)
    return r


def report(r, log=print):
    log("rows 6-11, weight on the mirror key 11 - i, head 0 / head 1: %s / %s"
        % (" ".join("%.3f" % float(r["a"][0, i, mirror(i)]) for i in ROWS),
           " ".join("%.3f" % float(r["a"][1, i, mirror(i)]) for i in ROWS)))
    log("reversal head %d: mean %.3f, min %.3f on the shipped text; held out (4096 texts) mean %.3f, "
        "min %.3f, argmax on the mirror %.4f; on \"eeeeee|eeeeee\" min %.3f; head %d on the mirror %.3f "
        "(held out %.3f), its largest weight in rows 6-11 %.2f"
        % (r["rh"], r["mir_mean"], r["mir_min"], r["held_mir"], r["held_mir_min"], r["held_argmax"],
           r["same_mir"], r["oh"], r["other_mir"], r["held_other_mir"], r["other_max"]))
    log("head %d: rows 0-4 on key 0 %.3f on average; row 5 on key 4 %.3f"
        % (r["rh"], r["rest0"], r["row5"]))
    log("row 6 scores (head %d): key %d %.2f, next best key %d %.2f"
        % (r["rh"], mirror(N), r["s_mirror"], r["s_second_j"], r["s_second"]))
    log("p(correct next token) by row: %s" % " ".join("%.2f" % v for v in r["p_ok"].tolist()))
    log("rows 0-4 mean %.3f (max of any token %.3f), row 5 p(|) %.3f, rows 6-11 min %.3f, row 12 p(|) %.3f"
        % (r["first"], r["first_max"], r["sep5"], r["copy_min"], r["end"]))
    log("held out (4096 texts): rows 5-12 accuracy %.4f, whole texts %.4f; rows 0-4 max p %.3f"
        % (r["held_pos"], r["held_seq"], r["held_first"]))


# ----------------------------------------------------------------------------
# narration, written from the measurements
# ----------------------------------------------------------------------------

def f2(x):
    """Two decimals, with a real minus sign as the other lessons write it."""
    return ("%.2f" % float(x)).replace("-", "\u2212")


def texts(r):
    """title, description, steps, notes and quiz from the measured numbers."""
    rh, oh, a, probs = r["rh"], r["oh"], r["a"], r["probs"]
    mean, lo = f2(r["mir_mean"]), f2(r["mir_min"])
    held = f2(r["held_mir"])
    w83 = f2(a[rh, 8, 3])                 # row 8 ("a") on key 3 ("e")
    p8 = f2(probs[8, VOCAB.index("e")])
    if r["copy_min"] >= 0.995:
        copy_en, copy_zh = "1.00 each, to two decimals", "都是 1.00（两位小数）"
    else:
        copy_en, copy_zh = "at least %s" % f2(r["copy_min"]), "至少 %s" % f2(r["copy_min"])
    first, first_max, sep5, end = f2(r["first"]), f2(r["first_max"]), f2(r["sep5"]), f2(r["end"])
    sm, ss, sj = f2(r["s_mirror"]), f2(r["s_second"]), r["s_second_j"]

    title = {"en": "Reversal: a trained model reads the anti-diagonal",
             "zh": "倒序：训练好的模型沿反对角线读取"}
    description = {
        "en": "A one-layer attention-only transformer (d_model 16, 2 heads, learned positions, no "
              "feed-forward) trained by lessons/train_textbook.py to write six letters backwards after "
              "a “|”. On “stream|maerts” head %d puts %s on average on the mirrored letter (at least %s): "
              "an anti-diagonal. It writes every reversed letter of 4096 held-out random texts correctly."
              % (rh, mean, lo),
        "zh": "一个单层、只有注意力的 Transformer（d_model 16，2 个头，学习到的位置编码，没有前馈网络），"
              "由 lessons/train_textbook.py 训练：在“|”之后把六个字母倒着写出来。在“stream|maerts”上，"
              "头 %d 平均把 %s 的权重放在镜像位置的字母上（最少 %s）：一条反对角线。4096 段没见过的随机文本，"
              "它倒写的每个字母都对。"
              % (rh, mean, lo)}

    steps = {
        "input": {
            "en": "Thirteen characters, one token each: “stream”, the separator “|”, and “stream” "
                  "backwards. The vocabulary is 11 letters (a d e i l m n o r s t) and “|”. The model "
                  "was trained only on such texts — six random letters, repeats allowed, then “|”, "
                  "the same letters reversed and a closing “|” — reading left to right (causal mask) and "
                  "predicting the next token at every position.",
            "zh": "十三个字符，每个字符一个词元：“stream”、分隔符“|”，以及倒过来的“stream”。词表是 11 个"
                  "字母（a d e i l m n o r s t）加上“|”。模型只在这样的文本上训练过——六个随机字母（可以"
                  "重复），然后“|”、倒序的同样字母，最后再一个“|”——从左往右读（因果掩码），在每个位置"
                  "预测下一个词元。"},
        "token_embed": {
            "en": "Each token's row of the learned table embed (12 × 16). The letters of “stream” and "
                  "of “maerts” get the same rows: nothing here says which half a letter is in.",
            "zh": "每个词元取学习到的 embed 表（12 × 16）中的一行。“stream”和“maerts”里的字母得到相同的行："
                  "这里没有任何信息说明字母在哪一半。"},
        "pos_embed": {
            "en": "One learned row per position, 0 to 12. Reversal is a job for positions: the letter to "
                  "write after position i stands at position 11 − i, whatever the letters are. These "
                  "rows are what the attention will match.",
            "zh": "每个位置一行学习到的向量，0 到 12。倒序是位置的工作：位置 i 之后要写的字母在位置 11 − i，"
                  "不管字母是什么。注意力要匹配的正是这些行。"},
        "embedding": {
            "en": "x = token row + position row. The “m” at 5 and the “m” at 7 now differ by their "
                  "position rows only.",
            "zh": "x = 词元行 + 位置行。位置 5 的“m”和位置 7 的“m”现在只差位置行。"},
        "mask": {
            "en": "Causal: row i sees keys 0…i. Row 6 (“|”) already sees all of “stream”, so every "
                  "letter it and the rows after it must write is visible.",
            "zh": "因果掩码：第 i 行能看到键 0…i。第 6 行（“|”）已经能看到整个“stream”，所以它和后面各行"
                  "要写的字母都看得见。"},
        "norm": {
            "en": "Pre-norm: the attention reads LayerNorm(x)·γ + β, while x itself goes around it and "
                  "gets the attention's output added. A final LayerNorm comes before the logits.",
            "zh": "前置归一化：注意力读的是 LayerNorm(x)·γ + β，而 x 本身绕过注意力，再加上注意力的输出。"
                  "计算 logits 之前还有一个最终的 LayerNorm。"},
        "projection": {
            "en": "Q, K and V come from the normalised rows (d_model 16 → 2 heads × 8). A query says "
                  "which position to look for, a key which position it is, a value which letter it holds.",
            "zh": "Q、K、V 由归一化后的行算出（d_model 16 → 2 个头 × 8）。查询表达要找哪个位置，键表达"
                  "自己是哪个位置，值表达自己是哪个字母。"},
        "split": {
            "en": "16 columns become 2 heads of 8. Only one of the two heads learned to reverse; the "
                  "attention stage shows which.",
            "zh": "16 列分成 2 个头，每个 8 列。两个头中只有一个学会了倒序；注意力阶段会显示是哪一个。"},
        "scores": {
            "en": "Q·Kᵀ / √8 for every pair of positions. Head %d, row 6 (“|”): key 5 (“m”) scores %s; "
                  "the next best is key %d (“%s”) with %s."
                  % (rh, sm, sj, TEXT[sj], ss),
            "zh": "每对位置的 Q·Kᵀ / √8。头 %d 第 6 行（“|”）：键 5（“m”）的分数是 %s；其次是键 %d（“%s”），%s。"
                  % (rh, sm, sj, TEXT[sj], ss)},
        "softmax": {
            "en": "Each row of scores becomes weights that sum to 1; a lead of a few points in the scores "
                  "becomes nearly all of the weight.",
            "zh": "每行分数变成和为 1 的权重；分数上领先几分，就几乎拿走全部权重。"},
        "attn": {
            "en": "Head %d reverses: rows 6 to 11 put %s on average on key 11 − i, where the next "
                  "token i + 1 stands mirrored about the “|” at 6 (at least %s) — the anti-diagonal from (6, 5) to (11, 0). Row 8 (“a”) gives "
                  "%s to key 3 (“e”), the next letter to write. It is position, not letters: on 4096 "
                  "held-out random texts the anti-diagonal averages %s, and on “eeeeee|eeeeee” it is "
                  "still at least %s. Rows 0–4 have nothing to look up (on average %s on key 0); row 5 only has "
                  "to predict “|” and rests on key 4 (%s). Head %d does not reverse: %s on the anti-diagonal."
                  % (rh, mean, lo, w83, held, f2(r["same_mir"]), f2(r["rest0"]), f2(r["row5"]), oh,
                     f2(r["other_mir"])),
            "zh": "头 %d 负责倒序：第 6 到 11 行平均把 %s 放在键 11 − i 上，即下一个词元 i + 1 关于位置 6 的“|”"
                  "的镜像位置（最少 %s）——"
                  "从 (6, 5) 到 (11, 0) 的反对角线。第 8 行（“a”）给键 3（“e”）%s，也就是接下来要写的字母。"
                  "起作用的是位置而不是字母：在 4096 段没见过的随机文本上，反对角线平均为 %s；在"
                  "“eeeeee|eeeeee”上也至少有 %s。第 0–4 行没有要查的东西（平均 %s 在键 0 上）；第 5 行只需预测“|”，"
                  "停在键 4 上（%s）。头 %d 不做倒序：反对角线上只有 %s。"
                  % (rh, mean, lo, w83, held, f2(r["same_mir"]), f2(r["rest0"]), f2(r["row5"]), oh,
                     f2(r["other_mir"]))},
        "weighted_sum": {
            "en": "attn·V: each row takes the values of the keys it attends to. In head %d, row 8 takes "
                  "the value of “e”: the letter it must write next."
                  % rh,
            "zh": "attn·V：每行取它所关注的键的值。在头 %d 中，第 8 行取“e”的值：它接下来要写的字母。" % rh},
        "concat": {
            "en": "The two heads' 8 columns side by side again: 16 columns.",
            "zh": "两个头的 8 列重新并排：16 列。"},
        "output": {
            "en": "W_O mixes the heads back into d_model 16: this is what the layer adds to x.",
            "zh": "W_O 把各个头混合回 d_model 16：这就是这一层要加到 x 上的东西。"},
        "add_norm": {
            "en": "x + output: the residual stream keeps the token and its position and gains the "
                  "letter found at the mirror position. There is no feed-forward block.",
            "zh": "x + 输出：残差流保留词元和它的位置，并加上在镜像位置找到的字母。没有前馈网络。"},
        "final_norm": {
            "en": "The final LayerNorm before the unembedding, as in GPT-2.",
            "zh": "反嵌入之前的最终 LayerNorm，与 GPT-2 相同。"},
        "logits": {
            "en": "One score per token of the vocabulary at each position: x · lm_headᵀ (12 × 16, no bias).",
            "zh": "每个位置对词表中每个词元各有一个分数：x · lm_headᵀ（12 × 16，没有偏置）。"},
        "probs": {
            "en": "Softmax over the 12 tokens. Rows 0–4 cannot know the next random letter: the correct "
                  "one gets %s on average (chance 1/11 = 0.09), no token more than %s. Row 5 gives “|” "
                  "%s: six letters are always followed by it. Rows 6–11 give the mirrored letter %s "
                  "(row 8: “e”, %s), and row 12 gives the closing “|” %s. On 4096 held-out random texts "
                  "the most likely token of rows 5–12 is the right one every time: all %d predictions."
                  % (first, first_max, sep5, copy_en, p8, end, 4096 * (N + 2)),
            "zh": "对 12 个词元做 softmax。第 0–4 行无法知道下一个随机字母：正确字母的概率平均 %s（瞎猜是 "
                  "1/11 = 0.09），没有哪个词元超过 %s。第 5 行给“|” %s：六个字母之后总是它。第 6–11 行给镜像"
                  "位置字母的概率%s；第 8 行给“e” %s，第 12 行给结尾的“|” %s。在 4096 段没见过的随机"
                  "文本上，第 5–12 行概率最大的词元每次都是对的：全部 %d 个预测。"
                  % (first, first_max, sep5, copy_zh, p8, end, 4096 * (N + 2))},
    }

    notes = {
        "input": {
            "en": "Ask the room to read the second half aloud while pointing at the first. Where does the "
                  "finger go for each letter? That path is what the attention will draw.",
            "zh": "让学生一边大声读后半部分，一边指着前半部分。每个字母手指指向哪里？这条路径就是注意力要画出的形状。"},
        "token_embed": {
            "en": "Point at rows 5 and 7 (both “m”): identical. Only attention and positions can tell the "
                  "halves apart.",
            "zh": "指出第 5 行和第 7 行（都是“m”）：完全相同。只有注意力和位置能区分两半。"},
        "pos_embed": {
            "en": "Ask: could a model reverse text without these rows? (No: attention alone does not "
                  "know order.)",
            "zh": "提问：没有这些行，模型能把文本倒过来吗？（不能：注意力本身不知道顺序。）"},
        "embedding": {
            "en": "Compare rows 5 and 7 again: now they differ.",
            "zh": "再比较第 5 行和第 7 行：现在它们不同了。"},
        "mask": {
            "en": "Ask which key row 6 needs (5, the last letter) and check the mask allows it.",
            "zh": "问第 6 行需要哪个键（5，最后一个字母），并检查掩码允许看到它。"},
        "norm": {
            "en": "Remind: pre-norm, as GPT-2. The residual x is not normalised until the final norm.",
            "zh": "提醒：前置归一化，和 GPT-2 一样。残差 x 直到最终归一化之前都不做归一化。"},
        "projection": {
            "en": "Ask what a query must contain to find position 11 − i (its own position, turned into "
                  "the mirror's).",
            "zh": "问：查询要包含什么才能找到位置 11 − i（它自己的位置，转换成镜像位置）。"},
        "split": {
            "en": "Ask the class to guess, before the attention stage, whether both heads will reverse.",
            "zh": "在看注意力阶段之前，让学生猜两个头是不是都会做倒序。"},
        "scores": {
            "en": "Hover row 6, key 5 of head %d to show the dot product; the scale is √8 = 2.83." % rh,
            "zh": "悬停头 %d 第 6 行、键 5，展示点积；缩放因子是 √8 = 2.83。" % rh},
        "softmax": {
            "en": "Ask what happens to a row whose best score leads by 5 (e^5 ≈ 150: almost all weight).",
            "zh": "问：一行中最高分领先 5 会怎样（e^5 ≈ 150：几乎全部权重）。"},
        "attn": {
            "en": "Before showing it, ask the room to sketch where head %d's weight should be. Then trace "
                  "the anti-diagonal from row 6 down and switch to head %d for contrast. Try "
                  "--text \"eeeeee|eeeeee\": the line stays."
                  % (rh, oh),
            "zh": "展示之前，让学生画出头 %d 的权重应该在哪里。然后从第 6 行往下沿反对角线指一遍，再切换到头 %d "
                  "对比。试试 --text \"eeeeee|eeeeee\"：这条线还在。" % (rh, oh)},
        "weighted_sum": {
            "en": "Say it in words: “row 8 fetched e”. Ask where it will be used (the logits).",
            "zh": "用话说出来：“第 8 行取到了 e”。问这会在哪里用到（logits）。"},
        "concat": {
            "en": "Nothing new is computed here; it is bookkeeping.",
            "zh": "这里没有新的计算，只是整理。"},
        "output": {
            "en": "Ask why W_O must keep head %d's letter readable for lm_head." % rh,
            "zh": "问：为什么 W_O 必须让 lm_head 能读出头 %d 取到的字母。" % rh},
        "add_norm": {
            "en": "Point out that one layer suffices: the position alone says where to look.",
            "zh": "指出一层就够了：只靠位置就知道该看哪里。"},
        "final_norm": {
            "en": "Quick stage; no question needed.",
            "zh": "过渡阶段，不需要提问。"},
        "logits": {
            "en": "Ask which column should be largest in row 8 (“e”) and check.",
            "zh": "问第 8 行哪一列应该最大（“e”），然后验证。"},
        "probs": {
            "en": "Compare rows 0–4 (flat: honest ignorance) with rows 6–11 (certain). Try "
                  "--text \"listen|netsil\": another word, the same line.",
            "zh": "比较第 0–4 行（平坦：诚实的不知道）和第 6–11 行（确定）。试试 --text \"listen|netsil\"：换一个词，"
                  "还是同一条线。"},
    }

    quiz = [
        {"id": "mirror", "stage": "attn", "batch": 0, "head": rh, "cell": [8],
         "question": {"en": "Head %d, row 8 (“a”): which key gets the most weight?" % rh,
                      "zh": "头 %d，第 8 行（“a”）：哪个键得到的权重最多？" % rh},
         "answer": 3,
         "explanation": {"en": "Key 3, “e”, with %s: row 8 predicts token 9, and 9 and 3 lie mirrored "
                               "about the “|” at 6 (9 + 3 = 12): “e” is the letter to write next." % w83,
                         "zh": "键 3，“e”，%s：第 8 行预测的是词元 9，而 9 和 3 关于位置 6 的“|”对称（9 + 3 = 12）："
                               "“e”正是接下来要写的字母。" % w83}},
    ]
    return title, description, steps, notes, quiz


def values(t):
    return t.detach().to(torch.float32).tolist()


def build_lesson(model, r):
    title, description, steps, notes, quiz = texts(r)
    b = model.block
    layer = {"w_q": values(b.w_q.weight), "b_q": values(b.w_q.bias),
             "w_k": values(b.w_k.weight), "b_k": values(b.w_k.bias),
             "w_v": values(b.w_v.weight), "b_v": values(b.w_v.bias),
             "w_o": values(b.w_o.weight), "b_o": values(b.w_o.bias),
             "norm_weight": values(b.norm.weight), "norm_bias": values(b.norm.bias)}
    return {
        "title": title,
        "description": description,
        "vocab": VOCAB,
        "tokenizer": "char",
        "model": {"n_layers": 1, "d_model": C, "n_heads": H, "norm_first": True,
                  "residual_norm": True, "ffn_hidden": 0, "positions": "learned", "max_positions": P,
                  "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": EPS,
                  "mask_fill": FILL},
        "input": {"text": TEXT},
        "mask": "causal",
        # the data of make_batch for attnviz --train (lessons/README.md, "Training")
        "task": {"kind": "reversal", "length": P, "batch": BATCH, "seed": SEED + 1},
        "weights": {"embed": values(model.embed.weight), "pos_embed": values(model.pos_embed),
                    "final_norm_weight": values(model.final_norm.weight),
                    "final_norm_bias": values(model.final_norm.bias),
                    "lm_head": values(model.lm_head.weight), "layers": [layer]},
        "steps": steps,
        "notes": notes,
        "quiz": quiz,
    }


def check(lesson, model, r):
    """The claims the narration makes, and the lesson run from its own JSON text."""
    problems = []
    if r["mir_mean"] < 0.95 or r["mir_min"] < 0.9 or not r["mir_argmax"]:
        problems.append("no clear anti-diagonal in head %d on the shipped text" % r["rh"])
    if r["held_mir"] < 0.95 or r["held_argmax"] < 0.999 or r["same_mir"] < 0.8:
        problems.append("the anti-diagonal does not hold on other texts")
    if r["other_mir"] > 0.3 or r["held_other_mir"] > 0.3:
        problems.append("head %d reverses too" % r["oh"])
    if r["s_mirror"] <= r["s_second"]:
        problems.append("row 6's best score is not on key 5")
    if not r["shipped_ok"] or r["copy_min"] < 0.9 or r["sep5"] < 0.9 or r["end"] < 0.9:
        problems.append("the shipped text is not predicted from row 5 on")
    if r["first"] > 0.2 or r["first_max"] > 0.3:
        problems.append("rows 0-4 are not near chance")
    if r["row5_argmax"] != N - 2 or r["rest0"] < 0.5:
        problems.append("rows 0-5 do not rest where the narration says")
    if r["held_pos"] < 1 or r["held_seq"] < 1:
        problems.append("held-out accuracy too low (%.4f, %.4f)" % (r["held_pos"], r["held_seq"]))
    if int(r["a"][r["rh"], 8].argmax()) != 3:
        problems.append("the quiz answer does not hold")
    problems += trained.text_problems(lesson)
    got = trained.lesson_lm_forward(json.loads(lesson_text(lesson)))
    with torch.no_grad():
        logits, attn, _ = model(ids_of(TEXT))
    diffs = [float((got["logits"] - logits).abs().max()),
             float((got["probs"] - torch.softmax(logits, -1)).abs().max()),
             float((got["attn"][0] - attn).abs().max())]
    if max(diffs) > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % max(diffs))
    return problems, max(diffs)


def make(log):
    log("training %d steps of %d texts, seed %d (torch %s)" % (STEPS, BATCH, SEED, torch.__version__))
    model = train(log)
    r = measure(model)
    report(r, log)
    lesson = build_lesson(model, r)
    problems, diff = check(lesson, model, r)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_textbook.py", "Train the reversal model and write its lesson.", DEFAULT_OUT, make, argv)


if __name__ == "__main__":
    sys.exit(main())
