#!/usr/bin/python3
"""train_subword_lm.py: a 4-layer subword (byte-level BPE) language model trained on English
fortunes, and its lesson lessons/subword-lm-fortunes.json: a student's own sentence through a
real (small) language model. Its narration names only the heads the measurements support
(lessons/README.md, "Subwords"): previous-token heads in layer 0 and, after the 20000-step
schedule, an induction head; the script refuses to write the lesson when a claim does not hold.

    /usr/bin/python3 lessons/train_subword_lm.py                # 20000 steps: about 35 min on a
                                                                # quiet core, over an hour at load ~6
    /usr/bin/python3 lessons/train_subword_lm.py --out /tmp/x.json
    SUBWORD_WEIGHTS=w.pt /usr/bin/python3 lessons/train_subword_lm.py   # trains once, saves w.pt;
                                                                # later runs measure w.pt again
    /usr/bin/python3 lessons/train_subword_lm.py --digest 200   # the first 200 steps: the weights' sha256

The text and the tokenizer are lessons/train_bpe_lm.py's (fifteen classroom files of Debian's
package `fortunes`, BSD licence, /usr/share/doc/fortunes/copyright; every tenth saying held
out); byte-level BPE with 512 merges, V = 768, any text tokenizes, the merges learned from the
chunks the model reads (each saying and the space after it cut on its own, so a sentence's
first "The" is one token).

The model (trained.TinyGPT): learned token and position embeddings (P = 64 positions; the
positions start from the original Transformer's sinusoids, scaled to the tokens' N(0, 1), and
are learned from there), 4 pre-norm blocks (LayerNorm, causal self-attention with 4 heads of
d_k 16, d_model 64, a GELU feed-forward of 256), a final LayerNorm and an untied unembedding:
302,464 numbers. Trained on random 64-token windows of the token stream; in half of each batch's
windows a stretch of 8-31 tokens from elsewhere is written twice at a random place (text
repeats names and phrases, but 64 tokens of fortunes rarely do, and copying is what makes
induction heads form), loss on every position; AdamW (lr 6e-3, weight decay 0.1, 300 warm-up
steps, a cosine schedule of 20000 steps), batches of 32; CPU, one thread, fixed seeds,
deterministic algorithms. Every 500 steps it logs the training loss and (probe) the heads'
weight on the token before and on the first key.

The heads are named from numbers measured on held-out text (previous token, first key,
delimiters) and on stretches of held-out text written twice (induction: a row in the second
copy looking at the key after its token's first occurrence); the narration and the quiz are
written from those numbers, the script refuses to write the lesson when a claim does not hold,
and it runs the lesson again from its own JSON (lessons/lesson_torch.py) and compares it with
the model.

--digest N trains the first N steps exactly as the full run does (same seeds, batches and
schedule) and prints the sha256 of the weights; tests/train_lessons_test.sh (make test-full)
compares it with tests/ref/subword_lm_digest.txt."""

import argparse
import hashlib
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
import trained  # noqa: E402
from train_bpe_lm import MERGES, encode_stream, f2, load_sayings  # noqa: E402

SEED = 3
P = 64
C, H, N_LAYERS, FFN = 64, 4, 4, 256
POS_SCALE = 1.0                  # position embeddings as large as the token embeddings' N(0, 1)
POS_INIT = "sin"                 # ... and starting from the original Transformer's sinusoids
EPS = 1e-5
FILL = -1e9
# a cosine schedule of SCHEDULE steps, stopped after STEPS (a step takes 0.1 s on one thread
# of a quiet 2-core Zen 4, 0.3 s at load ~6). At 5000 steps no induction head had formed (the
# best head gave the key after the earlier copy 0.06); with the 20000-step schedule it starts
# forming after ~3000 steps (0.10) and passes 0.3 at ~7500
STEPS, SCHEDULE, BATCH, LR, WD, WARMUP = 20000, 20000, 32, 6e-3, 0.1, 300
REPEATED = 0.5                   # the share of a batch's windows that hold a stretch of text twice
DIGEST_STEP = 200
REPEAT = 24                      # the induction test: REPEAT tokens of held-out text, then the same again
TEXT = "Mary had a little lamb. Mary had a little"   # (the second "little": copied from the first)
DEFAULT_OUT = os.path.join(HERE, "subword-lm-fortunes.json")
DIGEST_FILE = os.path.join(HERE, "..", "tests", "ref", "subword_lm_digest.txt")


