#!/bin/sh
# structure_test.sh — the shape of src/ that must not regrow silently (make test):
# layers include only downward (core -> view -> draw -> app -> web), no include circle,
# no file over 900 lines, no function over 150, each window part's functions declared in
# its own header (so a call circle among them is an include circle), and the keys in
# README.md and the man page equal src/view/keymap.c's. Each problem is one line naming
# the file (tests/structure_check.py; what stands for now is listed there with its
# reason). First the checks on made-up trees (--self-test): a circle of two parts, and
# two parts calling each other through one shared header, must each be found.
command -v python3 >/dev/null 2>&1 || { echo "structure_test: no python3 (skipped)"; exit 77; }
python3 "$(dirname "$0")/structure_check.py" --self-test || exit 1
exec python3 "$(dirname "$0")/structure_check.py" "$(dirname "$0")/.."
