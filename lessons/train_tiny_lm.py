#!/usr/bin/python3
"""train_tiny_lm.py: trains a tiny character-level language model on English fortunes and
writes the shipped lesson lessons/tiny-lm-fortunes.json.

    /usr/bin/python3 lessons/train_tiny_lm.py                 # writes lessons/tiny-lm-fortunes.json
    /usr/bin/python3 lessons/train_tiny_lm.py --out /tmp/x.json

The text: the three files of Debian's package fortunes-min (/usr/share/games/fortunes/
fortunes, literature and riddles: fortune-cookie sayings, quotations from literature and
riddles; BSD licence, see /usr/share/doc/fortunes-min/copyright), about 800 sayings.
`apt-get install fortunes-min` if they are missing. Each saying is lower-cased and its
attribution lines ("-- Author") dropped; white space, hyphens and slashes separate words;
every character that is not a letter (digits, punctuation, apostrophes) is dropped, and so
is every word holding one of the four rarest letters j, q, x, z (about 3% of the words),
so that the vocabulary is 23 characters and its table fits the screen with readable
cells (14-pixel cells at 1280x720 allow 23 rows). The sayings are joined with
a space into one stream; every tenth saying is held out to measure the loss on text the
model never saw.

The model, GPT-like and small enough to read: 23 characters (space and a-z without j q x z),
learned token and position embeddings (20 positions), 2 pre-norm blocks (LayerNorm,
causal self-attention with 4 heads of d_k 4, d_model 16, the residual, LayerNorm, a GELU
feed-forward of 12, the residual), a final LayerNorm and an untied unembedding (narrow
so that every table keeps readable cells on screen: lessons/README.md). It is
trained to predict the next character of random 20-character windows of the stream (loss
on every position). CPU, one thread, fixed seeds and deterministic algorithms: running it
twice writes byte-identical JSON (tests/train_lessons_test.sh checks it under make
test-full).

The lesson's input is "to be or not to be" (Hamlet, in the riddles file). The narration
is written from the numbers the trained model gives on it and on held-out text; the
script refuses to write the lesson if a claim of the narration does not hold, and runs the
lesson again from its own JSON with lessons/lesson_torch.py (trained.lesson_lm_forward) and
compares it with the model.
Documentation: lessons/README.md, section "Trained lessons".
"""

import math
import os
import re
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import trained  # noqa: E402  (the command line and the write, shared)

SEED = 1
FORTUNE_DIR = "/usr/share/games/fortunes"
FILES = ("fortunes", "literature", "riddles")          # Debian's fortunes-min
VOCAB = list(" abcdefghiklmnoprstuvwy")               # 23 characters; token id = index
RARE = set("jqxz")              # the four rarest letters: words holding one are dropped
V = len(VOCAB)
P = 20                          # learned positions = the training window
C, H, N_LAYERS, FFN = 16, 4, 2, 12
D_K = C // H
EPS = 1e-5
FILL = -1e9
STEPS, BATCH, LR, WD = 6000, 64, 3e-3, 0.01
TEXT = "to be or not to be"
DEFAULT_OUT = os.path.join(HERE, "tiny-lm-fortunes.json")
VOWELS = set("aeiou")


# ----------------------------------------------------------------------------
# the text
# ----------------------------------------------------------------------------

def normalise(saying):
    """One saying as the model reads it: lower-case words of VOCAB's letters, one space
    between them."""
    lines = [ln for ln in saying.split("\n") if not ln.strip().startswith("--")]
    t = re.sub(r"[-/\s]", " ", " ".join(lines).lower())
    words = ("".join(ch for ch in w if ch.isascii() and ch.isalpha()) for w in t.split(" "))
    return " ".join(w for w in words if w and not set(w) & RARE)


def load_corpus():
    """(training stream, held-out stream) as strings: every tenth saying is held out."""
    sayings = []
    for name in FILES:
        path = os.path.join(FORTUNE_DIR, name)
        if not os.path.exists(path):
            sys.exit("train_tiny_lm.py: %s is missing: apt-get install fortunes-min" % path)
        with open(path, encoding="utf-8", errors="replace") as f:
            sayings += [normalise(s) for s in f.read().split("\n%\n")]
    sayings = [s for s in sayings if s]
    train_text = " ".join(s for i, s in enumerate(sayings) if i % 10 != 9)
    held_text = " ".join(s for i, s in enumerate(sayings) if i % 10 == 9)
    return train_text, held_text, len(sayings)


