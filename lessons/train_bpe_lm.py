#!/usr/bin/python3
"""train_bpe_lm.py: learns a byte-level BPE vocabulary and trains a small subword language
model on English fortunes; writes the shipped lesson lessons/bpe-lm-fortunes.json.

    /usr/bin/python3 lessons/train_bpe_lm.py                 # writes lessons/bpe-lm-fortunes.json
    /usr/bin/python3 lessons/train_bpe_lm.py --out /tmp/x.json

The text: fifteen files of Debian's package `fortunes` (/usr/share/games/fortunes/: the
three of fortunes-min — fortunes, literature, riddles — and wisdom, science, education, kids,
computers, work, food, pets, songs-poems, platitudes, humorists, people; chosen for a
classroom: the package's other files hold jokes about ethnic groups, men and women,
politics, drugs and the like). BSD licence (/usr/share/doc/fortunes/copyright). Each saying's
lines are joined with single spaces, its attribution lines ("-- Author") dropped; case,
digits and punctuation stay: students type real sentences. Every tenth saying is held out.

The tokenizer: byte-level BPE (lessons/bpe.py, attnviz's src/core/bpe.c): MERGES merges
learned on the training sayings, so V = 256 bytes + MERGES tokens; any text tokenizes.

The model, GPT-like and small enough to read (the tiny character model's shape:
lessons/README.md): learned token and position embeddings (P positions), 2 pre-norm blocks
(LayerNorm, causal self-attention with 4 heads of d_k 4, d_model 16, a GELU feed-forward of
12), a final LayerNorm and an untied unembedding. Trained to predict the next token of random
P-token windows of the token stream (loss on every position). CPU, one thread, fixed seeds,
deterministic algorithms. The narration and the quiz are written from numbers measured on
the model; the script refuses to write the lesson if a claim does not hold, and runs the
lesson again from its own JSON (lessons/lesson_torch.py) and compares it with the model.
"""

import math
import os
import sys
import time
from collections import Counter

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
import trained  # noqa: E402
from from_torch import lesson_text  # noqa: E402
import json  # noqa: E402

SEED = 1
FORTUNE_DIR = "/usr/share/games/fortunes"
FILES = ("fortunes", "literature", "riddles", "wisdom", "science", "education", "kids", "computers", "work",
         "food", "pets", "songs-poems", "platitudes", "humorists", "people")
MERGES = 512
P = 24                          # learned positions = the training window
C, H, N_LAYERS, FFN = 16, 4, 2, 12
EPS = 1e-5
FILL = -1e9
STEPS, BATCH, LR, WD = 6000, 64, 3e-3, 0.01
TEXT = "A friend in need is a friend indeed."
DEFAULT_OUT = os.path.join(HERE, "bpe-lm-fortunes.json")


# ----------------------------------------------------------------------------
# the text and the tokenizer
# ----------------------------------------------------------------------------

def normalise(saying):
    lines = [ln.strip() for ln in saying.split("\n") if not ln.strip().startswith("--")]
    return " ".join(" ".join(lines).split())


def load_sayings():
    sayings = []
    for name in FILES:
        path = os.path.join(FORTUNE_DIR, name)
        if not os.path.exists(path):
            sys.exit("train_bpe_lm.py: %s is missing: apt-get install fortunes" % path)
        with open(path, encoding="utf-8", errors="replace") as f:
            sayings += [normalise(s) for s in f.read().split("\n%\n")]
    return [s for s in sayings if s]


def encode_stream(sayings, merges):
    """The sayings' token ids, each saying followed by a space, as one stream (each distinct
    chunk encoded once)."""
    cache, out = {}, []
    for s in sayings:
        for ch in bpe.chunks((s + " ").encode("utf-8")):
            if ch not in cache:
                cache[ch] = bpe.encode(ch, merges)
            out += cache[ch]
    return torch.tensor(out)


def windows(gen, stream, B, L=P + 1):
    start = torch.randint(0, len(stream) - L, (B,), generator=gen)
    w = stream[start[:, None] + torch.arange(L)[None, :]]
    return w[:, :-1], w[:, 1:]


# ----------------------------------------------------------------------------
# the model
# ----------------------------------------------------------------------------

