"""What the training scripts of lessons/ share (train_induction.py, train_textbook.py,
train_tiny_lm.py): the command line (--out, --quiet), one thread and deterministic
algorithms (so a rerun writes the same bytes), and writing the lesson only when every
claim its narration makes holds and the lesson, run from its own JSON, reproduces the
model."""

import argparse
import os
import sys

import torch

from from_torch import save_lesson  # the lessons' JSON writer


def run(script, description, default_out, make, argv=None):
    """make(log) trains, measures and builds: (lesson, problems, max diff). Exit code 1 and
    a line per problem on stderr, else the lesson written to --out and 0."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=default_out, help="the lesson to write (default %(default)s)")
    ap.add_argument("--quiet", action="store_true", help="print only errors")
    args = ap.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    lesson, problems, diff = make(log)
    if problems:
        for p in problems:
            print("%s: %s" % (script, p), file=sys.stderr)
        return 1
    log("the lesson run from its JSON matches the model (max diff %.2g)" % diff)
    save_lesson(lesson, args.out)
    log("wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))
    return 0