def encode(text):
    return torch.tensor([VOCAB.index(ch) for ch in text])


def windows(gen, stream, B, L=P + 1):
    """B random windows of L characters of the stream: inputs (B, L - 1), next characters."""
    start = torch.randint(0, len(stream) - L, (B,), generator=gen)
    w = stream[start[:, None] + torch.arange(L)[None, :]]
    return w[:, :-1], w[:, 1:]


# ----------------------------------------------------------------------------
# the model, with the lesson's names
# ----------------------------------------------------------------------------

def TinyLM():
    return trained.TinyGPT(V, C, H, P, N_LAYERS, FFN, EPS, FILL)


def held_out_loss(model, held, n=2048):
    """Mean loss (nats a character) on n windows of the held-out stream, and the same
    by position."""
    x, y = windows(torch.Generator().manual_seed(SEED + 2000), held, n)
    with torch.no_grad():
        logits, _ = model(x)
    nll = -torch.log_softmax(logits, -1).gather(-1, y[..., None])[..., 0]
    return float(nll.mean()), nll.mean(0)


def unigram_loss(train, held):
    """The loss of the best guess without context: the characters' frequencies."""
    counts = torch.bincount(train, minlength=V).double()
    p = counts / counts.sum()
    return float(-torch.log(p[held]).mean())


def train(train_ids, held_ids, log=print):
    torch.manual_seed(SEED)
    model = TinyLM()
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    t0 = time.time()
    run_loss, every = 0.0, 500
    for step in range(1, STEPS + 1):
        x, y = windows(gen, train_ids, BATCH)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:     # cosine decay to 0
            g["lr"] = LR * 0.5 * (1 + math.cos(math.pi * step / STEPS))
        run_loss += loss.item()
        if step % every == 0:
            log("step %5d  training loss %.3f  (%.0f s)" % (step, run_loss / every, time.time() - t0))
            run_loss = 0.0
    model.eval()
    seconds = time.time() - t0
    log("trained in %.0f s" % seconds)
    return model


# ----------------------------------------------------------------------------
# the lesson, run from its own JSON
# ----------------------------------------------------------------------------


def head_profile(model, held_ids, n=512):
    """Per layer and head, averaged over n held-out windows (rows 3..P-1, so that every
    row has three earlier keys): the weight on the query itself (offset 0), on the
    character before (1) and the one before that (2); and, split by the query: rows whose
    query is the first letter of a word (the character before is a space), rows whose query
    is a space, rows whose query is a vowel after a consonant. Returns a dict of tensors
    (N_LAYERS, H)."""
    x, _ = windows(torch.Generator().manual_seed(SEED + 3000), held_ids, n)
    with torch.no_grad():
        _, attns = model(x)
    L = x.shape[1]
    space = x == VOCAB.index(" ")
    vowel = torch.zeros_like(space)
    for ch in sorted(VOWELS):
        vowel |= x == VOCAB.index(ch)
    rows = torch.zeros_like(space)
    rows[:, 3:] = True
    prev_space = torch.zeros_like(space)
    prev_space[:, 1:] = space[:, :-1]
    prev_cons = torch.zeros_like(space)
    prev_cons[:, 1:] = ~space[:, :-1] & ~vowel[:, :-1]       # every other character is a letter
    classes = {"word_start": rows & prev_space & ~space, "space": rows & space,
               "vowel_after_consonant": rows & vowel & prev_cons}
    out = {k: torch.zeros(N_LAYERS, H) for k in ("off0", "off1", "off2", "local")}
    for k in classes:
        out[k + "_prev"] = torch.zeros(N_LAYERS, H)
        out[k + "_self"] = torch.zeros(N_LAYERS, H)
    b, i = rows.nonzero(as_tuple=True)
    for li, a in enumerate(attns):
        for h in range(H):
            ah = a[:, h]
            out["off0"][li, h] = ah[b, i, i].mean()
            out["off1"][li, h] = ah[b, i, i - 1].mean()
            out["off2"][li, h] = ah[b, i, i - 2].mean()
            out["local"][li, h] = (ah[b, i, i] + ah[b, i, i - 1] + ah[b, i, i - 2]).mean()
            for k, cls in classes.items():
                cb, ci = cls.nonzero(as_tuple=True)
                out[k + "_prev"][li, h] = ah[cb, ci, ci - 1].mean()
                out[k + "_self"][li, h] = ah[cb, ci, ci].mean()
    # the word a space closes: rows that are a space after a word that starts inside the
    # window; the weight on all of its letters together
    first = torch.full_like(x, -1)          # the first letter of the word at or before i
    for i in range(1, L):
        starts = ~space[:, i] & space[:, i - 1]
        first[:, i] = torch.where(starts, torch.full_like(first[:, i], i), first[:, i - 1])
    closes = torch.zeros_like(space)
    closes[:, 1:] = space[:, 1:] & ~space[:, :-1] & (first[:, :-1] >= 0)
    cb, ci = closes.nonzero(as_tuple=True)
    cf = first[cb, ci - 1]
    keys = torch.arange(L)[None, :]
    in_word = ((keys >= cf[:, None]) & (keys < ci[:, None])).float()       # (n, L)
    out["space_word"] = torch.zeros(N_LAYERS, H)
    for li, a in enumerate(attns):
        for h in range(H):
            out["space_word"][li, h] = (a[cb, h, ci] * in_word).sum(-1).mean()
    out["counts"] = {k: int(v.sum()) for k, v in classes.items()}
    out["counts"]["space_after_word"] = int(cb.numel())
    return out