def train(V, train_ids, log):
    torch.manual_seed(SEED)
    model = trained.TinyGPT(V, C, H, P, N_LAYERS, FFN, EPS, FILL)
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    t0, run, every = time.time(), 0.0, 1000
    for step in range(1, STEPS + 1):
        x, y = windows(gen, train_ids, BATCH)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = LR * 0.5 * (1 + math.cos(math.pi * step / STEPS))
        run += loss.item()
        if step % every == 0:
            log("step %5d  training loss %.3f  (%.0f s)" % (step, run / every, time.time() - t0))
            run = 0.0
    model.eval()
    return model


# ----------------------------------------------------------------------------
# measured
# ----------------------------------------------------------------------------

def measure(model, V, vocab, merges, train_ids, held_ids, n_chars_held):
    r = {}
    x, y = windows(torch.Generator().manual_seed(SEED + 2000), held_ids, 2048)
    r["held_loss"], r["unigram_loss"], attns = trained.held_and_unigram_loss(model, x, y, V, train_ids, held_ids)
    r["chars_per_token"] = n_chars_held / len(held_ids)
    # per layer and head: the weight on the token itself, the one before, and the first key
    rows = torch.arange(3, P)
    prof = torch.zeros(N_LAYERS, H, 3)
    for li, a in enumerate(attns):
        prof[li, :, 0] = a[:, :, rows, rows].mean((0, 2))
        prof[li, :, 1] = a[:, :, rows, rows - 1].mean((0, 2))
        prof[li, :, 2] = a[:, :, rows, 0].mean((0, 2))
    r["profile"] = prof
    ids = tokenize(TEXT, merges)
    r["ids"] = ids
    r["labels"] = [vocab[i].replace(" ", "␣") for i in ids]
    with torch.no_grad():
        logits, attns = model(torch.tensor([ids]))
    r["probs"] = torch.softmax(logits, -1)[0]
    r["attns"] = [a[0] for a in attns]
    nxt = torch.tensor(ids[1:])
    r["text_loss"] = float(-torch.log(r["probs"][torch.arange(len(ids) - 1), nxt]).mean())
    r["top"] = [[(int(j), float(q)) for q, j in zip(*r["probs"][i].topk(3))] for i in range(len(ids))]
    r["prev_head"] = [int(prof[li, :, 1].argmax()) for li in range(N_LAYERS)]
    r["n_params"] = sum(t.numel() for t in model.parameters())
    return r


def tokenize(text, merges):
    return bpe.encode(text, merges)


def f2(x):
    return ("%.2f" % float(x)).replace("-", "\u2212")


# ----------------------------------------------------------------------------
# the lesson's texts, from the measurements
# ----------------------------------------------------------------------------

