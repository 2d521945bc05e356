#!/usr/bin/python3
"""Issue 36, findings 6 and 7: lessons/from_torch.py and the training scripts refuse bad
input and bad targets with one line, and never lose or half-write a file.

    /usr/bin/python3 tests/from_torch_errors.py BINARY

Run by tests/from_torch_errors_test.sh (skipped without torch). BINARY (build/attnviz)
checks that what from_torch.py refuses is what attnviz's loader refuses, and that what it
writes attnviz reads. Prints one line per failed case; exit 1 if any failed.
"""

import json
import math
import os
import re
import stat
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lessons"))
import from_torch as ft  # noqa: E402
import lesson_file  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attnviz")
WORK = tempfile.mkdtemp(prefix="from_torch_errors.")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def refused(name, fn, want):
    """fn() raises ValueError whose one-line message contains want (no other exception)."""
    try:
        fn()
    except ValueError as e:
        msg = str(e)
        if "\n" in msg or want not in msg:
            fail("%s: message %r, want one line with %r" % (name, msg, want))
        return msg
    except Exception as e:     # a traceback: the finding
        fail("%s: %s: %s, want ValueError" % (name, type(e).__name__, e))
        return None
    fail("%s: accepted, want ValueError with %r" % (name, want))
    return None


def attnviz_refuses(name, lesson):
    """attnviz's loader refuses the lesson too (written without the Python checks)."""
    if not os.access(BINARY, os.X_OK):
        return
    path = os.path.join(WORK, "unchecked.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(lesson_file.to_json(lesson) + "\n")
    r = subprocess.run([BINARY, "--check", path], capture_output=True, timeout=120)
    if r.returncode == 0:
        fail("%s: from_torch.py refuses a lesson attnviz --check accepts" % name)


def attnviz_reads(name, path):
    if not os.access(BINARY, os.X_OK):
        return
    r = subprocess.run([BINARY, "--check", path], capture_output=True, timeout=120)
    if r.returncode != 0:
        fail("%s: attnviz --check refuses what from_torch.py wrote: %s" % (name, r.stderr.decode()[-300:]))


# ----------------------------------------------------------------------------
# a nanoGPT-style model at toy size (tests/from_torch_test.sh has the full one)
# ----------------------------------------------------------------------------

class Attn(nn.Module):
    def __init__(self, C, n_head):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(C, 3 * C), nn.Linear(C, C), n_head


class MLP(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc, self.gelu, self.c_proj = nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C)


class Block(nn.Module):
    def __init__(self, C, n_head):
        super().__init__()
        self.ln_1, self.attn, self.ln_2, self.mlp = nn.LayerNorm(C), Attn(C, n_head), nn.LayerNorm(C), MLP(C)


class GPT(nn.Module):
    def __init__(self, V=7, P=10, C=8, n_head=2):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, C), wpe=nn.Embedding(P, C),
                                              h=nn.ModuleList([Block(C, n_head)]), ln_f=nn.LayerNorm(C)))
        self.lm_head = nn.Linear(C, V, bias=False)

    def forward(self, idx):            # nanoGPT's, written short
        t = self.transformer
        x = t.wte(idx) + t.wpe(torch.arange(idx.shape[1]))
        for b in t.h:
            a = b.attn
            B, T, C = x.shape
            q, k, v = (z.view(B, T, a.n_head, C // a.n_head).transpose(1, 2) for z in a.c_attn(b.ln_1(x)).split(C, 2))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // a.n_head)
            att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf")).softmax(-1)
            x = x + a.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))
            x = x + b.mlp.c_proj(b.mlp.gelu(b.mlp.c_fc(b.ln_2(x))))
        return self.lm_head(t.ln_f(x))


def gpt(**kw):
    torch.manual_seed(0)
    return GPT(**kw)


# ----------------------------------------------------------------------------
# finding 7: one-line ValueErrors, and nothing attnviz would refuse
# ----------------------------------------------------------------------------