def windows(gen, stream, B, L=P + 1):
    start = torch.randint(0, len(stream) - L, (B,), generator=gen)
    w = stream[start[:, None] + torch.arange(L)[None, :]]
    return w[:, :-1], w[:, 1:]


def training_windows(gen, stream, B):
    """A training batch: B random windows; in the first REPEATED·B of them a stretch of the
    text (8 to 31 tokens, from elsewhere in the stream) is written twice in a row at a random
    place (text repeats names and phrases, but 64 tokens of fortunes rarely do, and copying is
    what makes induction heads form). Lengths and places vary, so only reading the earlier copy
    predicts the second (a head looking a fixed distance back would not)."""
    x, y = windows(gen, stream, B)
    w = torch.cat([x, y[:, -1:]], 1)
    for b in range(int(B * REPEATED)):
        n = int(torch.randint(8, 32, (1,), generator=gen))
        at = int(torch.randint(0, P + 1 - 2 * n, (1,), generator=gen))
        src = int(torch.randint(0, len(stream) - n, (1,), generator=gen))
        w[b, at:at + n] = w[b, at + n:at + 2 * n] = stream[src:src + n]
    return w[:, :-1], w[:, 1:]


def probe_heads(held_ids, log):
    """A probe for train(): on 64 held-out windows (their own generator: training's draws are
    untouched), the held-out loss and each layer's best weight on the token before and on the
    first key (rows 8..P-1), so a run shows whether heads are forming while it trains."""
    x, y = windows(torch.Generator().manual_seed(SEED + 1000), held_ids, 64)
    rows = torch.arange(8, P)

    def probe(model, step):
        with torch.no_grad():
            logits, attns = model(x)
        loss = float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)))
        prev = ["%.2f" % float(a[:, :, rows, rows - 1].mean((0, 2)).max()) for a in attns]
        first = ["%.2f" % float(a[:, :, rows, 0].mean((0, 2)).max()) for a in attns]
        log("      held-out loss %.3f; best head a layer: previous token %s, first key %s"
            % (loss, " ".join(prev), " ".join(first)))
    return probe


def digest(model):
    h = hashlib.sha256()
    for t in model.parameters():
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def train(V, train_ids, log, steps=STEPS, probe=None):
    torch.manual_seed(SEED)
    model = trained.TinyGPT(V, C, H, P, N_LAYERS, FFN, EPS, FILL, POS_SCALE, POS_INIT)
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    t0, run, every, dig = time.time(), 0.0, 500, None
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = LR * min(1.0, step / WARMUP) * 0.5 * (1 + math.cos(math.pi * (step - 1) / SCHEDULE))
        x, y = training_windows(gen, train_ids, BATCH)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        run += loss.item()
        if step == DIGEST_STEP:
            dig = digest(model)
        if step % every == 0:
            log("step %5d  training loss %.3f  (%.0f s)" % (step, run / every, time.time() - t0))
            if probe:
                probe(model, step)
            run = 0.0
    model.eval()
    return model, dig, time.time() - t0


# ----------------------------------------------------------------------------
# measured
# ----------------------------------------------------------------------------

def is_delimiter(tok):
    """A token of punctuation only (with its space): . , ; : ! ? and the like."""
    t = tok.strip()
    return bool(t) and all(bpe.byte_class(b) == 3 for b in t)