def texts(r, vocab, n_sayings, n_train_tokens):
    lab, top, probs = r["labels"], r["top"], r["probs"]
    L = len(lab)
    loss, uni = f2(r["held_loss"]), f2(r["unigram_loss"])
    h0, h1 = r["prev_head"]
    a0 = r["attns"][0]
    # the second "friend": where the first one is, and the token before it
    fr = [i for i, t in enumerate(lab) if t == "␣friend"]
    row_end = L - 1

    def tl(i, zh=False):
        sep = "、" if zh else ", "
        return sep.join("“%s” %s" % (vocab[j].replace(" ", "␣"), f2(q)) for j, q in top[i])

    split = " | ".join(lab)
    title = {"en": "Subwords: a 2-layer model reading BPE tokens of fortunes",
             "zh": "子词：读 BPE 词元的两层模型（幸运饼干语录）"}
    description = {
        "en": "Byte-level BPE with %d merges (V = %d) learned on %d sayings of Debian's fortunes, and a GPT-like "
              "model (d_model 16, 4 heads, 2 pre-norm layers, context %d) trained on them by "
              "lessons/train_bpe_lm.py. Held-out loss %s nats a token (token frequencies alone: %s)."
              % (MERGES, len(vocab), n_sayings, P, loss, uni),
        "zh": "在 Debian fortunes 的 %d 条语录上学到的字节级 BPE（%d 次合并，V = %d），以及在其上训练的类 GPT 模型"
              "（d_model 16，4 个头，两层前置归一化，上下文 %d），由 lessons/train_bpe_lm.py 训练。留出损失每词元 %s 奈特"
              "（只用词元频率：%s）。" % (n_sayings, MERGES, len(vocab), P, loss, uni)}
    steps = {
        "input": {
            "en": "“%s”: %d characters, %d tokens: %s. A token is a piece of a word with the space before it "
                  "(␣); BPE merged the most frequent pairs of bytes %d times. Any text reads: a byte no "
                  "merge covers is a token of its own." % (TEXT, len(TEXT), L, split, MERGES),
            "zh": "“%s”：%d 个字符，%d 个词元：%s。词元是带着前面空格（␣）的词或词的一部分；BPE 把最常见的字节对合并了 "
                  "%d 次。任何文本都能读：没有合并覆盖的字节自己就是一个词元。" % (TEXT, len(TEXT), L, split, MERGES)},
        "token_embed": {
            "en": "Each token's row of embed (%d × 16): 256 bytes, then the %d merges' tokens. Both “␣friend” "
                  "tokens get the same row." % (len(vocab), MERGES),
            "zh": "每个词元取 embed（%d × 16）中的一行：先是 256 个字节，然后是 %d 次合并得到的词元。两个“␣friend”"
                  "得到同一行。" % (len(vocab), MERGES)},
        "l0.attn": {
            "en": "Layer 0, head %d is a previous-token head: on held-out text a row gives %s of its weight to "
                  "the token before it (the other heads %s–%s). Row %d (the second “␣friend”) gives key %d %s."
                  % (h0, f2(r["profile"][0, h0, 1]), f2(min(r["profile"][0, h, 1] for h in range(H) if h != h0)),
                     f2(max(r["profile"][0, h, 1] for h in range(H) if h != h0)), fr[-1], fr[-1] - 1,
                     f2(a0[h0, fr[-1], fr[-1] - 1])),
            "zh": "第 0 层的头 %d 是“前一个词元”头：在留出文本上，一行把 %s 的权重给它前面的词元（其他头 %s–%s）。"
                  "第 %d 行（第二个“␣friend”）给键 %d %s。"
                  % (h0, f2(r["profile"][0, h0, 1]), f2(min(r["profile"][0, h, 1] for h in range(H) if h != h0)),
                     f2(max(r["profile"][0, h, 1] for h in range(H) if h != h0)), fr[-1], fr[-1] - 1,
                     f2(a0[h0, fr[-1], fr[-1] - 1]))},
        "probs": {
            "en": "Softmax over all %d tokens. After the last “%s” (row %d): %s. Held-out loss %s nats a token; "
                  "token frequencies alone give %s. R appends the most likely token, Shift+R draws one; "
                  "Ctrl+Shift+↑ sets top-k." % (len(vocab), lab[-1], row_end, tl(row_end), loss, uni),
            "zh": "对全部 %d 个词元做 softmax。最后一个“%s”之后（第 %d 行）：%s。留出损失每词元 %s 奈特；只用词元频率是 %s。"
                  "R 追加最可能的词元，Shift+R 抽一个；Ctrl+Shift+↑ 设置 top-k。"
                  % (len(vocab), lab[-1], row_end, tl(row_end, True), loss, uni)},
    }
    notes = {
        "input": {"en": "Press I and type a sentence of the class: every word splits into subwords, nothing is refused.",
                  "zh": "按 I，输入班上同学的一句话：每个词都分成子词，没有什么会被拒绝。"},
        "token_embed": {"en": "Point at the two identical rows of “␣friend”: only the positions tell them apart.",
                        "zh": "指出“␣friend”相同的两行：只有位置能区分它们。"},
        "l0.attn": {"en": "Trace head %d's first diagonal below the main one: each token looks one back." % h0,
                    "zh": "沿着头 %d 主对角线下方的那条对角线：每个词元向前看一个。" % h0},
        "probs": {"en": "Press R a few times and read each step's attention again; then Ctrl+Shift+↑ for top-k 1.",
                  "zh": "按几次 R，每一步都再看一遍注意力；然后按 Ctrl+Shift+↑ 设 top-k 为 1。"},
    }
    row_q = fr[-1]
    quiz = [{"id": "previous-token", "stage": "l0.attn", "batch": 0, "head": h0, "cell": [row_q],
             "question": {"en": "Layer 0, head %d, row %d (the second “␣friend”): which key gets the most weight?"
                                % (h0, row_q),
                          "zh": "第 0 层头 %d，第 %d 行（第二个“␣friend”）：哪个键得到的权重最多？" % (h0, row_q)},
             "answer": int(a0[h0, row_q].argmax()),
             "explanation": {"en": "Key %d, “%s”, the token before, with %s." % (int(a0[h0, row_q].argmax()),
                                                                               lab[int(a0[h0, row_q].argmax())],
                                                                               f2(a0[h0, row_q].max())),
                             "zh": "键 %d，“%s”，前一个词元，%s。" % (int(a0[h0, row_q].argmax()),
                                                                 lab[int(a0[h0, row_q].argmax())],
                                                                 f2(a0[h0, row_q].max()))}}]
    return title, description, steps, notes, quiz