def measure(model, train_ids, held_ids, train_text):
    """Everything the narration says, measured."""
    r = {"profile": head_profile(model, held_ids)}
    r["quoted"] = train_text.count(TEXT)                    # Hamlet's line in the training text
    r["th"], r["to"] = train_text.count("th"), train_text.count("to")
    r["n_params"] = sum(p.numel() for p in model.parameters())
    r["held_loss"], _ = held_out_loss(model, held_ids)
    r["unigram_loss"] = unigram_loss(train_ids, held_ids)
    ids = encode(TEXT)[None]
    L = ids.shape[1]
    with torch.no_grad():
        logits, attns = model(ids)
    probs = torch.softmax(logits, -1)[0]
    r["probs"], r["attns"] = probs, [a[0] for a in attns]
    nxt = ids[0, 1:]
    r["text_loss"] = float(-torch.log(probs[torch.arange(L - 1), nxt]).mean())
    r["top"] = [[(VOCAB[int(j)], float(p)) for p, j in zip(*probs[i].topk(3))] for i in range(L)]
    pr = r["profile"]
    # layer 0: the head whose word-initial rows look hardest at the space before them
    r["ws_head"] = int(pr["word_start_prev"][0].argmax())
    # layer 1: the head whose word-initial rows look hardest at the space before them
    r["ws1_head"] = int(pr["word_start_prev"][1].argmax())
    return r


def report(r, log=print):
    pr = r["profile"]
    log("held-out loss %.3f nats a character (unigram %.3f, uniform ln %d = %.3f); on %r %.3f"
        % (r["held_loss"], r["unigram_loss"], V, math.log(V), TEXT, r["text_loss"]))
    log("held-out rows by kind: %s" % pr["counts"])
    for k, v in pr.items():
        if k != "counts":
            log("  %-28s %s" % (k, "  |  ".join(" ".join("%.2f" % x for x in row) for row in v.tolist())))
    log("word-start heads: layer 0 head %d, layer 1 head %d" % (r["ws_head"], r["ws1_head"]))
    for i, ch in enumerate(TEXT):
        log("  row %2d %r -> %s" % (i, ch, "  ".join("%r %.2f" % t for t in r["top"][i])))


# ----------------------------------------------------------------------------
# narration, written from the measurements
# ----------------------------------------------------------------------------

def f2(x):
    """Two decimals, with a real minus sign as the other lessons write it."""
    return ("%.2f" % float(x)).replace("-", "\u2212")


def span(v):
    """'0.54–0.70' for the values of a row of heads."""
    v = [float(x) for x in v]
    return "%s–%s" % (f2(min(v)), f2(max(v)))


def q(ch):
    return "“%s”" % ("space" if ch == " " else ch)


def qz(ch):
    return "“%s”" % ("空格" if ch == " " else ch)


