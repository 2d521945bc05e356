#!/usr/bin/python3
"""train_encdec.py: trains a small encoder–decoder (torch.nn.Transformer) to write number words
as digits in reverse order, and writes the shipped lesson lessons/encoder-decoder-reversal.json.

    nice /usr/bin/python3 lessons/train_encdec.py                 # writes lessons/encoder-decoder-reversal.json
    nice /usr/bin/python3 lessons/train_encdec.py --out /tmp/x.json

The task: a source of 5 number words and a full stop ("nine two six four seven .") and its
digits reversed as the target ("7 4 6 2 9"). The decoder reads "<s>" and the digits written so
far and predicts the next one, so target position t must find source word 4 − t: the
cross-attention's alignment is the anti-diagonal.

The model: learned token and position embeddings for each side (d_model 12), nn.Transformer with
2 encoder and 2 decoder layers (post-norm, the default; 2 heads; FFN 8; dropout 0; its
encoder.norm and decoder.norm), a linear layer to the 10 digits. Every sequence is drawn
from a seeded generator; the measurements are on 1000 new ones. CPU, one thread, fixed seeds
and deterministic algorithms: a rerun writes the same bytes. About 10 s of CPU.

The script finds the cross-attention head (of either decoder layer) that puts the most weight
on the aligned source word, and writes nothing unless the model reverses ≥ 99 % of the new
sequences, that head puts ≥ 0.6 of its weight on the aligned word on average and its every row
of the lesson's example picks that word; the narration and the quiz are written from those
numbers. The lesson's blocks (attnviz: l0, l1 the encoder; l2, l4 the decoder's causal
self-attention; l3, l5 its cross-attention) are checked against nn.Transformer by
lessons/torch_encdec.py, and the lesson read back from its JSON must reproduce the model.
The lesson's inputs are the embedded vectors (attnviz computes from nn.Transformer's input on):
the token embedding and the output layer are the script's. Documentation: lessons/README.md.
"""

import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import torch_encdec as T  # noqa: E402
import trained  # noqa: E402
from lesson_file import lesson_text  # noqa: E402

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
SRC_VOCAB = WORDS + ["."]
TGT_VOCAB = [str(d) for d in range(10)] + ["<s>"]
N = 5                      # digits per sequence
LS, LT = N + 1, N          # source: the words and "."; target: "<s>" and the first N − 1 digits
C, H, E, D, FF = 12, 2, 2, 2, 8
SEED, STEPS, BATCH, LR = 3, 600, 64, 3e-3
EXAMPLE = [9, 2, 6, 4, 7]
DEFAULT_OUT = os.path.join(HERE, "encoder-decoder-reversal.json")


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed, self.tgt_embed = nn.Embedding(len(SRC_VOCAB), C), nn.Embedding(len(TGT_VOCAB), C)
        self.src_pos, self.tgt_pos = nn.Parameter(0.5 * torch.randn(LS, C)), nn.Parameter(0.5 * torch.randn(LT, C))
        self.tf = nn.Transformer(C, H, E, D, FF, dropout=0.0, batch_first=True)
        self.out = nn.Linear(C, 10)

    def inputs(self, digits):
        """(src, tgt) embedded, from digits (B, N)."""
        B = digits.shape[0]
        src_ids = torch.cat([digits, torch.full((B, 1), len(WORDS))], 1)
        rev = digits.flip(1)
        tgt_ids = torch.cat([torch.full((B, 1), 10), rev[:, :N - 1]], 1)
        return self.src_embed(src_ids) + self.src_pos, self.tgt_embed(tgt_ids) + self.tgt_pos

    def forward(self, digits):
        src, tgt = self.inputs(digits)
        y = self.tf(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(LT))
        return self.out(y)


