#!/usr/bin/python3
"""train_grammar.py: trains a small word-level model on a generated English-like grammar and
writes the shipped lesson lessons/grammar-agreement.json.

    /usr/bin/python3 lessons/train_grammar.py                 # writes lessons/grammar-agreement.json
    /usr/bin/python3 lessons/train_grammar.py --out /tmp/x.json

The grammar (lessons/grammar.py): 20 words, sentences of up to 13 of them with agreement
across relative clauses ("the men that the man likes see Anna": "see" agrees with "men",
not with "man"), pronouns whose person decides the next word ("Mary thanked John because she
likes the man": Mary's habit is "likes", John's "sees") and two kinds of nested brackets.
About one sentence in ten (by a hash of its words) is never trained on: the measurements are on
those.

The model: the word tokenizer (each word of the vocabulary one token: the grammar has only
20 words, so a word vocabulary fits the screen where BPE's bytes would not), learned token and
position embeddings (13 positions), 2 pre-norm blocks of causal self-attention only
(LayerNorm, 4 heads of d_k 4, d_model 16, no feed-forward: the heads do the work), a final
LayerNorm and an untied unembedding. Each training example is one sentence from its start
(loss on every word after the first). CPU, one thread, fixed seeds and deterministic
algorithms: running it twice writes byte-identical JSON (tests/train_lessons_test.sh checks
it under make test-full).

The script measures on the held-out sentences which head links a main verb to its subject
across the clause and which head takes "she" / "he" to the person it names, and how well the
model agrees, resolves and closes brackets; the narration and quiz are written from those
numbers, and the script writes nothing if a claim does not hold. The lesson is run again from
its own JSON by lessons/lesson_torch.py and compared with the model.
Documentation: lessons/README.md, section "Trained lessons".
"""

import hashlib
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grammar as G  # noqa: E402  (the sentences)
import trained  # noqa: E402  (the command line and the write, shared)

SEED = 6
V, P = G.V, G.MAX_LEN
C, H, N_LAYERS = 16, 4, 2
EPS = 1e-5
FILL = -1e9
STEPS, BATCH, LR, WD = 6000, 64, 3e-3, 0.0
N_HELD = 4096                    # held-out sentences measured
# the lesson's three sentences (a batch: one length, 8 words)
TEXTS = ["the men that the man likes see Anna",
         "Mary thanked John because she likes the man",
         "( [ ( ) ] [ ] )"]
DEFAULT_OUT = os.path.join(HERE, "grammar-agreement.json")


def held_out(words):
    """About one sentence in ten (26 of the hash's 256 first bytes) is never trained on."""
    return hashlib.sha256(" ".join(words).encode()).digest()[0] % 10 == 0


def draw(gen, n, held):
    """n sentences, all held out (held) or none (not held): (ids, next words, Sentences) as
    grammar.tensors makes them."""
    sents = []
    while len(sents) < n:
        s = G.sentence(gen)
        if held_out(s.words) == held:
            sents.append(s)
    return G.tensors(sents) + (sents,)


def Model():
    return trained.TinyGPT(V, C, H, P, N_LAYERS, 0, EPS, FILL)


def train(log=print):
    torch.manual_seed(SEED)
    model = Model()
    gen = torch.Generator().manual_seed(SEED + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    t0 = time.time()
    run_loss, every = 0.0, 1000
    for step in range(1, STEPS + 1):
        x, y, _ = draw(gen, BATCH, False)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-100)
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
    log("trained in %.0f s" % (time.time() - t0))
    return model


# ----------------------------------------------------------------------------
# measurements on held-out sentences
# ----------------------------------------------------------------------------