# rows of TEXT the narration names: the first letters of "or" and "not", "b" of the first "be", "o" of "not", the second "t" (of "to"), the last "e"
ROW_OR, ROW_NOT, ROW_B, ROW_NO, ROW_T2, ROW_END = 6, 9, 3, 10, 13, 17
WORD_ROWS = (3, 9, 13, 16)    # the words that start with a consonant: be, not, to, be


def texts(r):
    """title, description, steps, notes and quiz from the measured numbers."""
    pr, a0, a1, probs, top = r["profile"], r["attns"][0], r["attns"][1], r["probs"], r["top"]
    wh, w1 = r["ws_head"], r["ws1_head"]
    others1 = [h for h in range(H) if h != w1]
    loss, uni = f2(r["held_loss"]), f2(r["unigram_loss"])
    vid = VOCAB.index

    def topline(i, lang):
        sep = "、" if lang == "zh" else ", "
        return sep.join("%s %s" % ((qz if lang == "zh" else q)(ch), f2(p)) for ch, p in top[i])

    p_t2_h, p_t2_o = probs[ROW_T2, vid("h")], probs[ROW_T2, vid("o")]
    title = {"en": "A tiny language model: 2 layers trained on fortune cookies",
             "zh": "一个很小的语言模型：在幸运饼干语录上训练的两层模型"}
    description = {
        "en": "A character-level GPT-like model (23 characters, d_model 16, 4 heads a layer, 2 pre-norm "
              "layers with a GELU feed-forward, learned positions, context 20) trained by "
              "lessons/train_tiny_lm.py on the sayings of Debian's fortunes-min. Held-out loss %s nats a "
              "character (letter frequencies alone: %s). On “%s” its heads look at the last few "
              "characters, a word's first letter at the space before it." % (loss, uni, TEXT),
        "zh": "一个字符级、类似 GPT 的模型（23 个字符，d_model 16，每层 4 个头，两层前置归一化并带 GELU 前馈网络，"
              "学习到的位置编码，上下文 20），由 lessons/train_tiny_lm.py 在 Debian 的 fortunes-min 语录上训练。"
              "留出文本上的损失为每字符 %s 奈特（只用字母频率：%s）。在“%s”上，它的头看最近的几个字符，"
              "单词的首字母看它前面的空格。" % (loss, uni, TEXT)}

    steps = {
        "input": {
            "en": "Eighteen characters, one token each: “%s” (Hamlet, quoted once in the training text). "
                  "The vocabulary: space and 22 letters (words with j, q, x, z and punctuation were left "
                  "out); a guess gives 1/23 = 0.04. Trained on 800 sayings of fortunes-min: held-out loss "
                  "%s nats a character (letter frequencies alone: %s)." % (TEXT, loss, uni),
            "zh": "十八个字符，每个一个词元：“%s”（《哈姆雷特》，训练文本引用过一次）。词表：空格和 22 个字母"
                  "（含 j、q、x、z 的词和标点都去掉了），瞎猜 1/23 = 0.04。在 fortunes-min 的 800 条语录上训练："
                  "留出损失每字符 %s 奈特（只用字母频率：%s）。" % (TEXT, loss, uni)},
        "token_embed": {
            "en": "Each character's row of the learned table embed (23 × 16). The two “to”s and the two "
                  "“be”s get the same rows: rows 0 and 13, 3 and 16 are identical.",
            "zh": "每个字符取学习到的 embed 表（23 × 16）中的一行。两个“to”和两个“be”得到相同的行："
                  "第 0 行和第 13 行、第 3 行和第 16 行完全相同。"},
        "pos_embed": {
            "en": "One learned row per position: 20, the length of the training windows; the text uses 0–17.",
            "zh": "每个位置一行学习到的向量：共 20 行，即训练窗口的长度；这段文本用到 0–17。"},
        "embedding": {
            "en": "x = character row + position row: the same letter at another place is now another vector.",
            "zh": "x = 字符行 + 位置行：同一个字母在别的位置上，现在就是另一个向量。"},
        "mask": {
            "en": "Causal: row i sees characters 0…i and predicts character i + 1, as in training.",
            "zh": "因果掩码：第 i 行看到字符 0…i，预测字符 i + 1，和训练时一样。"},
        "norm": {
            "en": "Pre-norm, as GPT-2: attention and the feed-forward each read LayerNorm of the residual "
                  "stream and add their result to it. A final LayerNorm comes before the logits.",
            "zh": "和 GPT-2 一样的前置归一化：注意力和前馈网络各自读残差流的 LayerNorm，再把结果加回残差流。"
                  "计算 logits 之前还有一个最终的 LayerNorm。"},
        "projection": {
            "en": "Q, K and V from the normalised rows: d_model 16 → 4 heads × 4.",
            "zh": "由归一化后的行算出 Q、K、V：d_model 16 → 4 个头 × 4。"},
        "split": {
            "en": "16 columns become 4 heads of 4; each head has its own pattern of attention.",
            "zh": "16 列分成 4 个头，每个 4 列；每个头有自己的注意力模式。"},
        "scores": {
            "en": "Q·Kᵀ / √4 for every pair of positions, in each head.",
            "zh": "每个头里，每对位置的 Q·Kᵀ / √4。"},
        "softmax": {
            "en": "Each row of scores becomes weights that sum to 1.",
            "zh": "每行分数变成和为 1 的权重。"},
        "l0.attn": {
            "en": "Layer 0: every head reads the last few characters: keys i, i − 1, i − 2 take %s of a "
                  "row's weight on held-out text. A space looks at itself in every head (%s). In head %d a "
                  "word's first letter looks at the space before it (%s): here row %d (“n” of “not”) gives "
                  "it %s, row %d (the second “t”) %s."
                  % (span(pr["local"][0]), span(pr["space_self"][0]), wh, f2(pr["word_start_prev"][0, wh]),
                     ROW_NOT, f2(a0[wh, ROW_NOT, ROW_NOT - 1]), ROW_T2, f2(a0[wh, ROW_T2, ROW_T2 - 1])),
            "zh": "第 0 层：每个头都读最近的几个字符：在留出文本上，键 i、i − 1、i − 2 占一行权重的 %s。每个头里"
                  "空格都看自己（%s）。头 %d 中单词的首字母看它前面的空格（%s）：这里第 %d 行（“not”的“n”）给它 %s，"
                  "第 %d 行（第二个“t”）%s。"
                  % (span(pr["local"][0]), span(pr["space_self"][0]), wh, f2(pr["word_start_prev"][0, wh]),
                     ROW_NOT, f2(a0[wh, ROW_NOT, ROW_NOT - 1]), ROW_T2, f2(a0[wh, ROW_T2, ROW_T2 - 1])),
            "head": wh},
        "weighted_sum": {
            "en": "attn·V: each row takes the values of the characters it attends to, so after layer 0 "
                  "a position also carries its neighbours: the end of the word so far.",
            "zh": "attn·V：每行取它所关注字符的值，所以第 0 层之后，每个位置也带着它的邻居：到目前为止的词尾。"},
        "concat": {
            "en": "The four heads' 4 columns side by side again: 16 columns.",
            "zh": "四个头的 4 列重新并排：16 列。"},
        "output": {
            "en": "W_O mixes the heads back into d_model 16: what attention adds to the residual stream.",
            "zh": "W_O 把各个头混合回 d_model 16：这就是注意力加到残差流上的东西。"},
        "add_norm": {
            "en": "s = x + output: the residual stream keeps the character and its position and gains "
                  "its context; the feed-forward reads LayerNorm(s).",
            "zh": "s = x + 输出：残差流保留字符和它的位置，并加上上下文；前馈网络读的是 LayerNorm(s)。"},
        "ffn": {
            "en": "The feed-forward works on each position alone: 16 → 12 with GELU → 16, added to s. It "
                  "turns what a position has gathered into what may come next. It is narrow (GPT-2's is 4 "
                  "× d_model) so that its tables stay readable on screen.",
            "zh": "前馈网络对每个位置单独计算：16 → 12（GELU）→ 16，再加到 s 上。它把一个位置收集到的信息变成"
                  "“接下来可能是什么”。它很窄（GPT-2 的是 4 × d_model），这样它的表格在屏幕上仍然看得清。"},
        "l1.attn": {
            "en": "Layer 1, head %d is a word-start head: on held-out text a word's first letter gives %s to "
                  "the space before it, %s to itself (other heads: %s on the space). Here rows %s (“b”, "
                  "“n”, “t”, “b”) give %s to the space before them; row %d, the “o” of “or”, keeps %s on "
                  "itself."
                  % (w1, f2(pr["word_start_prev"][1, w1]), f2(pr["word_start_self"][1, w1]),
                     span(pr["word_start_prev"][1, others1]), ", ".join(map(str, WORD_ROWS)),
                     ", ".join(f2(a1[w1, i, i - 1]) for i in WORD_ROWS), ROW_OR, f2(a1[w1, ROW_OR, ROW_OR])),
            "zh": "第 1 层的头 %d 是词首头：在留出文本上，单词的首字母给前面的空格 %s，给自己 %s（其他头给空格 %s）。"
                  "这里第 %s 行（“b”、“n”、“t”、“b”）给前面的空格 %s；第 %d 行，“or”的“o”，把 %s 留给自己。"
                  % (w1, f2(pr["word_start_prev"][1, w1]), f2(pr["word_start_self"][1, w1]),
                     span(pr["word_start_prev"][1, others1]), "、".join(map(str, WORD_ROWS)),
                     "、".join(f2(a1[w1, i, i - 1]) for i in WORD_ROWS), ROW_OR, f2(a1[w1, ROW_OR, ROW_OR])),
            "head": w1},
        "final_norm": {
            "en": "The final LayerNorm before the unembedding, as in GPT-2.",
            "zh": "反嵌入之前的最终 LayerNorm，与 GPT-2 相同。"},
        "logits": {
            "en": "One score per character of the vocabulary at each position: x · lm_headᵀ (23 × 16, no bias).",
            "zh": "每个位置对词表中每个字符各有一个分数：x · lm_headᵀ（23 × 16，没有偏置）。"},
        "probs": {
            "en": "Softmax over the 23 characters. After “to b” (row %d): %s. After “no” (row %d): %s. After "
                  "the second “t” (row %d): “h” %s, “o” %s — its training text has “th” %s times, “to” %s, "
                  "and it does not copy the “to” it just read. At the end (row %d): %s."
                  % (ROW_B, topline(ROW_B, "en"), ROW_NO, topline(ROW_NO, "en"), ROW_T2, f2(p_t2_h),
                     f2(p_t2_o), "{:,}".format(r["th"]), "{:,}".format(r["to"]), ROW_END, topline(ROW_END, "en")),
            "zh": "“to b”之后（第 %d 行）：%s。“no”之后（第 %d 行）：%s。第二个“t”之后（第 %d 行）：“h” %s，"
                  "“o” %s——训练文本里“th”有 %s 次，“to” %s 次，它不复制刚读过的“to”。结尾（第 %d 行）：%s。"
                  % (ROW_B, topline(ROW_B, "zh"), ROW_NO, topline(ROW_NO, "zh"), ROW_T2, f2(p_t2_h),
                     f2(p_t2_o), "{:,}".format(r["th"]), "{:,}".format(r["to"]), ROW_END, topline(ROW_END, "zh"))},
    }

    notes = {
        "input": {
            "en": "Ask the room to predict each next character aloud, as the model must. Where are they "
                  "sure (after “b”), where not (after a space)?",
            "zh": "让学生像模型一样大声预测每个下一个字符。哪里有把握（“b”之后），哪里没有（空格之后）？"},
        "token_embed": {
            "en": "Point at rows 0 and 13: identical. Only the position rows will tell them apart.",
            "zh": "指出第 0 行和第 13 行：完全相同。只有位置行能把它们区分开。"},
        "pos_embed": {
            "en": "Ask why there are exactly 20 rows (the training windows), and what a 21st character would need.",
            "zh": "问为什么正好是 20 行（训练窗口的长度），以及第 21 个字符需要什么。"},
        "embedding": {
            "en": "Compare rows 3 and 16 (both “b”): they now differ by the position rows only.",
            "zh": "比较第 3 行和第 16 行（都是“b”）：现在它们只差位置行。"},
        "mask": {
            "en": "Remind: training used the same mask, so every row was a training example.",
            "zh": "提醒：训练时用的是同一个掩码，所以每一行都是一个训练样本。"},
        "norm": {
            "en": "Point out the two norms per layer (before attention, before the feed-forward).",
            "zh": "指出每层有两个归一化（注意力之前、前馈网络之前）。"},
        "projection": {
            "en": "Ask what a query of a space might look for, before the attention stage shows it.",
            "zh": "在注意力阶段显示之前，问空格的查询可能在找什么。"},
        "split": {
            "en": "Ask whether four heads of 4 will all do the same thing.",
            "zh": "问四个 8 维的头会不会都做同样的事。"},
        "scores": {
            "en": "Hover a score to show the dot product; the scale is √4 = 2.",
            "zh": "悬停一个分数，展示点积；缩放因子是 √4 = 2。"},
        "softmax": {
            "en": "Ask why a row near the start (row 1) can only spread its weight over two keys.",
            "zh": "问为什么开头附近的行（第 1 行）只能把权重分给两个键。"},
        "l0.attn": {
            "en": "Point at the bright diagonal cells on the space rows (2, 5, 8, 12, 15) in every head, then "
                  "trace head %d's rows 9 and 13: each first letter finds its space." % r["ws_head"],
            "zh": "在每个头中指出空格所在行（2、5、8、12、15）上明亮的对角线格子，再沿着头 %d 的第 9 行和第 13 行"
                  "指一遍：每个首字母都找到了自己的空格。" % r["ws_head"]},
        "weighted_sum": {
            "en": "Say it in words: “position 9 now knows that a word starts here”.",
            "zh": "用话说出来：“位置 9 现在知道一个词从这里开始”。"},
        "concat": {
            "en": "Nothing new is computed here; it is bookkeeping.",
            "zh": "这里没有新的计算，只是整理。"},
        "output": {
            "en": "Ask where the four heads' results go (added into the same 16 numbers of each row).",
            "zh": "问四个头的结果去了哪里（加进每行同样的 16 个数里）。"},
        "add_norm": {
            "en": "Point out that the character itself is still in s: nothing is overwritten.",
            "zh": "指出字符本身仍在 s 里：没有东西被覆盖。"},
        "ffn": {
            "en": "Ask why the feed-forward cannot look at other positions (it is applied row by row).",
            "zh": "问为什么前馈网络不能看别的位置（它逐行计算）。"},
        "l1.attn": {
            "en": "Trace head %d's rows 3, 9, 13, 16. Ask why knowing “a word starts here” helps to predict "
                  "the next letter (“t” at a word start is likely “th”)." % r["ws1_head"],
            "zh": "沿着头 %d 的第 3、9、13、16 行指一遍。问：知道“一个词从这里开始”为什么有助于预测下一个字母"
                  "（词首的“t”很可能是“th”）。" % r["ws1_head"]},
        "final_norm": {
            "en": "Quick stage; no question needed.",
            "zh": "过渡阶段，不需要提问。"},
        "logits": {
            "en": "Ask which column should be largest in row %d (after “to b”) and check." % ROW_B,
            "zh": "问第 %d 行（“to b”之后）哪一列应该最大，然后验证。" % ROW_B},
        "probs": {
            "en": "Row %d is the honest surprise: a reader who saw “to be or not t” expects “o”, the model "
                  "“h”. Ask what it would need to copy (a longer memory, an induction head)." % ROW_T2,
            "zh": "第 %d 行是坦诚的意外：读过“to be or not t”的人会预期“o”，模型却预期“h”。问它要复制还需要"
                  "什么（更长的记忆，一个归纳头）。" % ROW_T2},
    }

    ws_ans = ROW_NOT - 1
    quiz = [
        {"id": "word-start", "stage": "l0.attn", "batch": 0, "head": r["ws_head"], "cell": [ROW_NOT],
         "question": {"en": "Layer 0, head %d, row %d (“n” of “not”): which key gets the most weight?"
                            % (r["ws_head"], ROW_NOT),
                      "zh": "第 0 层头 %d，第 %d 行（“not”的“n”）：哪个键得到的权重最多？" % (r["ws_head"], ROW_NOT)},
         "answer": ws_ans,
         "explanation": {"en": "Key %d, the space before “not”, with %s: a word's first letter looks at the "
                               "space before it." % (ws_ans, f2(a0[r["ws_head"], ROW_NOT, ws_ans])),
                         "zh": "键 %d，“not”前面的空格，%s：单词的首字母看它前面的空格。"
                               % (ws_ans, f2(a0[r["ws_head"], ROW_NOT, ws_ans]))}},
        {"id": "next-after-b", "stage": "probs", "batch": 0, "cell": [ROW_B],
         "question": {"en": "Row %d (after “to b”): which vocabulary index gets the highest probability? "
                            "(space is 0, a is 1, …)" % ROW_B,
                      "zh": "第 %d 行（“to b”之后）：哪个词表下标的概率最高？（空格是 0，a 是 1，……）" % ROW_B},
         "answer": VOCAB.index(top[ROW_B][0][0]),
         "explanation": {"en": "%d, “%s”, with %s." % (VOCAB.index(top[ROW_B][0][0]), top[ROW_B][0][0],
                                                         f2(top[ROW_B][0][1])),
                         "zh": "%d，“%s”，%s。" % (VOCAB.index(top[ROW_B][0][0]), top[ROW_B][0][0],
                                                  f2(top[ROW_B][0][1]))}},
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
                  "residual_norm": True, "ffn_hidden": FFN, "activation": "gelu", "positions": "learned",
                  "max_positions": P, "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": EPS},
        "input": {"text": TEXT},
        "mask": "causal",
        # the data of make_batch for attnviz --train (lessons/README.md, "Training")
        "task": {"kind": "corpus", "length": P, "batch": BATCH, "seed": SEED + 1},
        "weights": trained.lm_weights(model),
        "steps": steps,
        "notes": notes,
        "quiz": quiz,
    }


