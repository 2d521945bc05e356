#!/usr/bin/python3
"""Trains the vision transformer of lessons/vision-digits.json on scikit-learn's 8×8 digits.

The data: scikit-learn's `load_digits` (Debian's python3-sklearn, BSD licence; the images are the
UCI "Optical Recognition of Handwritten Digits" set, E. Alpaydin and C. Kaynak, 1998): 1,797
images of 8 × 8 pixels, each pixel 0–16 (scaled to 0–1), digits 0–9. A fixed permutation (torch.Generator seeded 2)
holds one image in five out (360); the model never trains on them.

The model (lessons/torch_vit.py, Dosovitskiy et al. 2020): patches of 2 × 2 pixels (16 patches and
[CLS]: 17 tokens), d_model 12, 2 pre-norm layers of 3 heads (d_k 4), a GELU feed-forward of 8, a
final LayerNorm and a linear head to 10 classes. AdamW (lr 3e-3, cosine decay, weight decay 0.01),
60 epochs of batches of 64, the cross-entropy of the [CLS] row's class.

The lesson's input: ten held-out images, batch b the first held-out image of digit b (the window's
B steps through them: pick a digit by its number). The narration, notes and quiz are written from
what the script measures; it writes nothing when a claim does not hold, and compares the lesson run
from its own JSON with the model.

    /usr/bin/python3 lessons/train_vit.py                   # writes lessons/vision-digits.json
    /usr/bin/python3 lessons/train_vit.py --out /tmp/x.json # anywhere else
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trained  # noqa: E402  (the command line and the write, shared)
from torch_vit import VisionTransformer  # noqa: E402

SEED = 1
EPOCHS, BATCH, LR = 60, 64, 3e-3
# d_model 12 and a feed-forward of 8 keep the feed-forward's four panels (17 rows with [CLS]) at
# 10 px cells at 800×600 (tests/test_render.c's test_layout); 16 and 12 gave 9 px
D_MODEL, HEADS, FFN = 12, 3, 8


def load_digits():
    try:
        from sklearn.datasets import load_digits as sk_load
    except ImportError:
        sys.exit("train_vit.py: scikit-learn is missing; expected Debian's python3-sklearn (apt-get install python3-sklearn)")
    d = sk_load()
    # pixels 0–16 scaled to 0–1 (÷ 16: exact in float32), as the lesson shows them
    return torch.tensor(d.images, dtype=torch.float32) / 16, torch.tensor(d.target, dtype=torch.int64)


def cls_ink_share(vit, x):
    """The last layer's [CLS] row, averaged over heads, over the patches: the share of its weight on
    patches with ink (any pixel > 0), and the share of such patches; both averaged over x."""
    with torch.no_grad():
        vit(x)
    st = dict(vit.stages())
    last = "l%d.attn" % (len(vit.blocks.layers) - 1)
    a = st[last][:, :, 0, 1:].mean(1)                                    # (B, N)
    ink = (st["patches"].amax(-1) > 0).float()                           # (B, N)
    return float((a * ink).sum(1).mean()), float(ink.mean(1).mean()), a, ink


def make(log):
    torch.manual_seed(SEED)
    images, labels = load_digits()
    g = torch.Generator().manual_seed(SEED + 1)
    perm = torch.randperm(len(images), generator=g)
    test = perm[: len(images) // 5]
    train = perm[len(images) // 5:]
    vit = VisionTransformer(8, 8, 2, D_MODEL, HEADS, 2, FFN, 10)
    opt = torch.optim.AdamW(vit.parameters(), lr=LR, weight_decay=0.01)
    steps = EPOCHS * math.ceil(len(train) / BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
    step = 0
    for ep in range(EPOCHS):
        order = train[torch.randperm(len(train), generator=g)]
        for i in range(0, len(order), BATCH):
            idx = order[i:i + BATCH]
            loss = F.cross_entropy(vit(images[idx], record=False)[:, 0], labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
        if ep % 10 == 9:
            log("epoch %d: loss %.3f" % (ep + 1, loss.item()))
    vit.eval()
    with torch.no_grad():
        pred = vit(images[test], record=False)[:, 0].argmax(-1)
    acc = float((pred == labels[test]).float().mean())
    share, ink_frac, _, _ = cls_ink_share(vit, images[test])
    log("held-out accuracy %.1f%% (%d images); [CLS] on ink patches %.2f (ink patches %.2f of all)"
        % (100 * acc, len(test), share, ink_frac))
    # the lesson's ten images: the first held-out image of each digit, batch b = digit b
    pick = [int(test[(labels[test] == d).nonzero()[0, 0]]) for d in range(10)]
    x = images[pick]
    with torch.no_grad():
        vit(x)
    st = dict(vit.stages())
    probs = st["probs"][:, 0]
    top = probs.argmax(-1).tolist()
    right = sum(int(t == d) for d, t in enumerate(top))
    s0, f0, a, ink = cls_ink_share(vit, x)
    problems = []
    if acc < 0.9:
        problems.append("held-out accuracy %.3f, under the 0.9 the narration claims" % acc)
    if top[0] != 0:
        problems.append("image 0 (a 0) is not predicted 0")
    l1 = [(p, float(a[0, p])) for p in range(16)]
    l1.sort(key=lambda t: -t[1])
    best = l1[0][0] + 1  # the label of the patch: 1 … 16
    c0 = float(probs[0, 0])
    wrong = [(d, t) for d, t in enumerate(top) if t != d]
    acc_t, share_t = "%.1f" % (100 * acc), "%.2f" % share
    en = {
        "patches": "The image, 8 × 8 pixels from 0 (blank) to 1 (full ink; the data's 0–16 ÷ 16), cut into 16 patches of 2 × 2: each row "
                   "here is one patch, its 4 pixels read row by row. Patch 1 is the top-left corner, patch 4 the "
                   "top-right, patch 16 the bottom-right. B steps through the ten images: image b is a b.",
        "patch_embed": "Each patch's 4 pixels times W_P (%d × 4) plus b_P: a patch becomes a %d-number token, as a "
                       "word would. A blank patch (all 0) gets b_P alone, so every blank patch gets the same row." % (D_MODEL, D_MODEL),
        "cls_concat": "A learned row, [CLS], goes in front of the 16 patches: it holds no pixels. Its output at the "
                      "end is what the model classifies, so it has to gather the image through attention.",
        "pos_embed": "One learned row per token (17): without them the model could not tell patch 1 from patch 16.",
        "attn": "Row CLS of the last layer: where [CLS] looks. Over the %d held-out images it gives %s of its weight "
                "(the %d heads averaged) to patches with ink, which are %.2f of the patches. In image 0 its largest "
                "weight, %.2f, goes to patch %d." % (len(test), share_t, HEADS, ink_frac, l1[0][1], best),
        "probs": "[CLS] → final norm → head: 10 probabilities. Image 0 is a 0 with %.2f. %d of the ten images here "
                 "are right%s; on the %d held-out images the model is right %s%% of the time."
                 % (c0, right, "" if not wrong else " (image %d reads as a %d)" % wrong[0], len(test), acc_t),
    }
    zh = {
        "patches": "图像 8 × 8 像素，取值从 0（空白）到 1（全黑；数据中的 0–16 除以 16），切成 16 个 2 × 2 的小块：这里每一行是一个小块，"
                   "4 个像素按行读出。小块 1 是左上角，小块 4 是右上角，小块 16 是右下角。按 B 在十张图像间切换："
                   "第 b 张是数字 b。",
        "patch_embed": ("每个小块的 4 个像素乘以 W_P（%d × 4）再加 b_P：一个小块变成 %d 个数的词元，就像一个词一样。"
                        "空白小块（全 0）只得到 b_P，所以所有空白小块的行都相同。" % (D_MODEL, D_MODEL)),
        "cls_concat": "在 16 个小块前面加上一个学习到的行 [CLS]：它不含像素。最后模型对它的输出做分类，"
                      "所以它必须通过注意力收集整张图像的信息。",
        "pos_embed": "每个词元一行学习到的位置向量（17 行）：没有它们，模型分不清小块 1 和小块 16。",
        "attn": "最后一层的 CLS 行：[CLS] 看向哪里。在 %d 张留出图像上，它把 %s 的权重（%d 个头平均）给了有墨迹的小块，"
                "而这些小块只占 %.2f。在图像 0 中，它最大的权重 %.2f 给了小块 %d。"
                % (len(test), share_t, HEADS, ink_frac, l1[0][1], best),
        "probs": "[CLS] → 最终归一化 → 分类头：10 个概率。图像 0 是数字 0，概率 %.2f。这里十张图像中 %d 张判断正确%s；"
                 "在 %d 张留出图像上，模型的正确率是 %s%%。"
                 % (c0, right, "" if not wrong else "（图像 %d 被看成 %d）" % wrong[0], len(test), acc_t),
    }
    steps = {k: {"en": en[k], "zh": zh[k]} for k in en}
    steps["l1.attn"] = steps.pop("attn")
    notes = {"patches": {"en": "Ask: how many numbers does one image hold (64), and how many tokens will the model "
                               "read (17)? Press B to show another digit.",
                         "zh": "提问：一张图像有多少个数（64）？模型要读多少个词元（17）？按 B 换一个数字。"},
             "patch_embed": {"en": "Point at two blank patches: the same row. The model sees only ink through W_P.",
                             "zh": "指出两个空白小块：行完全相同。模型只能通过 W_P 看到墨迹。"},
             "cls_concat": {"en": "Row CLS is the same for every image: ask where its knowledge of the digit will "
                                  "come from (attention).",
                            "zh": "CLS 行对每张图像都一样：问学生它关于数字的信息从哪里来（注意力）。"},
             "pos_embed": {"en": "Without these rows, shuffling the patches would give the same answer.",
                           "zh": "没有这些行，打乱小块的顺序会得到同样的答案。"},
             "attn": {"en": "Look at the panel on the right: the image, then row CLS of this head and of the "
                            "heads' mean, coloured as in attn. Press H for another head, B for another digit.",
                      "zh": "看右边的面板：图像，然后是这个头和各头平均的 CLS 行，颜色与 attn 相同。按 H 换头，按 B 换数字。"},
             "probs": {"en": "Ask the class to guess the digit before showing the bars.",
                       "zh": "先让学生猜是哪个数字，再展示条形图。"}}
    notes["l1.attn"] = notes.pop("attn")
    b = 3
    quiz = [{"id": "class", "stage": "probs", "batch": b, "cell": [0],
             "question": {"en": "Image %d: which class gets the highest probability?" % b,
                          "zh": "图像 %d：哪个类别的概率最高？" % b},
             "answer": top[b],
             "explanation": {"en": "Class %d, with %.2f: the largest of the ten bars." % (top[b], float(probs[b, top[b]])),
                             "zh": "类别 %d，概率 %.2f：十个条形中最长的那个。" % (top[b], float(probs[b, top[b]]))}}]
    lesson = vit.lesson({"en": "A vision transformer reads handwritten digits",
                         "zh": "视觉 Transformer 读手写数字"}, [str(d) for d in range(10)], x)
    lesson["description"] = {"en": "Trained by lessons/train_vit.py on scikit-learn's 8×8 digits (BSD; UCI data): "
                                   "held-out accuracy %s%% on %d images." % (acc_t, len(test))}
    lesson["steps"], lesson["notes"], lesson["quiz"] = steps, notes, quiz
    # the lesson run from its own JSON equals the model
    back = VisionTransformer.from_lesson(lesson)
    with torch.no_grad():
        back(torch.tensor(lesson["input"]["image"], dtype=torch.float32))
    diff = max(float((t - u).abs().max()) for (_, t), (_, u) in zip(vit.stages(), back.stages()))
    if diff > 1e-5:
        problems.append("the lesson run from its JSON differs from the model by %.2g" % diff)
    return lesson, problems, diff


if __name__ == "__main__":
    sys.exit(trained.run("train_vit.py", "Trains lessons/vision-digits.json (a vision transformer on 8x8 digits).",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision-digits.json"), make))