def measure_held(model, log=print):
    """Per (layer, head): the mean weight the agreement rows give the subject, the pronoun
    rows the person named and the other name, the bracket rows the innermost open bracket;
    and the model's accuracy on each."""
    x, y, sents = draw(torch.Generator().manual_seed(SEED + 2000), N_HELD, True)
    with torch.no_grad():
        logits, attns = model(x)
    probs = torch.softmax(logits, -1)
    A = torch.stack(attns, 1)                    # (n, layers, H, L, L)
    agree = [(b, r, k, pl) for b, s in enumerate(sents) for r, k, pl in s.agree]
    pron = [(b,) + s.pronoun for b, s in enumerate(sents) if s.pronoun]
    brk = [(b, r, k) for b, s in enumerate(sents) for r, k in s.brackets]
    out = {"n_agree": len(agree), "n_pronoun": len(pron), "n_brackets": len(brk),
           "n_far": sum(1 for b, r, k, pl in agree if k > 1)}

    def mean_on(rows):
        b, r, k = (torch.tensor(c) for c in zip(*rows))
        return A[b, :, :, r, k].mean(0)           # (layers, H)
    out["agree_w"] = mean_on([(b, r, k) for b, r, k, _ in agree])
    out["agree_w_far"] = mean_on([(b, r, k) for b, r, k, _ in agree if k > 1])
    out["pron_w"] = mean_on([(b, r, k) for b, r, k, _ in pron])
    out["pron_other"] = mean_on([(b, r, o) for b, r, _, o in pron])
    out["brk_w"] = mean_on(brk)
    out["brk_w_far"] = mean_on([(b, r, k) for b, r, k in brk if k < r])
    sing = torch.tensor([G.ID[w] for w in ("sees", "likes")])
    plur = torch.tensor([G.ID[w] for w in ("see", "like")])
    right = [float(probs[b, r, plur if pl else sing].sum() / probs[b, r, torch.cat([sing, plur])].sum())
             for b, r, k, pl in agree]
    out["agree_acc"] = sum(p > 0.5 for p in right) / len(right)
    out["agree_p"] = sum(right) / len(right)
    habit = [int(probs[b, r].argmax()) == int(x[b, r + 1]) for b, r, _, _ in pron]
    out["pron_acc"] = sum(habit) / len(habit)
    out["pron_p"] = float(sum(probs[b, r, x[b, r + 1]] for b, r, _, _ in pron) / len(pron))
    wrong = [float(probs[b, r, G.ID[{")": "]", "]": ")"}[G.OPEN[sents[b].words[k]]]]]) for b, r, k in brk]
    out["brk_wrong_max"], out["brk_wrong_mean"] = max(wrong), sum(wrong) / len(wrong)
    nxt = [(b, r) for b, r, k in brk if sents[b].words[r + 1] in G.CLOSE] if brk else []
    out["brk_close_p"] = float(sum(probs[b, r, x[b, r + 1]] for b, r in nxt) / len(nxt))
    nll = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-100)
    out["held_loss"] = float(nll)
    return out


def report(m, log=print):
    def grid(t):
        return "  |  ".join(" ".join("%.2f" % v for v in row) for row in t.tolist())
    log("held-out loss %.3f nats a word; rows: %d agreement (%d far), %d pronoun, %d bracket"
        % (m["held_loss"], m["n_agree"], m["n_far"], m["n_pronoun"], m["n_brackets"]))
    for k in ("agree_w", "agree_w_far", "pron_w", "pron_other", "brk_w", "brk_w_far"):
        log("  %-12s %s" % (k, grid(m[k])))
    log("agreement: right number %.3f of rows (mean p %.3f); habit after the pronoun %.3f (mean p %.3f); "
        "wrong bracket at most %.3f (mean %.4f), the right close %.3f where it comes"
        % (m["agree_acc"], m["agree_p"], m["pron_acc"], m["pron_p"], m["brk_wrong_max"], m["brk_wrong_mean"],
           m["brk_close_p"]))


# ----------------------------------------------------------------------------
# the lesson's own sentences
# ----------------------------------------------------------------------------

# rows and keys of TEXTS the narration names
AG_ROW, AG_SUBJ, AG_ATTR = 5, 1, 4      # "likes" predicts the main verb; "men" its subject; "man"
PR_ROW, PR_REF, PR_OTHER = 4, 0, 2      # "she"; "Mary"; "John"
BR_ROWS = ((3, 1), (6, 0))              # after ")" the "[" of key 1 is open; after "]" the "(" of key 0


