#!/usr/bin/env python3
"""structure_check.py — the shape of src/ that must not regrow silently (run by
tests/structure_test.sh in `make test`; plain python3, no packages).

Checks, each failing with one line that names the file:
  layers    an #include "x.h" reaches only its own layer or one below it:
            core -> view -> draw -> app -> web (nothing upward)
  circles   no include circle between modules (a module: a .c and its .h; A uses B
            when A.c or A.h includes B.h), within a layer or across layers
  lines     no file in src/ over MAX_LINES lines
  functions no function over MAX_FUNC lines (from its '{' line to its '}' line at
            column 0, the project's style)
  asks      src/draw paints what the view prepared (view/frame.h, view/anim.h): a call from
            a src/draw/*.c file to a function of view/recipe.h or view/scene.h is listed
            in ALLOWED_ASKS with its reason (a new one, or more calls than listed, fails)
  keys      the keys table in README.md and the KEYS section of the man page are the
            ones tests/keys_doc.py generates from src/view/keymap.c (+ assets/lang/en.txt)

ALLOWED below lists what stands today and is to be taken apart (issue 37), each with its
size today and its reason: an entry may only shrink (a listed file or function that grows
past its recorded size fails). A listed file or function that is now within the limit, or
a listed circle that is gone, fails too, so the list is kept short and true.
"""
import os
import re
import subprocess
import sys

MAX_LINES = 900
MAX_FUNC = 150
LAYERS = ["core", "view", "draw", "app", "web"]

# what may stand for now (issue 37 takes each apart); the reason after each
ALLOWED_LINES = {  # path: (its lines today, a ceiling it may not pass; the reason)
    "src/app/app.c": (1086, "the window: issue 37 splits it into small parts"),
    "src/core/lesson.c": (1081, "the model-key table replaces its hand-written checks (issue 37)"),
    "src/app/export.c": (984, "the export-format table with one writer each (issue 37)"),
}
ALLOWED_FUNCS = {  # name: (its lines today, a ceiling; the reason)
    "parse_with": (196, "the model-key table (issue 37)"),
    "lesson_write": (187, "the model-key table writes every key (issue 37)"),
    "layout_place_panels": (177, "issue 37: view kinds as a table, the panels' geometry in parts"),
    "layer_forward": (168, "issue 37: one block's stages as a loop over a table"),
    "attn_json_model": (157, "the model-key table (issue 37)"),
}
# circles as sorted module lists
ALLOWED_CIRCLES = {
}
# calls from src/draw into the recipes and the scene while painting, per (file, function):
# (the call sites today, a ceiling; the reason it stays)
ALLOWED_ASKS = {
    ("render.c", "recipe_loop_cell"): (2, "each cell's state inside a loop (View.loop): a per-cell "
                                          "table for every visible cell would be a per-frame buffer"),
    ("render.c", "scene_cell_changed"): (1, "the lab's mark: reads the panel's own data per cell"),
    ("render.c", "scene_highlight"): (1, "the operands of the row being computed: a pure relation of "
                                         "the panels, also asked for any hovered cell"),
    ("cellmark.c", "scene_highlight"): (1, "what a framed cell reads, for any cell (hover, study, pins)"),
    ("overlay.c", "scene_highlight"): (1, "the hovered cell's operands: the cell is the mouse's"),
    ("derivation.c", "scene_derivation_text"): (2, "formats a line of the strip the view prepared"),
    ("chrome.c", "scene_narration"): (2, "one narration size for the lesson: every stage's text "
                                         "measured when the lesson, size or language changes"),
}


def fail(msg, out):
    out.append(msg)


def src_files(root):
    for layer in LAYERS:
        d = os.path.join(root, "src", layer)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield layer, os.path.join("src", layer, name)