def train(log):
    torch.manual_seed(SEED)
    model = Model()
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    t0 = time.time()
    for step in range(1, STEPS + 1):
        digits = torch.randint(0, 10, (BATCH, N), generator=gen)
        loss = F.cross_entropy(model(digits).reshape(-1, 10), digits.flip(1).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            log("step %d: loss %.4f (%.0f s)" % (step, loss.item(), time.time() - t0))
    return model.eval()


def cross_attention(model, digits):
    """Each decoder layer's cross-attention weights (B, H, LT, LS) on digits, from attnviz's stages."""
    src, tgt = model.inputs(digits)
    st = dict(T.stages(model.tf, src.detach(), tgt.detach()))
    return [st["l%d.attn" % (E + 2 * d + 1)] for d in range(D)]


def measure(model, log):
    gen = torch.Generator().manual_seed(SEED + 2)
    digits = torch.randint(0, 10, (1000, N), generator=gen)
    with torch.no_grad():
        acc = float((model(digits).argmax(-1) == digits.flip(1)).all(1).float().mean())
        cross = cross_attention(model, digits)
        ex = cross_attention(model, torch.tensor([EXAMPLE]))
    rows, cols = torch.arange(LT), N - 1 - torch.arange(LT)
    aligned = [[float(a[:, h, rows, cols].mean()) for h in range(H)] for a in cross]
    d, h = max(((d, h) for d in range(D) for h in range(H)), key=lambda dh: aligned[dh[0]][dh[1]])
    ex_rows = ex[d][0, h]
    with torch.no_grad():
        pred = model(torch.tensor([EXAMPLE])).argmax(-1)[0].tolist()
    m = {"acc": acc, "aligned": aligned, "d": d, "h": h, "block": E + 2 * d + 1, "ex": ex_rows, "pred": pred,
         "cross": [[float(a[0, hh].max()) for hh in range(H)] for a in ex]}
    log("reversed %.1f %% of 1000 new sequences; weight on the aligned word per decoder layer and head: %s"
        % (100 * acc, aligned))
    log("the alignment head: decoder layer %d (block l%d), head %d" % (d, m["block"], h))
    return m


def f2(x):
    return "%.2f" % x


def texts(m):
    src = [WORDS[d] for d in EXAMPLE] + ["."]
    out = [str(d) for d in reversed(EXAMPLE)]
    ex = m["ex"]
    n = {"src": " ".join(src), "tgt": " ".join(["<s>"] + out[:N - 1]), "out": " ".join(out),
         "acc": "%.1f" % (100 * m["acc"]), "d": m["d"], "h": m["h"], "b": m["block"],
         "w0": f2(ex[0, N - 1]), "w4": f2(ex[N - 1, 0]), "mean": f2(m["aligned"][m["d"]][m["h"]]),
         "first": src[N - 1], "last": src[0], "other": 1 - m["h"],
         "wo": f2(m["aligned"][m["d"]][1 - m["h"]])}
    title = {"en": "Encoder–decoder: number words to digits, reversed (nn.Transformer, trained)",
             "zh": "编码器–解码器：把数字单词倒序写成数字（nn.Transformer，已训练）"}
    steps = {
        "input": {
            "en": "Source (the keys' side, input.key): “%(src)s”, 6 tokens. Target (input.query): “%(tgt)s”, 5: "
                  "the decoder reads <s> and the digits written so far and writes the next. The task: the digits in "
                  "reverse order, “%(out)s”. The model gets %(acc)s %% of 1000 new sequences right." % n,
            "zh": "源序列（键一侧，input.key）：“%(src)s”，6 个词元。目标（input.query）：“%(tgt)s”，5 个："
                  "解码器读入 <s> 和已写出的数字，写出下一个。任务：倒序写出数字“%(out)s”。"
                  "模型在 1000 个新序列上答对 %(acc)s%%。" % n},
        "l0.attn": {
            "en": "Encoder self-attention (block l0): every source word sees every other, both ways: no mask. "
                  "Rows and columns are the source's 6 tokens." % n,
            "zh": "编码器自注意力（块 l0）：每个源词都能看见所有源词，前后都行，没有掩码。行和列都是源序列的 6 个词元。" % n},
        "l2.mask": {
            "en": "The decoder's own mask (nn.Transformer's tgt_mask): target row t may see the target tokens 0 … t. "
                  "The encoder's blocks and the cross-attention have none: the whole source is known from the start.",
            "zh": "解码器自己的掩码（nn.Transformer 的 tgt_mask）：目标第 t 行只能看目标词元 0 … t。"
                  "编码器的块和交叉注意力没有掩码：整个源序列一开始就都知道。"},
        "l2.attn": {
            "en": "Decoder self-attention (block l2), causal: target row t sees the target tokens 0 … t only "
                  "(the upper triangle is masked): it must not read the digit it is about to write." % n,
            "zh": "解码器自注意力（块 l2），因果掩码：目标第 t 行只能看见目标词元 0 … t（上三角被遮住）："
                  "它不能偷看自己将要写出的数字。" % n},
        "l%d.attn" % m["block"]: {
            "en": "Cross-attention, decoder layer %(d)d (block l%(b)d), head %(h)d: rows are the target, columns the "
                  "source. Row 0 (<s>, about to write the last word's digit) puts %(w0)s on “%(first)s”; row 4 puts %(w4)s "
                  "on “%(last)s”: the anti-diagonal is the alignment. Over 1000 new sequences, %(mean)s of each row's "
                  "weight is on the word it writes (head %(other)d: %(wo)s)." % n,
            "zh": "交叉注意力，解码器第 %(d)d 层（块 l%(b)d）头 %(h)d：行是目标，列是源序列。第 0 行（<s>，将写出最后一个词的"
                  "数字）把 %(w0)s 的权重放在“%(first)s”上；第 4 行把 %(w4)s 放在“%(last)s”上：反对角线就是对齐。"
                  "在 1000 个新序列上，每行平均 %(mean)s 的权重落在它要写的词上（头 %(other)d：%(wo)s）。" % n,
            "head": m["h"]},
    }
    quiz = [{"id": "alignment", "stage": "l%d.attn" % m["block"], "batch": 0, "head": m["h"], "cell": [1],
             "question": {"en": "Cross-attention block l%(b)d, head %(h)d, row 1 (the target “%(o0)s”, about to "
                                "write the next digit): which source position gets the most weight?" % dict(n, o0=out[0]),
                          "zh": "交叉注意力块 l%(b)d 头 %(h)d，第 1 行（目标“%(o0)s”，将写出下一个数字）："
                                "哪个源位置得到的权重最多？" % dict(n, o0=out[0])},
             "answer": N - 2,
             "explanation": {"en": "Position %d, “%s” (%s): the digit written next is %s, the second from the end of "
                                   "the source." % (N - 2, src[N - 2], f2(ex[1, N - 2]), out[1]),
                             "zh": "位置 %d，“%s”（%s）：下一个要写的数字是 %s，即源序列倒数第二个词。"
                                   % (N - 2, src[N - 2], f2(ex[1, N - 2]), out[1])}}]
    notes = {"input": {"en": "Ask what the decoder needs from the source to write the first digit (the last word).",
                       "zh": "问学生：解码器要写第一个数字，需要源序列里的哪个词（最后一个词）。"},
             "l0.attn": {"en": "No mask here: the encoder reads the whole source at once.",
                         "zh": "这里没有掩码：编码器一次读完整个源序列。"},
             "l2.mask": {"en": "Ask why the decoder may not see the digits after its own (it writes them next).",
                         "zh": "问学生：为什么解码器不能看它后面的数字（那是它接下来要写的）。"},
             "l2.attn": {"en": "Compare with l0: the same computation, with the causal mask.",
                         "zh": "与 l0 对比：计算相同，只是多了因果掩码。"},
             "l%d.attn" % m["block"]: {
        "en": "Switch heads (H): head %(h)d draws the anti-diagonal. Ask why reversing makes it anti-diagonal and "
              "what a word-for-word translation would draw (the diagonal)." % n,
        "zh": "按 H 切换头：头 %(h)d 画出反对角线。问学生：为什么倒序得到反对角线？逐词翻译会画出什么（主对角线）？" % n}}
    return title, steps, notes, quiz, src


def build_lesson(model, m):
    title, steps, notes, quiz, src = texts(m)
    with torch.no_grad():
        s, t = model.inputs(torch.tensor([EXAMPLE]))
    return {
        "title": title,
        "description": {"en": "Written by lessons/train_encdec.py: nn.Transformer trained to reverse number words "
                              "into digits; the inputs are the embedded tokens.",
                        "zh": "由 lessons/train_encdec.py 生成：训练 nn.Transformer 把数字单词倒序写成数字；"
                              "输入是嵌入后的词元。"},
        "model": T.lesson_model(model.tf),
        "input": {"query": T._t(t), "key": T._t(s)},
        "weights": T.lesson_weights(model.tf),
        "tokens": {"query": ["<s>"] + [str(d) for d in reversed(EXAMPLE)][:N - 1], "key": src},
        "steps": steps,
        "notes": notes,
        "quiz": quiz,
    }


def check(lesson, model, m):
    problems = []
    d, h = m["d"], m["h"]
    if m["acc"] < 0.99:
        problems.append("the model reverses only %.1f %% of the new sequences" % (100 * m["acc"]))
    if m["aligned"][d][h] < 0.6:
        problems.append("no cross-attention head aligns (the best puts %.2f on the aligned word)" % m["aligned"][d][h])
    if [int(m["ex"][t].argmax()) for t in range(LT)] != [N - 1 - t for t in range(LT)]:
        problems.append("the example: a row of the alignment head does not pick its word")
    if m["pred"] != list(reversed(EXAMPLE)):
        problems.append("the example is not reversed: %s" % m["pred"])
    problems += trained.text_problems(lesson) + trained.narration_problems(lesson)
    import gen_encdec  # the lesson read back from its JSON into an nn.Transformer
    path = os.path.join("/tmp", "encdec-check-%d.json" % os.getpid())
    with open(path, "w", encoding="utf-8") as f:
        f.write(lesson_text(lesson))
    try:
        _, tf, src, tgt = gen_encdec.from_lesson(path)
    finally:
        os.unlink(path)
    with torch.no_grad():
        s, t = model.inputs(torch.tensor([EXAMPLE]))
        want = model.tf(s, t, tgt_mask=nn.Transformer.generate_square_subsequent_mask(LT))
        got = tf(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(LT))
    diff = float((want - got).abs().max())
    if diff > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % diff)
    return problems, diff


def make(log):
    log("training %d steps of %d sequences, seed %d (torch %s)" % (STEPS, BATCH, SEED, torch.__version__))
    model = train(log)
    m = measure(model, log)
    lesson = build_lesson(model, m)
    problems, diff = check(lesson, model, m)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_encdec.py", "Train the encoder–decoder and write its lesson.", DEFAULT_OUT, make, argv)


if __name__ == "__main__":
    sys.exit(main())
