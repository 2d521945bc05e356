#!/usr/bin/env python3
"""Every stage's formula names only tensors that stage has (issue 42's left-over: a cross-attention
block without a mask said softmax(masked_scores)). Reads `attnviz --describe LESSON` (JSON on
stdin or a file) and the stage table's names (src/core/stages.h): each stage name in a frame's
formula must be the frame's own stage or a tensor of its block (check()). Prints one line per
word that breaks it; exits 1 when any does."""
import json
import re
import sys


def stage_names(stages_h):
    with open(stages_h, encoding="utf-8") as f:
        text = f.read()
    # the stage rows of the table: X(ID, "name", KIND, ...); the kinds' and weights' rows have
    # other shapes, so keep the names that are some stage's in --describe too (below)
    return set(re.findall(r'X\([A-Z_0-9]+, "([a-z_0-9]+)"', text))


def prefix(stage):
    """ "l3.attn" -> "l3."; "attn" -> "" """
    return stage[: stage.rfind(".") + 1] if "." in stage and stage.split(".")[0][1:].isdigit() else ""


def check(describe, names, label):
    """A frame's formula may name its own stage and the tensors of its block (its layer's stages and
    the lesson's stages outside any layer); a block whose masking has no mask (its masked_scores
    frame reads "masked_scores = scores") has no masked_scores to read: its softmax reads scores."""
    bad = []
    frames = describe["frames"]
    have = {}  # block prefix -> the table names of its stages
    for f in frames:
        p, base = prefix(f["stage"]), f["stage"].split(".")[-1]
        if base == "masked_scores" and not any("mask" in (q.get("source") or "").split(".")[-1] and
                                              q.get("source") != f["stage"] for q in f["panels"]):
            continue  # (no mask in this block: the scores pass through)
        have.setdefault(p, set()).add(base)
    for f in frames:
        p, own = prefix(f["stage"]), f["stage"].split(".")[-1]
        allowed = {own} | have.get(p, set()) | have.get("", set())
        for word in sorted(set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", f["formula"] or ""))):
            if word in names and word not in allowed:
                bad.append(f"{label}: {f['stage']}: the formula \"{f['formula']}\" names {word}, a tensor this "
                           "block does not have")
        for q in f["panels"]:  # a panel's title names its tensor too ("masked scores (h0)")
            word = re.sub(r"\s*\(.*\)\s*$", "", q["title"]).strip().replace(" ", "_")
            if word in names and word not in allowed:
                bad.append(f"{label}: {f['stage']}: a panel is titled \"{q['title']}\", a tensor this block does "
                           "not have")
    return bad


def main():
    stages_h, label = sys.argv[1], sys.argv[2]
    describe = json.load(sys.stdin)
    # the tensors of the stage table (not its kinds' names: softmax) that this lesson has somewhere
    names = stage_names(stages_h) & {f["stage"].split(".")[-1] for f in describe["frames"]}
    bad = check(describe, names, label)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