def measure(model, log=print):
    """The held-out measurements, the heads they name, and the lesson's sentences run."""
    m = measure_held(model, log)

    def best(t):
        i = int(t.flatten().argmax())
        return i // H, i % H
    m["ag"], m["pr"], m["br"] = best(m["agree_w"]), best(m["pron_w"]), best(m["brk_w_far"])
    ids = torch.tensor([G.encode(t.split()) for t in TEXTS])
    with torch.no_grad():
        logits, attns = model(ids)
    m["ids"], m["probs"], m["attns"] = ids, torch.softmax(logits, -1), attns
    return m


def f2(x):
    """Two decimals, with a real minus sign as the other lessons write it."""
    return ("%.2f" % float(x)).replace("-", "\u2212")


def pct(x):
    return "%.1f%%" % (100 * float(x))


def texts(m):
    """title, description, steps, notes and quiz from the measured numbers."""
    (la, ha), (lp, hp), (lb, hb) = m["ag"], m["pr"], m["br"]
    A, probs = m["attns"], m["probs"]
    ag = A[la][0, ha, AG_ROW]                              # the agreement head's row 5, batch 0
    pr = A[lp][1, hp, PR_ROW]                              # the pronoun head's row 4, batch 1
    others_ag = [float(m["agree_w"][l, h]) for l in range(N_LAYERS) for h in range(H) if (l, h) != (la, ha)]
    others_pr = [float(m["pron_w"][l, h]) for l in range(N_LAYERS) for h in range(H) if (l, h) != (lp, hp)]
    plural5 = float(probs[0, AG_ROW, [G.ID["see"], G.ID["like"]]].sum())
    likes4 = float(probs[1, PR_ROW, G.ID["likes"]])
    close3, wrong3 = float(probs[2, 3, G.ID["]"]]), float(probs[2, 3, G.ID[")"]])
    n = {"loss": f2(m["held_loss"]), "agree": pct(m["agree_acc"]), "pron": pct(m["pron_acc"]),
         "ag_w": f2(m["agree_w"][la, ha]), "ag_far": f2(m["agree_w_far"][la, ha]), "ag_o": f2(max(others_ag)),
         "pr_w": f2(m["pron_w"][lp, hp]), "pr_other": f2(m["pron_other"][lp, hp]), "pr_o": f2(max(others_pr)),
         "br_w": f2(m["brk_w_far"][lb, hb]), "wrong": f2(m["brk_wrong_mean"]),
         "ag5": f2(ag[AG_SUBJ]), "ag5a": f2(ag[AG_ATTR]), "pl5": f2(plural5),
         "pr4": f2(pr[PR_REF]), "pr4o": f2(pr[PR_OTHER]), "likes4": f2(likes4),
         "c3": f2(close3), "w3": f2(wrong3), "la": la, "ha": ha, "lp": lp, "hp": hp, "lb": lb, "hb": hb,
         "held": N_HELD}
    title = {"en": "A model of grammar: the head that finds the subject",
             "zh": "语法模型：找主语的那个头"}
    description = {
        "en": "A word-level model (20 words, d_model 16, 2 attention-only layers of 4 heads, learned "
              "positions, context 13) trained by lessons/train_grammar.py on a generated grammar: "
              "agreement across relative clauses, pronouns, nested brackets. On %(held)d sentences of the tenth "
              "of the grammar it never saw: the verb's number right in %(agree)s, the pronoun's person in %(pron)s. Layer %(la)d, "
              "head %(ha)d links a verb to its subject across the clause (%(ag_w)s); layer %(lp)d, head "
              "%(hp)d takes “she” or “he” to the person (%(pr_w)s)." % n,
        "zh": "一个词级模型（20 个词，d_model 16，两层只有注意力、每层 4 个头，学习到的位置编码，上下文 13），由 "
              "lessons/train_grammar.py 在生成的语法上训练：跨关系从句的主谓一致、代词、嵌套括号。在 %(held)d "
              "个句子上（取自它从没见过的那十分之一语法）：动词的单复数对 %(agree)s，代词指的人对 %(pron)s。第 %(la)d 层头 %(ha)d 跨过从句"
              "把动词连到主语（%(ag_w)s）；第 %(lp)d 层头 %(hp)d 把“she”或“he”连到所指的人（%(pr_w)s）。" % n}
    steps = steps_texts(n, m)
    return title, description, steps, notes_texts(n, steps), quiz_texts(n, m)