def finding7():
    ok_ids = [[1, 5, 2, 2, 6, 0]]
    refused("gpt id outside the vocabulary", lambda: ft.lesson_from_gpt(gpt(), [[1, 7, 2]], check=False),
            "ids[0][1]: 7 is outside the vocabulary")
    refused("gpt negative id", lambda: ft.lesson_from_gpt(gpt(), [3, -1], check=False), "outside the vocabulary")
    refused("gpt more ids than positions", lambda: ft.lesson_from_gpt(gpt(), [list(range(7)) * 2], check=False),
            "14 tokens, more than the model's 10 positions")
    refused("gpt empty ids", lambda: ft.lesson_from_gpt(gpt(), [], check=False), "ids: shape")
    refused("gpt float ids", lambda: ft.lesson_from_gpt(gpt(), [0.5, 1.0], check=False), "expected whole numbers")
    refused("gpt n_heads=3 with d_model 8", lambda: ft.lesson_from_gpt(gpt(), ok_ids, n_heads=3),
            "n_heads=3: expected a whole number of heads that divides d_model 8")
    dup = ["a", "b", "c", "a", "d", "e", "f"]
    msg = refused("gpt duplicate vocab", lambda: ft.lesson_from_gpt(gpt(), ok_ids, vocab=dup, check=False),
                  'vocab[3]: "a" again (vocab[0])')
    if msg:
        attnviz_refuses("gpt duplicate vocab", ft.lesson_from_gpt(gpt(), ok_ids, check=False) | {"vocab": dup})
    big = gpt(V=2000)
    refused("gpt 2,000-token vocab", lambda: ft.lesson_from_gpt(big, ok_ids, check=False),
            "vocab: expected an array of 1 to 1024 token strings, got 2000")
    refused("gpt title=5", lambda: ft.lesson_from_gpt(gpt(), ok_ids, title=5, check=False),
            'title: expected a string or {"en": ..., "zh": ...}, got a number')
    refused("gpt long token", lambda: ft.lesson_from_gpt(gpt(), ok_ids, vocab=["x" * 65] + list("abcdef"),
                                                         check=False), "vocab[0]: token longer than 64 bytes")
    broken = gpt()
    broken.forward = lambda idx: idx.view(-1, 5)
    refused("gpt whose forward raises", lambda: ft.lesson_from_gpt(broken, ok_ids), "could not run")
    les = ft.lesson_from_gpt(gpt(), ok_ids)
    path = os.path.join(WORK, "gpt.json")
    ft.save_lesson(les, path)
    attnviz_reads("gpt", path)
    for bad, want in ((dict(les, title=5), "title: expected"), (dict(les, vocab=["a"] * 7), "again"),
                      (dict(les, input={"ids": [[0, 9]]}), "input.ids[0][1]: 9")):
        refused("save_lesson %s" % want, lambda: ft.save_lesson(bad, path), want)
        attnviz_refuses("save_lesson %s" % want, bad)

    torch.manual_seed(1)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    refused("mha input of length 0", lambda: ft.lesson_from_module(mha, torch.zeros(1, 0, 4)),
            "query: shape [1, 0, 4] is empty")
    refused("mha batch of 0", lambda: ft.lesson_from_module(mha, torch.zeros(0, 3, 4)), "is empty")
    refused("mha title=5", lambda: ft.lesson_from_module(mha, torch.randn(1, 3, 4), title=5), "title: expected")
    refused("mha title with a control character",
            lambda: ft.lesson_from_module(mha, torch.randn(1, 3, 4), title="a\x01b"), "control character U+0001")
    refused("mha tokens of the wrong count",
            lambda: ft.lesson_from_module(mha, torch.randn(1, 3, 4), tokens=["a", "b"]), "tokens")
    refused("mha scores over the element limit",
            lambda: ft.lesson_from_module(mha, torch.randn(64, 200, 4), check=False),
            "the scores (64, 2, 200, 200) are over the limit of 4194304 elements")
    les = ft.lesson_from_module(mha, torch.randn(2, 3, 4), title={"en": "ok", "zh": "好"})
    path = os.path.join(WORK, "mha.json")
    ft.save_lesson(les, path)
    attnviz_reads("mha", path)

    # the Python limits are the C loader's (src/core/attn_json.h, lesson.h, lesson.c)
    src = ""
    for f in ("attn_json.h", "lesson.h", "lesson.c"):
        with open(os.path.join(ROOT, "src", "core", f), encoding="utf-8") as fh:
            src += fh.read()
    for name, value in lesson_file.LIMITS.items():
        m = re.search(r"#define %s\s+(\([^)]*\)|\d+)" % name, src)
        c_value = None if not m else eval(m.group(1).replace("u", ""))   # "(1u << 22)", "4096"
        if c_value != value:
            fail("lesson_file.LIMITS[%s] = %s, the C program's %s" % (name, value, c_value))


# ----------------------------------------------------------------------------
# finding 6: format first, write atomically, refuse what is not a regular file
# ----------------------------------------------------------------------------

def no_temp_files(name, folder):
    left = [n for n in os.listdir(folder) if ".tmp-" in n]
    if left:
        fail("%s: temporary files left: %s" % (name, left))