def includes(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                yield n, m.group(1)


def check_layers_and_circles(root, out):
    where = {}  # header name -> layer
    for layer, p in src_files(root):
        if p.endswith(".h"):
            where.setdefault(os.path.basename(p), layer)
    direct = {}  # module (layer/stem) -> modules whose header its files include
    has_c = set()
    for layer, p in src_files(root):
        mod = layer + "/" + os.path.splitext(os.path.basename(p))[0]
        direct.setdefault(mod, set())
        if p.endswith(".c"):
            has_c.add(mod)
        for n, inc in includes(os.path.join(root, p)):
            name = os.path.basename(inc)
            lay = where.get(name)
            if lay is None:
                continue  # a generated header (datadir.h) or a system one in quotes
            if LAYERS.index(lay) > LAYERS.index(layer):
                fail(f"{p}:{n}: includes {name} from src/{lay}/, a layer above src/{layer}/ "
                     f"(the order is {' -> '.join(LAYERS)})", out)
            dep = lay + "/" + os.path.splitext(name)[0]
            if dep != mod:
                direct[mod].add(dep)
    # the nodes are modules with a .c file; a header-only module (window.h, view.h) stands
    # for what it includes, so a .c file's own private header makes no circle with it
    uses = {}
    for mod in has_c:
        reach, todo = set(), list(direct[mod])
        while todo:
            d = todo.pop()
            if d in reach or d == mod:
                continue
            reach.add(d)
            if d not in has_c:
                todo.extend(direct.get(d, ()))
        uses[mod] = {d for d in reach if d in has_c}
    # strongly connected components (Tarjan, iterative enough for a few hundred modules)
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(uses.get(v, ())):
            if w not in uses:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(uses):
        if v not in index:
            strong(v)
    seen = set()
    for comp in comps:
        key = tuple(sorted(c.split("/")[1] for c in comp))
        seen.add(key)
        if key not in ALLOWED_CIRCLES:
            fail(f"src/{comp[0]}.c: an include circle: {' <-> '.join(comp)} "
                 f"(a module includes, directly or not, one that includes it)", out)
    for key in ALLOWED_CIRCLES:
        if key not in seen:
            fail(f"tests/structure_check.py: the allowed circle {' <-> '.join(key)} is gone: "
                 f"remove it from ALLOWED_CIRCLES", out)


def check_sizes(found, limit, allowed, table, what, out):
    """found: (where, key, size) of everything over limit; allowed: key -> (ceiling, reason)
    in ALLOWED_<table>. One line for each new one, each one past its ceiling, and each
    allowed one no longer over the limit."""
    over = set()
    for where, key, n in found:
        over.add(key)
        if key not in allowed:
            fail(f"{where}: {what(key)} {n} lines, over {limit}: split it", out)
        elif n > allowed[key][0]:
            fail(f"{where}: {what(key)} {n} lines, over its allowed {allowed[key][0]} (it may only shrink): "
                 f"split it", out)
    for key in allowed:
        if key not in over:
            fail(f"tests/structure_check.py: {key} is within {limit} lines now (or gone): "
                 f"remove it from ALLOWED_{table}", out)


def check_lines(root, out):
    found = []
    for _, p in src_files(root):
        with open(os.path.join(root, p), encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            found.append((p, p, n))
    check_sizes(found, MAX_LINES, ALLOWED_LINES, "LINES", lambda key: "has", out)


FUNC_HEAD = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(")


def functions(path):
    """(name, first line, length) of each function defined at column 0 with its
    opening brace alone on the next line (the project's style)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            # the head: the lines above back to one starting at column 0 with a name and '('
            j = i - 1
            while j >= 0 and lines[j][:1] in (" ", "\t") and j > i - 8:
                j -= 1
            m = FUNC_HEAD.match(lines[j]) if j >= 0 else None
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m and not lines[j].startswith(("typedef", "struct", "enum", "union", "static const", "const")):
                yield m.group(1), j + 1, k - j + 1
            i = k
        i += 1


def check_functions(root, out):
    found = []
    for _, p in src_files(root):
        if p.endswith(".c"):
            found += [(f"{p}:{line}", name, n) for name, line, n in functions(os.path.join(root, p)) if n > MAX_FUNC]
    check_sizes(found, MAX_FUNC, ALLOWED_FUNCS, "FUNCS", lambda key: f"{key} is", out)


def check_keys(root, out):
    r = subprocess.run([sys.executable, os.path.join(root, "tests", "keys_doc.py"), "--check"],
                       cwd=root, capture_output=True, text=True)
    if r.returncode != 0:
        fail((r.stdout + r.stderr).strip().splitlines()[0] if (r.stdout + r.stderr).strip()
             else "tests/keys_doc.py --check failed", out)


def view_asks(root):
    """The functions view/recipe.h and view/scene.h declare."""
    names = set()
    for h in ("recipe.h", "scene.h"):
        with open(os.path.join(root, "src", "view", h), encoding="utf-8") as f:
            names |= {m.group(1) for m in re.finditer(r"^[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\(", f.read(), re.M)}
    return names


def check_asks(root, out):
    names, found = view_asks(root), {}
    d = os.path.join(root, "src", "draw")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(d, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for m in re.finditer(r"\b([a-z_]\w*)\s*\(", line.split("//")[0]):
                    if m.group(1) in names:
                        found.setdefault((name, m.group(1)), []).append(n)
    for key, lines in sorted(found.items()):
        allowed = ALLOWED_ASKS.get(key)
        if allowed is None or len(lines) > allowed[0]:
            fail(f"src/draw/{key[0]}:{lines[-1]}: calls {key[1]} (view/recipe.h, scene.h) while painting"
                 f"{'' if allowed is None else f' {len(lines)} times, over its allowed {allowed[0]}'}: "
                 f"let view/frame.c prepare it (Frame)", out)
    for key in ALLOWED_ASKS:
        if key not in found:
            fail(f"tests/structure_check.py: src/draw/{key[0]} no longer calls {key[1]}: "
                 f"remove it from ALLOWED_ASKS", out)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    out = []
    check_layers_and_circles(root, out)
    check_lines(root, out)
    check_functions(root, out)
    check_asks(root, out)
    check_keys(root, out)
    for line in out:
        print(line)
    print(f"structure: {len(out)} problem(s)" if out else "structure: ok")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