def steps_texts(n, m):
    (la, ha), (lp, hp) = m["ag"], m["pr"]
    steps = {
        "input": {
            "en": "Three sentences of the grammar, 8 words each (B shows the next): a relative clause, a "
                  "pronoun, brackets. The vocabulary is 20 words; a word outside it is refused with the list. "
                  "Trained on sentences from their first word; held-out loss %(loss)s nats a word." % n,
            "zh": "三个语法句子，每句 8 个词（B 切换到下一句）：关系从句、代词、括号。词表共 20 个词；词表外的词会被拒绝，"
                  "并列出词表。训练时每句都从第一个词开始；留出损失每词 %(loss)s 奈特。" % n},
        "token_embed": {
            "en": "Each word's row of the learned table embed (20 × 16). “the” (rows 0 and 3) gets the same "
                  "row twice: nothing here says which “the” is the subject's.",
            "zh": "每个词取学习到的 embed 表（20 × 16）中的一行。“the”（第 0 行和第 3 行）两次得到同一行：这里还看不出"
                  "哪个“the”属于主语。"},
        "pos_embed": {
            "en": "One learned row per position: 13, the longest sentence of the grammar.",
            "zh": "每个位置一行学习到的向量：共 13 行，即语法里最长句子的长度。"},
        "embedding": {
            "en": "x = word row + position row: the two “the”s now differ.",
            "zh": "x = 词行 + 位置行：两个“the”现在不同了。"},
        "mask": {
            "en": "Causal: row i sees words 0…i and predicts word i + 1. Row 5 (“likes”) must predict the main "
                  "verb, whose number only word 1 (“men”) decides.",
            "zh": "因果掩码：第 i 行看到第 0…i 个词，预测第 i + 1 个词。第 5 行（“likes”）要预测主句动词，它的单复数"
                  "只由第 1 个词（“men”）决定。"},
        "norm": {
            "en": "Pre-norm, as GPT-2: each layer's attention reads LayerNorm of the residual stream and adds "
                  "its result to it. There is no feed-forward: what the model knows, its heads carry.",
            "zh": "和 GPT-2 一样的前置归一化：每层注意力读残差流的 LayerNorm，再把结果加回去。没有前馈网络：模型"
                  "知道的东西都由它的头搬运。"},
        "projection": {
            "en": "Q, K and V from the normalised rows: d_model 16 → 4 heads × 4.",
            "zh": "由归一化后的行算出 Q、K、V：d_model 16 → 4 个头 × 4。"},
        "split": {
            "en": "16 columns become 4 heads of 4; each head has its own pattern of attention.",
            "zh": "16 列分成 4 个头，每个 4 列；每个头有自己的注意力模式。"},
        "scores": {
            "en": "Q·Kᵀ / √4 for every pair of words, in each head.",
            "zh": "每个头里，每对词的 Q·Kᵀ / √4。"},
        "softmax": {
            "en": "Each row of scores becomes weights that sum to 1.",
            "zh": "每行分数变成和为 1 的权重。"},
        "weighted_sum": {
            "en": "attn·V: each row takes the values of the words it attends to, weighted as the attention says.",
            "zh": "attn·V：每行按注意力权重取它所关注的词的值。"},
        "l%d.weighted_sum" % la: {
            "en": "attn·V in layer %(la)d: head %(ha)d's row 5 takes %(ag5)s of its value from “men”, so row 5 "
                  "now carries “the subject is plural” into the prediction." % n,
            "zh": "第 %(la)d 层的 attn·V：头 %(ha)d 的第 5 行有 %(ag5)s 的值取自“men”，于是第 5 行带着“主语是复数”"
                  "去做预测。" % n, "head": ha},
        "concat": {
            "en": "The four heads' 4 columns side by side again: 16 columns.",
            "zh": "四个头的 4 列重新并排：16 列。"},
        "output": {
            "en": "W_O mixes the heads back into d_model 16: what attention adds to the residual stream.",
            "zh": "W_O 把各个头混合回 d_model 16：这就是注意力加到残差流上的东西。"},
        "add_norm": {
            "en": "x + output: the residual stream keeps the word and its position and gains what the "
                  "heads found.",
            "zh": "x + 输出：残差流保留词和它的位置，并加上各个头找到的东西。"},
        "final_norm": {
            "en": "The final LayerNorm before the unembedding, as in GPT-2.",
            "zh": "反嵌入之前的最终 LayerNorm，与 GPT-2 相同。"},
        "logits": {
            "en": "One score per word of the vocabulary at each position: x · lm_headᵀ (20 × 16, no bias).",
            "zh": "每个位置对词表中每个词各有一个分数：x · lm_headᵀ（20 × 16，没有偏置）。"},
        "probs": {
            "en": "Softmax over the 20 words. Row 5 gives the plural verbs (“see”, “like”) %(pl5)s: "
                  "“men”, not the nearer “man”, decides. Row 4 of sentence 2 gives “likes” %(likes4)s: "
                  "Mary's habit. Row 3 of sentence 3 gives “]” %(c3)s, the wrong “)” %(w3)s. The last row "
                  "guesses blindly: no sentence was ever trained past its end." % n,
            "zh": "对 20 个词做 softmax。第 5 行给复数动词（“see”、“like”）%(pl5)s：决定的是“men”，不是更近的"
                  "“man”。第 2 句第 4 行给“likes” %(likes4)s：Mary 的习惯。第 3 句第 3 行给“]” %(c3)s，错的"
                  "“)” %(w3)s。最后一行只是瞎猜：训练从没越过句子的结尾。" % n},
    }
    ag_en = ("Layer %(la)d, head %(ha)d links a verb to its subject: on held-out sentences the row that "
             "predicts the main verb gives the subject %(ag_w)s (%(ag_far)s after “because”; any other head "
             "at most %(ag_o)s). Row 5 (“likes”) gives “men” %(ag5)s, the nearer “man” %(ag5a)s. Type your "
             "own (I): “the man that the men see likes Tom”." % n)
    ag_zh = ("第 %(la)d 层头 %(ha)d 把动词连到主语：在留出句子上，预测主句动词的那一行给主语 %(ag_w)s（在“because”"
             "之后 %(ag_far)s；其他头至多 %(ag_o)s）。第 5 行（“likes”）给“men” %(ag5)s，给更近的“man” "
             "%(ag5a)s。自己输入一句（I）：“the man that the men see likes Tom”。" % n)
    pr_en = ("Layer %(lp)d, head %(hp)d resolves the pronoun: on held-out sentences “she” or “he” gives the "
             "person it names %(pr_w)s, the other name %(pr_other)s (other heads at most %(pr_o)s). Sentence 2 "
             "(B), row 4: “she” gives “Mary” %(pr4)s, “John” %(pr4o)s." % n)
    pr_zh = ("第 %(lp)d 层头 %(hp)d 解析代词：在留出句子上，“she”或“he”给它所指的人 %(pr_w)s，给另一个名字 "
             "%(pr_other)s（其他头至多 %(pr_o)s）。第 2 句（B）第 4 行：“she”给“Mary” %(pr4)s，给“John” %(pr4o)s。" % n)
    if la == lp:
        steps["l%d.attn" % la] = {"en": ag_en + " " + pr_en.replace("Layer %d, head" % lp, "Head"),
                                  "zh": ag_zh + pr_zh.replace("第 %d 层头" % lp, "头"), "head": ha}
    else:
        steps["l%d.attn" % la] = {"en": ag_en, "zh": ag_zh, "head": ha}
        steps["l%d.attn" % lp] = {"en": pr_en, "zh": pr_zh, "head": hp}
    return steps