def finding6():
    good = ft.demo_lesson("mha")
    folder = os.path.join(WORK, "f6")
    os.makedirs(folder)
    old = os.path.join(folder, "old.json")
    ft.save_lesson(good, old)
    with open(old, "rb") as f:
        before = f.read()

    # a NaN weight: refused before the file is touched, the weight named
    bad = json.loads(ft.lesson_text(good))
    bad["weights"]["w_q"][1][0] = float("nan")
    refused("NaN weight", lambda: ft.save_lesson(bad, old), "weights.w_q[1][0]: nan; a lesson holds finite numbers only")
    bad["weights"]["w_q"][1][0] = 0.5
    bad["input"]["query"][0][2][3] = float("-inf")
    refused("-inf input", lambda: ft.save_lesson(bad, old), "input.query[0][2][3]: -inf")
    with open(old, "rb") as f:
        if f.read() != before:
            fail("NaN weight: the old file was changed (%d bytes, was %d)" % (os.path.getsize(old), len(before)))
    no_temp_files("NaN weight", folder)

    # a FIFO, a folder: refused at once, never opened (a FIFO would block the writer)
    fifo = os.path.join(folder, "fifo.json")
    os.mkfifo(fifo)
    try:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "lessons", "from_torch.py"), "--demo", fifo],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        r = subprocess.CompletedProcess([], -1, "", "still blocked after 120 s (opened the FIFO?)")
    err = r.stderr.strip()
    if r.returncode == 0 or "\n" in err or "is not a regular file" not in err or "Traceback" in err:
        fail("--demo into a FIFO: exit %d, stderr %r" % (r.returncode, err[-300:]))
    if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
        fail("--demo into a FIFO: the FIFO was replaced")
    refused("save into a folder", lambda: ft.save_lesson(good, folder), "is not a regular file")
    refused("save into a missing folder", lambda: ft.save_lesson(good, os.path.join(folder, "no", "x.json")),
            "its folder does not exist")

    # a symbolic link is written through (it stays a link; the file keeps its mode)
    real = os.path.join(folder, "real.json")
    with open(real, "w") as f:
        f.write("{}\n")
    os.chmod(real, 0o640)
    link = os.path.join(folder, "link.json")
    os.symlink("real.json", link)
    ft.save_lesson(good, link)
    if not os.path.islink(link):
        fail("save through a symbolic link: the link was replaced by a file")
    with open(real, "rb") as f:
        if f.read() != before:
            fail("save through a symbolic link: the file it points to does not hold the lesson")
    if stat.S_IMODE(os.stat(real).st_mode) != 0o640:
        fail("save through a symbolic link: mode %o, was 640" % stat.S_IMODE(os.stat(real).st_mode))
    dangling = os.path.join(folder, "dangling.json")
    os.symlink("nowhere.json", dangling)
    refused("save through a dangling link", lambda: ft.save_lesson(good, dangling), "a symbolic link to a file that")
    if os.path.exists(os.path.join(folder, "nowhere.json")):
        fail("save through a dangling link: created the file it names")
    no_temp_files("the writes", folder)
    # a temporary file a killed writer left (its process is gone) is removed; a running one's kept
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = os.path.join(folder, "real.json.tmp-%d-0123abcd" % gone.pid)
    alive = os.path.join(folder, "real.json.tmp-%d-0123abcd" % os.getppid())
    for f in (stale, alive):
        open(f, "w").close()
    ft.save_lesson(good, link)
    if os.path.exists(stale) or not os.path.exists(alive):
        fail("stale temporary files: removed %s, kept %s (want the dead writer's removed, the live one's kept)"
             % (not os.path.exists(stale), os.path.exists(alive)))
    os.unlink(alive)

    # every training script: --out is checked before training (its make() never called)
    import contextlib
    import io

    def untrained(log):
        raise AssertionError("trained before checking --out")
    for script in ("train_induction", "train_textbook", "train_tiny_lm"):
        mod = __import__(script)
        mod.make = untrained
        for out, want in ((fifo, "is not a regular file"), (os.path.join(folder, "no", "x.json"), "folder does not exist"),
                          (folder, "is not a regular file")):
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err):
                    rc = mod.main(["--out", out, "--quiet"])
            except AssertionError as e:
                rc = str(e)
            if rc != 1 or want not in err.getvalue() or err.getvalue().count("\n") != 1:
                fail("%s.py --out %s: %r, stderr %r" % (script, out, rc, err.getvalue()))
    # and as a command: one line, exit 1, in seconds
    t0 = time.time()
    r = subprocess.run([sys.executable, os.path.join(ROOT, "lessons", "train_induction.py"), "--out", fifo],
                       capture_output=True, text=True, timeout=600)
    err = r.stderr.strip()
    if r.returncode != 1 or "\n" in err or "is not a regular file" not in err or r.stdout.strip():
        fail("train_induction.py --out FIFO: exit %d, stdout %r, stderr %r" % (r.returncode, r.stdout[-200:], err[-300:]))
    elif time.time() - t0 > 60:
        fail("train_induction.py --out FIFO: refused after %.0f s (trained first?)" % (time.time() - t0))


try:
    finding7()
    finding6()
finally:
    subprocess.run(["rm", "-rf", WORK])
print("from_torch_errors: %d failures" % len(failures))
sys.exit(1 if failures else 0)
