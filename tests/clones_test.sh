#!/bin/sh
# clones_test.sh — the core's kernels are compiled three times (target_clones: avx512f,
# avx2, default) and the CPU picks one at load time; each must give the same numbers bit
# for bit. This compares `attnviz --dump` of the CPU's own clone (`attnviz --version` names
# it) with every other clone's:
#  - natively, on this CPU's own vector units: attnviz linked with the core's kernels built
#    without the avx512f clone (build/clones/attnviz_avx2, the avx2 clone on an AVX-512 CPU)
#    and with the default clone only (attnviz_default: plain x86-64), on every shipped lesson
#    (a clone this CPU cannot run is skipped, saying so);
#  - under qemu-x86_64's emulated CPUs, the real binary's own choice: `-cpu max` (AVX2, no
#    AVX-512: TCG has none) and `-cpu qemu64` (neither: the default clone), on a sample
#    under make test (the full list and tests/big/long-256.json under make test-full).
# Both also run a generated lesson whose sums are longer than a kernel block (d_model 320 >
# KC 256, a feed-forward of 640, 5 heads of 64, causal, pre-norm, 40 tokens), so the blocked
# paths and the tile edges run too. Skipped (77) only when neither part can run.
. "$(dirname "$0")/test_lib.sh"
case "$(uname -m)" in x86_64) ;; *) echo "clones_test: not x86-64: one portable build, nothing to compare (skipped)"; exit 77 ;; esac
[ -x "$bin" ] || { echo "clones_test: no $bin"; exit 1; }
native=$("$bin" --version | sed -n 's/^core kernels: //p')
case "$native" in avx512f | avx2 | default) ;; *) echo "clones_test: --version names no kernel clone: '$native'"; exit 1 ;; esac

# the generated lesson (deterministic: Python's own generator, seed 7)
python3 - "$tmp/long-k.json" <<'EOF' || { echo "clones_test: could not write the generated lesson"; exit 1; }
import json, random, sys
random.seed(7)
L, C = 40, 320
data = [round(random.gauss(0, 1), 4) for _ in range(L * C)]
lesson = {"title": {"en": "kernel clones: d_model 320", "zh": "kernel clones: d_model 320"},
          "model": {"d_model": C, "n_heads": 5, "residual_norm": True, "norm_first": True,
                    "ffn_hidden": 640, "activation": "gelu"},
          "input": {"query": {"shape": [1, L, C], "data": data}},
          "mask": "causal", "weights": {"init": {"seed": 11}}}
json.dump(lesson, open(sys.argv[1], "w"))
EOF
"$bin" --check "$tmp/long-k.json" >/dev/null || { fail "the generated lesson does not load"; exit 1; }

# same_dump LESSON CLONE HOW CMD...: CMD --dump LESSON is $tmp/native.json byte for byte (n counts it)
same_dump() {
    dl=$1 dclone=$2 dhow=$3
    shift 3
    "$@" --dump "$dl" >"$tmp/clone.json" 2>"$tmp/err" || { fail "$dl: --dump failed $dhow: $(head -c 300 "$tmp/err")"; return; }
    if cmp -s "$tmp/native.json" "$tmp/clone.json"; then
        n=$((n + 1))
    else
        fail "$dl: the $dclone clone's --dump differs from the $native clone's ($(cmp "$tmp/native.json" "$tmp/clone.json" | head -n 1))"
    fi
}

# native: every shipped lesson with each clone this CPU can run
ran=0 n=0
for clone in avx2 default; do
    cb="$B/clones/attnviz_$clone"
    [ -x "$cb" ] || { fail "no $cb (make test builds it)"; continue; }
    if [ $clone = avx2 ] && ! grep -qw avx2 /proc/cpuinfo; then
        echo "clones_test: this CPU has no AVX2: the avx2 clone is not run natively (skipped)"
        continue
    fi
    got=$("$cb" --version | sed -n 's/^core kernels: //p')
    [ "$got" = $clone ] || { fail "$cb runs the '$got' clone, not '$clone'"; continue; }
    ran=1
    for l in lessons/*.json $tmp/long-k.json; do
        "$bin" --dump "$l" >"$tmp/native.json" 2>"$tmp/err" || { fail "$l: --dump failed: $(cat "$tmp/err")"; continue; }
        same_dump "$l" $clone "with the $clone clone" "$cb"
    done
done
echo "clones_test: $n dumps of the avx2 and default clones, run natively, equal to the $native clone's"

# (ASan's shadow memory does not map under qemu-user: the plain build's run checks the clones)
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
    echo "clones_test: no qemu-x86_64 (Debian's qemu-user; make deps installs it): the emulated CPUs are not run"
elif ldd "$bin" 2>/dev/null | grep -q libasan; then
    echo "clones_test: a sanitizer build: qemu-user cannot run it (the emulated CPUs are not run)"
else
    ran=1
    if [ -n "$ATTNVIZ_FULL" ] && [ "$ATTNVIZ_FULL" != 0 ]; then
        list="$(ls lessons/*.json) tests/big/long-256.json"
    else
        list="$(shipped_lessons) lessons/induction-heads.json lessons/tiny-lm-fortunes.json lessons/llama-block.json"
    fi
    list="$list $tmp/long-k.json"
    n=0
    for l in $list; do
        "$bin" --dump "$l" >"$tmp/native.json" 2>"$tmp/err" || { fail "$l: --dump failed natively: $(cat "$tmp/err")"; continue; }
        for cpu in max qemu64; do
            case $cpu in max) want=avx2 ;; qemu64) want=default ;; esac
            got=$(qemu-x86_64 -cpu $cpu "$bin" --version 2>/dev/null | sed -n 's/^core kernels: //p')
            [ "$got" = "$want" ] || { fail "qemu -cpu $cpu runs the '$got' clone, not '$want'"; continue; }
            same_dump "$l" $want "under qemu -cpu $cpu" qemu-x86_64 -cpu $cpu "$bin"
        done
    done
    echo "clones_test: $n dumps of the avx2 and default clones under qemu equal to the $native clone's"
fi
[ "$fails" = 0 ] || exit 1
[ $ran = 1 ] || exit 77