def notes_texts(n, keys):
    """The teacher's notes, one for each step the narration has."""
    notes = {
        "input": {
            "en": "Read sentence 1 aloud and ask the room: after “likes”, “see” or “sees”? Then sentence 2: "
                  "after “she”, what does Mary do? (Tell them: in this grammar Mary and Tom like, Anna and John see.)",
            "zh": "大声读第 1 句，问全班：“likes”之后是“see”还是“sees”？再读第 2 句：“she”之后 Mary 做什么？"
                  "（告诉他们：在这个语法里 Mary 和 Tom 用 like，Anna 和 John 用 see。）"},
        "token_embed": {
            "en": "Point at rows 0 and 3: identical. Which “the” belongs to the subject is not in the word.",
            "zh": "指出第 0 行和第 3 行：完全相同。哪个“the”属于主语，单看词是看不出来的。"},
        "pos_embed": {
            "en": "Ask why 13 rows (the longest sentence) and what a 14th word would need.",
            "zh": "问为什么是 13 行（最长的句子），第 14 个词需要什么。"},
        "embedding": {
            "en": "Compare rows 0 and 3 again: now they differ by the position rows only.",
            "zh": "再比较第 0 行和第 3 行：现在它们只差位置行。"},
        "mask": {
            "en": "Ask which key row 5 needs (1, “men”) and check that the mask allows it.",
            "zh": "问第 5 行需要哪个键（1，“men”），并检查掩码是否允许。"},
        "norm": {
            "en": "Remind: with no feed-forward, every fact the model uses travels through a head.",
            "zh": "提醒：没有前馈网络，模型用到的每个信息都要经过某个头。"},
        "projection": {
            "en": "Ask what the query of “likes” might look for (a noun before “that”).",
            "zh": "问“likes”的查询可能在找什么（“that”前面的名词）。"},
        "split": {
            "en": "Ask the class to guess whether one head will do the agreement alone.",
            "zh": "让全班猜：会不会有一个头单独负责主谓一致。"},
        "scores": {
            "en": "Hover a score to show the dot product; the scale is √4 = 2.",
            "zh": "悬停一个分数，展示点积；缩放因子是 √4 = 2。"},
        "softmax": {
            "en": "Ask what happens to a row whose best score leads by 4 (e⁴ ≈ 55: most of the weight).",
            "zh": "问最高分领先 4 的一行会怎样（e⁴ ≈ 55：大部分权重）。"},
        "weighted_sum": {
            "en": "Ask which row of which head carries the subject's number (layer %(la)d, head %(ha)d, row 5)." % n,
            "zh": "问哪个头的哪一行带着主语的单复数（第 %(la)d 层头 %(ha)d，第 5 行）。" % n},
        "l%d.weighted_sum" % n["la"]: {
            "en": "Say it in words: “row 5 now knows the subject is plural”.",
            "zh": "用话说出来：“第 5 行现在知道主语是复数”。"},
        "concat": {
            "en": "Nothing new is computed here; it is bookkeeping.",
            "zh": "这里没有新的计算，只是整理。"},
        "output": {
            "en": "Ask where the heads' results go (added into the same 16 numbers of each row).",
            "zh": "问各个头的结果去了哪里（加进每行同样的 16 个数里）。"},
        "add_norm": {
            "en": "Point out that the word itself is still in the stream: nothing is overwritten.",
            "zh": "指出词本身仍在残差流里：没有东西被覆盖。"},
        "final_norm": {
            "en": "Quick stage; no question needed.",
            "zh": "过渡阶段，不需要提问。"},
        "logits": {
            "en": "Ask which columns should be largest in row 5 (“see”, “like”) and check.",
            "zh": "问第 5 行哪些列应该最大（“see”、“like”），然后验证。"},
        "probs": {
            "en": "Let a student type a sentence with the numbers swapped (I): “the man that the men see "
                  "likes Tom”, and watch row 5 flip to the singular verbs.",
            "zh": "让学生输入一句单复数对调的句子（I）：“the man that the men see likes Tom”，看第 5 行变成单数动词。"},
    }
    agree_note = {
        "en": "Trace head %(ha)d's row 5: its brightest cell is “men”, four words back, not “man” next door. "
              "Press B for sentence 2 and switch to head %(hp)d: row 4, “she”, lights up “Mary”." % n,
        "zh": "沿着头 %(ha)d 的第 5 行看：最亮的格子是四个词之前的“men”，不是紧挨着的“man”。按 B 看第 2 句，"
              "切换到头 %(hp)d：第 4 行“she”点亮了“Mary”。" % n}
    pron_note = {
        "en": "Press B for sentence 2: row 4 (“she”) lights up “Mary”, not “John”. Ask what the model would "
              "need if both were women (it could not know: the grammar never does that).",
        "zh": "按 B 看第 2 句：第 4 行（“she”）点亮了“Mary”，而不是“John”。问：如果两个人都是女性，模型需要什么"
              "（它无从知道：这个语法里从没有这种句子）。"}
    for k in keys:
        if k.endswith(".attn"):
            notes[k] = agree_note if k == "l%d.attn" % n["la"] else pron_note
    return notes