def build_lesson(model, r, vocab, mlist, n_sayings, n_train_tokens):
    return trained.bpe_gpt_lesson(model, texts(r, vocab, n_sayings, n_train_tokens), vocab, mlist, TEXT, N_LAYERS, C, H,
                                  FFN, P, EPS)


def check(lesson, model, r):
    problems = []
    h0 = r["prev_head"][0]
    if r["held_loss"] > r["unigram_loss"] - 0.5:
        problems.append("the model does not beat token frequencies clearly (%.3f vs %.3f)" % (r["held_loss"], r["unigram_loss"]))
    others = [float(r["profile"][0, h, 1]) for h in range(H) if h != h0]
    if float(r["profile"][0, h0, 1]) < 0.5 or float(r["profile"][0, h0, 1]) < max(others) + 0.15:
        problems.append("layer 0: no clear previous-token head")
    fr = [i for i, t in enumerate(r["labels"]) if t == "␣friend"]
    if len(fr) != 2 or int(r["attns"][0][h0, fr[-1]].argmax()) != fr[-1] - 1:
        problems.append("the second “␣friend” does not look at the token before it in head %d" % h0)
    problems += trained.text_problems(lesson)
    got = trained.lesson_lm_forward(json.loads(lesson_text(lesson)))
    with torch.no_grad():
        logits, attns = model(torch.tensor([r["ids"]]))
    diffs = [float((got["probs"] - torch.softmax(logits, -1)).abs().max()), float((got["logits"] - logits).abs().max())]
    diffs += [float((g - a).abs().max()) for g, a in zip(got["attn"], attns)]
    if max(diffs) > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % max(diffs))
    return problems, max(diffs)


def make(log):
    sayings = load_sayings()
    train_s = [s for i, s in enumerate(sayings) if i % 10 != 9]
    held_s = [s for i, s in enumerate(sayings) if i % 10 == 9]
    t0 = time.time()
    merges = bpe.train(" ".join(train_s), MERGES)
    vocab, mlist = bpe.lesson_keys(merges)
    log("%d sayings; %d merges learned in %.0f s; V = %d" % (len(sayings), len(merges), time.time() - t0, len(vocab)))
    train_ids, held_ids = encode_stream(train_s, merges), encode_stream(held_s, merges)
    n_chars_held = sum(len(s) + 1 for s in held_s)
    log("%d training tokens, %d held out (%.2f characters a token)" % (len(train_ids), len(held_ids),
                                                                        n_chars_held / len(held_ids)))
    model = train(len(vocab), train_ids, log)
    r = measure(model, len(vocab), vocab, merges, train_ids, held_ids, n_chars_held)
    log("held-out loss %.3f nats a token (unigram %.3f); on %r: %s" % (r["held_loss"], r["unigram_loss"], TEXT,
                                                                       " | ".join(r["labels"])))
    log("previous-token weight by head: %s" % r["profile"][:, :, 1].tolist())
    log("first-key weight by head: %s" % r["profile"][:, :, 2].tolist())
    for i, t in enumerate(r["labels"]):
        log("  row %2d %-10s -> %s" % (i, t, "  ".join("%r %.2f" % (vocab[j], q) for j, q in r["top"][i])))
    lesson = build_lesson(model, r, vocab, mlist, len(sayings), len(train_ids))
    problems, diff = check(lesson, model, r)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_bpe_lm.py", "Train the subword (BPE) language model and write its lesson.", DEFAULT_OUT,
                       make, argv)


if __name__ == "__main__":
    sys.exit(main())