def measure(model, V, vocab, merges, train_ids, held_ids):
    r = {}
    x, y = windows(torch.Generator().manual_seed(SEED + 2000), held_ids, 512)
    r["held_loss"], r["unigram_loss"], attns = trained.held_and_unigram_loss(model, x, y, V, train_ids, held_ids)
    # per layer and head, rows 8..P-1 of held-out windows: the weight on the token before, on
    # the first key, and on delimiter keys (with the share of keys that are delimiters)
    rows = torch.arange(8, P)
    delim = torch.tensor([is_delimiter(bpe.token_bytes(merges)[i]) for i in range(V)])
    dk = delim[x].float()                                           # (B, P): key j is a delimiter
    causal = torch.tril(torch.ones(P, P))
    share = float(((causal @ dk.T).T / causal.sum(1))[:, rows].mean())
    prof = torch.zeros(N_LAYERS, H, 4)
    for li, a in enumerate(attns):
        prof[li, :, 0] = a[:, :, rows, rows - 1].mean((0, 2))
        prof[li, :, 1] = a[:, :, rows, 0].mean((0, 2))
        prof[li, :, 2] = (a[:, :, rows, :] * dk[:, None, None, :]).sum(-1).mean((0, 2))
    r["delim_share"] = share
    r["even_share"] = float((1.0 / (rows + 1)).mean())             # a row spread evenly: its share a key
    r["peak"] = torch.stack([a[:, :, rows, :].max(-1).values.mean((0, 2)) for a in attns])  # (layer, head)
    # induction: REPEAT tokens of held-out text, then the same again (what a student does who
    # types a sentence twice)
    g = torch.Generator().manual_seed(SEED + 3000)
    st = torch.randint(0, len(held_ids) - REPEAT, (256,), generator=g)
    first = held_ids[st[:, None] + torch.arange(REPEAT)[None, :]]
    seq = torch.cat([first, first], 1)
    with torch.no_grad():
        logits, attns = model(seq)
    rr = torch.arange(REPEAT, 2 * REPEAT)
    for li, a in enumerate(attns):
        prof[li, :, 3] = a[:, :, rr, rr - REPEAT + 1].mean((0, 2))
    lp = F.log_softmax(logits, -1)
    nll = -lp[:, :-1].gather(-1, seq[:, 1:, None])[..., 0]
    r["loss_first"] = float(nll[:, : REPEAT - 1].mean())
    r["loss_second"] = float(nll[:, REPEAT:].mean())
    r["profile"] = prof
    for k, name in enumerate(("prev", "sink", "delim", "induction")):
        flat = int(prof[:, :, k].flatten().argmax())
        r[name] = (flat // H, flat % H, float(prof[:, :, k].flatten().max()))
    # the students' sentence
    ids = bpe.encode(TEXT, merges)
    r["ids"] = ids
    r["labels"] = [vocab[i].replace(" ", "␣") for i in ids]
    with torch.no_grad():
        logits, attns = model(torch.tensor([ids]))
    r["probs"] = torch.softmax(logits, -1)[0]
    r["attns"] = [a[0] for a in attns]
    r["top"] = [[(int(j), float(q)) for q, j in zip(*r["probs"][i].topk(3))] for i in range(len(ids))]
    r["n_params"] = sum(t.numel() for t in model.parameters())
    return r


# ----------------------------------------------------------------------------
# the lesson's texts, from the measurements
# ----------------------------------------------------------------------------

KIND = {"prev": ("a previous-token head", "“前一个词元”头"),
        "sink": ("a first-token (sink) head", "“第一个词元”（汇）头"),
        "delim": ("a delimiter head", "分隔符头"),
        "induction": ("an induction (copy) head", "归纳（复制）头")}


def named_heads(r):
    """The heads the narration names: {kind: (layer, head, measured)} for the clear ones."""
    out = {}
    # the token before: 0.3 of a row and five times an evenly spread row's share (rows 8-63 have
    # 9-64 keys: 0.036 a key); the first key as a sink: half a row; induction: 0.3
    for k, bar in (("prev", max(0.3, 5 * r["even_share"])), ("sink", 0.5), ("induction", 0.3)):
        if r[k][2] >= bar:
            out[k] = r[k]
    if r["delim"][2] >= 0.3 and r["delim"][2] >= 3 * r["delim_share"]:
        out["delim"] = r["delim"]
    return out


def head_claim(kind, r, lab, zh, detail=True):
    """What head r[kind] does, measured; detail: and what it does on the lesson's last row."""
    li, h, v = r[kind]
    last = len(lab) - 1
    a = r["attns"][li][h]
    j = int(a[last].argmax())
    if kind == "prev":
        main = (("头 %d 是%s：在留出文本上一行把 %s 给前一个词元（均匀分配时每个键 %s）" if zh else
                 "Head %d is %s: on held-out text a row gives %s to the token before it (spread evenly: %s a key)")
                % (h, KIND[kind][zh], f2(v), f2(r["even_share"])))
        more = (("；第 %d 行（“%s”）给键 %d %s" if zh else "; row %d (“%s”) gives key %d %s")
                % (last, lab[last], last - 1, f2(a[last, last - 1])))
        bar = max(0.3, 5 * r["even_share"])
        also = [(g, float(r["profile"][li, g, 0])) for g in range(H) if g != h and r["profile"][li, g, 0] >= bar]
        if also:
            more += (("。头 %s 也是：%s" if zh else ". Heads %s do the same: %s") %
                     ("、".join(str(g) for g, _ in also) if zh else ", ".join(str(g) for g, _ in also),
                      ("、" if zh else ", ").join(f2(v) for _, v in also)))
    elif kind == "sink":
        main = (("头 %d 是%s：一行平均把 %s 给第一个键（没有别处可看时的停靠处）" if zh else
                 "Head %d is %s: a row gives %s on average to the first key (where it parks when nothing else "
                 "matters)") % (h, KIND[kind][zh], f2(v)))
        more = ("；第 %d 行给键 0 %s" if zh else "; row %d gives key 0 %s") % (last, f2(a[last, 0]))
    elif kind == "delim":
        main = (("头 %d 是%s：它把 %s 给标点词元，而标点只占键的 %s" if zh else
                 "Head %d is %s: it gives %s to punctuation tokens, which are %s of the keys")
                % (h, KIND[kind][zh], f2(v), f2(r["delim_share"])))
        more = ("；第 %d 行给键 %d “%s” %s" if zh else "; row %d gives key %d, “%s”, %s") % (last, j, lab[j], f2(a[last, j]))
    else:
        main = (("头 %d 是%s：留出文本的 %d 个词元写两遍，第二遍的一行把 %s 给同一词元上次出现后的那个键（损失从 %s 降到 %s）" if zh else
                 "Head %d is %s: on %d tokens of held-out text written twice, a row of the repeat gives %s to the key "
                 "after its token's earlier copy (the loss falls from %s to %s)")
                % (h, KIND[kind][zh], REPEAT, f2(v), f2(r["loss_first"]), f2(r["loss_second"])))
        more = (("；第 %d 行（“%s”）最看重键 %d “%s”（%s）。没有先前的副本时，它停在键 0：在留出文本上键 0 平均得到一行的 %s" if zh else
                 "; row %d (“%s”) looks most at key %d, “%s” (%s). With no earlier copy it parks on key 0: on "
                 "held-out text key 0 gets %s of a row")
                % (last, lab[last], j, lab[j], f2(a[last, j]), f2(r["profile"][li, h, 1])))
    return main + (more if detail else "") + ("。" if zh else ".")


def expected_key(kind, ids):
    """Where the last row of ids looks in a head of this kind: the token before (previous
    token) or the one after its token's earlier occurrence (induction); None if none."""
    last = len(ids) - 1
    if kind == "prev":
        return last - 1
    earlier = [e for e in range(last) if ids[e] == ids[last]]
    return earlier[-1] + 1 if earlier else None


def texts(r, vocab):
    lab, top = r["labels"], r["top"]
    L, last = len(lab), len(lab) - 1
    loss, uni = f2(r["held_loss"]), f2(r["unigram_loss"])
    heads = named_heads(r)
    split = " | ".join(lab)

    def tl(i, zh=False):
        sep = "、" if zh else ", "
        return sep.join("“%s” %s" % (vocab[j].replace(" ", "␣"), f2(q)) for j, q in top[i])

    title = {"en": "Subwords: a 4-layer model and its heads on a sentence of the class",
             "zh": "子词：四层模型和它的头读班上的一句话"}
    description = {
        "en": "Byte-level BPE (%d merges, V = %d) and a GPT-like model (d_model %d, %d heads, %d pre-norm layers, "
              "context %d, %d numbers) trained on Debian's fortunes by lessons/train_subword_lm.py. Held-out "
              "loss %s nats a token (token frequencies alone: %s)."
              % (MERGES, len(vocab), C, H, N_LAYERS, P, r["n_params"], loss, uni),
        "zh": "字节级 BPE（%d 次合并，V = %d）和类 GPT 模型（d_model %d，%d 个头，%d 层前置归一化，上下文 %d，"
              "%d 个数），由 lessons/train_subword_lm.py 在 Debian 的 fortunes 上训练。留出损失每词元 %s 奈特"
              "（只用词元频率：%s）。" % (MERGES, len(vocab), C, H, N_LAYERS, P, r["n_params"], loss, uni)}
    steps = {
        "input": {
            "en": "“%s”: %d tokens: %s. A token is a word or a piece of one with the space before it (␣). "
                  "Press I and type your own sentence: nothing is refused, a byte no merge covers is a token "
                  "of its own." % (TEXT, L, split),
            "zh": "“%s”：%d 个词元：%s。词元是带着前面空格（␣）的词或词的一部分。按 I 输入你自己的句子："
                  "什么都不会被拒绝，没有合并覆盖的字节自己就是一个词元。" % (TEXT, L, split)},
        "logits": {
            "en": "The unembedding (%d × %d) turns each row into a score for every one of the %d tokens."
                  % (len(vocab), C, len(vocab)),
            "zh": "反嵌入（%d × %d）把每一行变成全部 %d 个词元各自的分数。" % (len(vocab), C, len(vocab))},
        "probs": {
            "en": "After the last “%s” (row %d): %s. Held-out loss %s nats a token; token frequencies alone "
                  "give %s. R appends the most likely token, Shift+R draws one." % (lab[last], last, tl(last), loss, uni),
            "zh": "最后一个“%s”之后（第 %d 行）：%s。留出损失每词元 %s 奈特；只用词元频率是 %s。"
                  "R 追加最可能的词元，Shift+R 抽一个。" % (lab[last], last, tl(last, True), loss, uni)},
    }
    notes = {
        "input": {"en": "Ask a student for a sentence, type it with I, and watch where its words split.",
                  "zh": "请一位同学说一句话，按 I 输入，看它的词在哪里分开。"},
        "logits": {"en": "The heatmap has one column per token of the vocabulary: the bright ones are the guesses.",
                   "zh": "热图每一列是词表中的一个词元：亮的就是模型的猜测。"},
        "probs": ({"en": "Press R a few times: the repeated words come back, copied by the induction head.",
                   "zh": "按几次 R：重复的词又回来了，是归纳头复制的。"} if "induction" in heads else
                  {"en": "Press R a few times and read each new row's guesses: a small model's next words.",
                   "zh": "按几次 R，读每个新行的猜测：一个小模型的下一个词。"}),
    }
    for li in range(N_LAYERS):
        here = [k for k in ("prev", "sink", "delim", "induction") if k in heads and heads[k][0] == li]
        # each head's claim with its row's detail, at the layer's softmax (lN.attn); a claim that
        # does not fit the narration's width (trained.narration_problems) goes to attn·V
        for key in ("l%d.attn" % li, "l%d.weighted_sum" % li):
            if not here:
                break
            for n in range(len(here), 0, -1):
                en = "Layer %d. " % li + " ".join(head_claim(k, r, lab, False) for k in here[:n])
                zh = "第 %d 层。" % li + "".join(head_claim(k, r, lab, True) for k in here[:n])
                if max(trained.text_width(en), trained.text_width(zh)) <= 350:
                    break
            steps[key] = {"en": en, "zh": zh, "head": heads[here[0]][1]}  # (opens on the head it names)
            here = here[n:]
            notes[key] = {"en": "Switch heads with H and compare: the named head's pattern is the same on any sentence.",
                          "zh": "按 H 换头比较：被点名的头在任何句子上都是同样的图样。"}
        if not any(k in heads and heads[k][0] == li for k in heads):
            pk = r["peak"][li]
            steps["l%d.attn" % li] = {
                "en": "Layer %d. No head here has one pattern: on held-out text a row's largest weight is %s to %s "
                      "on average, the token before gets at most %s, and where a row looks changes from sentence "
                      "to sentence (%s numbers trained on %.1f million tokens)."
                      % (li, f2(pk.min()), f2(pk.max()), f2(r["profile"][li, :, 0].max()), "{:,}".format(r["n_params"]),
                         STEPS * BATCH * P / 1e6),
                "zh": "第 %d 层。这里没有哪个头有固定的图样：在留出文本上一行最大的权重平均是 %s 到 %s，前一个词元最多得到 %s，"
                      "一行看向哪里随句子而变（%s 个数，训练了 %.0f 万个词元）。"
                      % (li, f2(pk.min()), f2(pk.max()), f2(r["profile"][li, :, 0].max()), "{:,}".format(r["n_params"]),
                         STEPS * BATCH * P / 1e4)}
            notes["l%d.attn" % li] = {"en": "Type a sentence with I and switch heads with H: compare with layer 0.",
                                      "zh": "按 I 输入一句话，按 H 换头：和第 0 层比较。"}
    quiz = []
    for kind, qid in (("induction", "induction"), ("prev", "previous-token")):
        if kind not in heads:
            continue
        li, h, _ = heads[kind]
        a = r["attns"][li][h]
        j = int(a[last].argmax())
        if j != expected_key(kind, r["ids"]):
            continue  # (asked only where the sentence shows what the head does)
        quiz.append({"id": qid, "stage": "l%d.attn" % li, "batch": 0, "head": h, "cell": [last],
                     "question": {"en": "Layer %d, head %d, row %d (the last “%s”): which key gets the most weight?"
                                        % (li, h, last, lab[last]),
                                  "zh": "第 %d 层头 %d，第 %d 行（最后一个“%s”）：哪个键得到的权重最多？"
                                        % (li, h, last, lab[last])},
                     "answer": j,
                     "explanation": {"en": "Key %d, “%s”, with %s: %s." % (j, lab[j], f2(a[last, j]), KIND[kind][0]),
                                     "zh": "键 %d，“%s”，%s：%s。" % (j, lab[j], f2(a[last, j]), KIND[kind][1])}})
    return title, description, steps, notes, quiz


def build_lesson(model, r, vocab, mlist):
    return trained.bpe_gpt_lesson(model, texts(r, vocab), vocab, mlist, TEXT, N_LAYERS, C, H, FFN, P, EPS)


def check(lesson, model, r):
    problems = []
    heads = named_heads(r)
    if r["held_loss"] > r["unigram_loss"] - 1.0:
        problems.append("the model does not beat token frequencies clearly (%.3f vs %.3f)"
                        % (r["held_loss"], r["unigram_loss"]))
    for k in ("prev",):
        if k not in heads:
            problems.append("not clear enough: %s (best layer, head, weight: %s)" % (KIND[k][0], r[k]))
    if "induction" in heads:
        li, h, _ = heads["induction"]
        if r["loss_second"] > r["loss_first"] - 1.0:
            problems.append("the second copy is not predicted clearly better (%.3f vs %.3f)"
                            % (r["loss_second"], r["loss_first"]))
    if not lesson["quiz"]:
        problems.append("no quiz question")
    problems += trained.text_problems(lesson) + trained.narration_problems(lesson)
    diff = trained.json_max_diff(lesson, model, torch.tensor([r["ids"]]))
    if diff > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % diff)
    return problems, diff