def quiz_texts(n, m):
    (la, ha), (lp, hp) = m["ag"], m["pr"]
    likes = G.ID["likes"]
    return [
        {"id": "agreement", "stage": "l%d.attn" % la, "batch": 0, "head": ha, "cell": [AG_ROW],
         "question": {"en": "Layer %d, head %d, row 5 (“likes”): which key gets the most weight?" % (la, ha),
                      "zh": "第 %d 层头 %d，第 5 行（“likes”）：哪个键得到的权重最多？" % (la, ha)},
         "answer": AG_SUBJ,
         "explanation": {"en": "Key 1, “men”, with %(ag5)s: the subject of the main verb, across the clause "
                               "(“man”, key 4, gets %(ag5a)s)." % n,
                         "zh": "键 1，“men”，%(ag5)s：主句动词的主语，跨过了从句（键 4 的“man”只得到 %(ag5a)s）。" % n}},
        {"id": "pronoun", "stage": "l%d.attn" % lp, "batch": 1, "head": hp, "cell": [PR_ROW],
         "question": {"en": "Sentence 2, layer %d, head %d, row 4 (“she”): which key gets the most weight?" % (lp, hp),
                      "zh": "第 2 句，第 %d 层头 %d，第 4 行（“she”）：哪个键得到的权重最多？" % (lp, hp)},
         "answer": PR_REF,
         "explanation": {"en": "Key 0, “Mary”, with %(pr4)s: the person “she” names (“John” gets %(pr4o)s)." % n,
                         "zh": "键 0，“Mary”，%(pr4)s：“she”所指的人（“John”只得到 %(pr4o)s）。" % n}},
        {"id": "habit", "stage": "probs", "batch": 1, "cell": [PR_ROW],
         "question": {"en": "Sentence 2, row 4 (after “she”): which vocabulary index gets the highest "
                            "probability? (“sees” is 4, “see” 5, “likes” 6, “like” 7)",
                      "zh": "第 2 句第 4 行（“she”之后）：哪个词表下标的概率最高？（“sees”是 4，“see”是 5，"
                            "“likes”是 6，“like”是 7）"},
         "answer": likes,
         "explanation": {"en": "%d, “likes”, with %s: Mary's habit, found through the pronoun." % (likes, n["likes4"]),
                         "zh": "%d，“likes”，%s：Mary 的习惯，经由代词找到。" % (likes, n["likes4"])}},
    ]