def check(lesson, model, r):
    """The claims the narration makes, and the lesson run from its own JSON text."""
    problems = []
    pr, a0, a1, probs, top = r["profile"], r["attns"][0], r["attns"][1], r["probs"], r["top"]
    wh, w1 = r["ws_head"], r["ws1_head"]
    others1 = [h for h in range(H) if h != w1]
    vid = VOCAB.index
    if r["held_loss"] > r["unigram_loss"] - 0.8:
        problems.append("the model does not beat letter frequencies clearly")
    if float(pr["local"].min()) < 0.75:
        problems.append("a head is not local (keys i..i-2 under 0.75)")
    if float(pr["space_self"][0].min()) < 0.75:
        problems.append("layer 0: a head's spaces do not look at themselves")
    if float(pr["word_start_prev"][0, wh]) < 0.6 or \
            any(int(a0[wh, i].argmax()) != i - 1 or float(a0[wh, i, i - 1]) < 0.5 for i in (ROW_NOT, ROW_T2)):
        problems.append("layer 0: the word-start head does not pick the spaces in the text")
    if float(pr["word_start_prev"][1, w1]) < 0.8 or float(pr["word_start_self"][1, w1]) > 0.15 or \
            float(pr["word_start_prev"][1, others1].max()) > 0.75 or \
            any(int(a1[w1, i].argmax()) != i - 1 or float(a1[w1, i, i - 1]) < 0.5 for i in WORD_ROWS) or \
            int(a1[w1, ROW_OR].argmax()) != ROW_OR:
        problems.append("layer 1: no clear word-start head")
    if top[ROW_B][0][0] != "e" or top[ROW_NO][0][0] != "t" or top[ROW_END][0][0] != " ":
        problems.append("the predictions the narration names changed")
    if not float(probs[ROW_T2, vid("h")]) > float(probs[ROW_T2, vid("o")]):
        problems.append("row %d: 'h' is not ahead of 'o'" % ROW_T2)
    if r["th"] < 2 * r["to"] or r["quoted"] != 1:
        problems.append("the counts in the text the narration names changed")
    if top[ROW_T2][0][0] != "h":
        problems.append("row %d: 'h' is not the top prediction" % ROW_T2)
    problems += trained.text_problems(lesson) + trained.narration_problems(lesson)
    diff = trained.json_max_diff(lesson, model, encode(TEXT)[None])
    if diff > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % diff)
    return problems, diff


def make(log):
    train_text, held_text, n = load_corpus()
    train_ids, held_ids = encode(train_text), encode(held_text)
    log("%d sayings: %d characters to train on, %d held out" % (n, len(train_text), len(held_text)))
    log("training %d steps of %d windows, seed %d (torch %s)" % (STEPS, BATCH, SEED, torch.__version__))
    model = train(train_ids, held_ids, log)
    r = measure(model, train_ids, held_ids, train_text)
    report(r, log)
    lesson = build_lesson(model, r)
    problems, diff = check(lesson, model, r)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_tiny_lm.py", "Train the tiny character language model and write its lesson.", DEFAULT_OUT,
                       make, argv)


if __name__ == "__main__":
    sys.exit(main())