def corpus(log):
    sayings = load_sayings()
    train_s = [s for i, s in enumerate(sayings) if i % 10 != 9]
    held_s = [s for i, s in enumerate(sayings) if i % 10 == 9]
    # the merges are learned from the chunks the model reads: each saying (and its space) cut
    # on its own, so a saying's first word has no space before it ("The", not "T" + "he")
    merges = bpe.train([s + " " for s in train_s], MERGES)
    vocab, mlist = bpe.lesson_keys(merges)
    train_ids, held_ids = encode_stream(train_s, merges), encode_stream(held_s, merges)
    log("%d sayings, V = %d; %d training tokens, %d held out" % (len(sayings), len(vocab), len(train_ids),
                                                                 len(held_ids)))
    return merges, vocab, mlist, train_ids, held_ids


def make(log, cache=None):
    merges, vocab, mlist, train_ids, held_ids = corpus(log)
    if cache and os.path.exists(cache):       # SUBWORD_WEIGHTS: an earlier run's weights, measured again
        model = trained.TinyGPT(len(vocab), C, H, P, N_LAYERS, FFN, EPS, FILL, POS_SCALE, POS_INIT)
        model.load_state_dict(torch.load(cache))
        model.eval()
    else:
        model, dig, sec = train(len(vocab), train_ids, log, probe=probe_heads(held_ids, log))
        log("%d steps in %.0f s; weights after %d steps: sha256 %s" % (STEPS, sec, DIGEST_STEP, dig))
        if cache:
            torch.save(model.state_dict(), cache)
    r = measure(model, len(vocab), vocab, merges, train_ids, held_ids)
    log("%d numbers; held-out loss %.3f nats a token (unigram %.3f)" % (r["n_params"], r["held_loss"],
                                                                       r["unigram_loss"]))
    names = ("previous token", "first key", "delimiters (share %.2f)" % r["delim_share"], "induction")
    for k, name in enumerate(names):
        log("%s by layer and head: %s" % (name, [["%.2f" % v for v in row] for row in r["profile"][:, :, k].tolist()]))
    log("held-out text written twice: loss %.3f on the first copy, %.3f on the second" % (r["loss_first"], r["loss_second"]))
    log("on %r: %s" % (TEXT, " | ".join(r["labels"])))
    for i, t in enumerate(r["labels"]):
        log("  row %2d %-8s -> %s" % (i, t, "  ".join("%r %.2f" % (vocab[j], q) for j, q in r["top"][i])))
    lesson = build_lesson(model, r, vocab, mlist)
    problems, diff = check(lesson, model, r)
    return lesson, problems, diff


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--digest" in argv:
        ap = argparse.ArgumentParser(description="The weights' sha256 after the first N training steps.")
        ap.add_argument("--digest", type=int, required=True)
        n = ap.parse_args(argv).digest
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)
        _, vocab, _, train_ids, _ = corpus(lambda *a: None)
        model, _, _ = train(len(vocab), train_ids, lambda *a: None, steps=n)
        print(digest(model))
        return 0
    cache = os.environ.get("SUBWORD_WEIGHTS")
    return trained.run("train_subword_lm.py", "Train the 4-layer subword language model and write its lesson.",
                       DEFAULT_OUT, lambda log: make(log, cache), argv)


if __name__ == "__main__":
    sys.exit(main())