def build_lesson(model, m):
    title, description, steps, notes, quiz = texts(m)
    return {
        "title": title,
        "description": description,
        "vocab": G.VOCAB,
        "tokenizer": "word",
        "model": {"n_layers": N_LAYERS, "d_model": C, "n_heads": H, "norm_first": True,
                  "residual_norm": True, "ffn_hidden": 0, "positions": "learned", "max_positions": P,
                  "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": EPS},
        "input": {"text": TEXTS},
        "mask": "causal",
        "weights": trained.lm_weights(model),
        "steps": steps,
        "notes": notes,
        "quiz": quiz,
    }


def check(lesson, model, m):
    """The claims the narration makes, and the lesson run from its own JSON text."""
    problems = []
    (la, ha), (lp, hp) = m["ag"], m["pr"]
    A, probs = m["attns"], m["probs"]
    others_ag = max(float(m["agree_w"][l, h]) for l in range(N_LAYERS) for h in range(H) if (l, h) != (la, ha))
    others_pr = max(float(m["pron_w"][l, h]) for l in range(N_LAYERS) for h in range(H) if (l, h) != (lp, hp))
    if m["agree_acc"] < 0.99 or m["pron_acc"] < 0.99 or m["brk_wrong_mean"] > 0.01:
        problems.append("the model has not learned the grammar (agreement %.3f, pronoun %.3f, wrong bracket %.3f)"
                        % (m["agree_acc"], m["pron_acc"], m["brk_wrong_mean"]))
    if float(m["agree_w"][la, ha]) < 0.4 or float(m["agree_w"][la, ha]) < others_ag + 0.15 or \
            float(m["agree_w_far"][la, ha]) < 0.4:
        problems.append("no single head links the verb to its subject (%.2f, the next head %.2f)"
                        % (float(m["agree_w"][la, ha]), others_ag))
    if float(m["pron_w"][lp, hp]) < 0.4 or float(m["pron_w"][lp, hp]) < 2 * float(m["pron_other"][lp, hp]) or \
            float(m["pron_w"][lp, hp]) < others_pr + 0.15:
        problems.append("no single head resolves the pronoun (%.2f on the person, %.2f on the other, the next "
                        "head %.2f)" % (float(m["pron_w"][lp, hp]), float(m["pron_other"][lp, hp]), others_pr))
    if (la, ha) == (lp, hp):
        problems.append("one head does both jobs: the narration names two")
    ag, pr = A[la][0, ha, AG_ROW], A[lp][1, hp, PR_ROW]
    if int(ag.argmax()) != AG_SUBJ or not float(ag[AG_SUBJ]) > float(ag[AG_ATTR]):
        problems.append("sentence 1, row 5: the agreement head does not pick 'men'")
    if int(pr.argmax()) != PR_REF or not float(pr[PR_REF]) > float(pr[PR_OTHER]):
        problems.append("sentence 2, row 4: the pronoun head does not pick 'Mary'")
    if float(probs[0, AG_ROW, [G.ID["see"], G.ID["like"]]].sum()) < 0.9:
        problems.append("sentence 1, row 5: the plural verbs are not predicted")
    if int(probs[1, PR_ROW].argmax()) != G.ID["likes"]:
        problems.append("sentence 2, row 4: 'likes' is not the top prediction")
    if not float(probs[2, 3, G.ID["]"]]) > 10 * float(probs[2, 3, G.ID[")"]]):
        problems.append("sentence 3, row 3: ']' is not far ahead of ')'")
    problems += trained.text_problems(lesson) + trained.narration_problems(lesson)
    diff = trained.json_max_diff(lesson, model, m["ids"])
    if diff > 1e-5:
        problems.append("the lesson's JSON does not reproduce the model (max diff %.3g)" % diff)
    return problems, diff


def make(log):
    log("training %d steps of %d sentences, seed %d (torch %s)" % (STEPS, BATCH, SEED, torch.__version__))
    model = train(log)
    m = measure(model, log)
    report(m, log)
    lesson = build_lesson(model, m)
    problems, diff = check(lesson, model, m)
    return lesson, problems, diff


def main(argv=None):
    return trained.run("train_grammar.py", "Train the grammar model and write its lesson.", DEFAULT_OUT, make, argv)


if __name__ == "__main__":
    sys.exit(main())
