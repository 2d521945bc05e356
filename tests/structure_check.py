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
  parts     each function of src/app/X.c is declared in X.h (or nowhere: main; without an
            X.h, X = Y_part may be a part of module Y: in Y.h), never in another
            file's header: the window's parts then call each other only
            through the headers they include, so a call circle among them is an
            include circle above (window.h once declared every part's functions, and
            app.c, app_export.c, app_lessons.c and textbox.c called round in a circle
            that no include showed)
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
MAX_APP_FIELDS = 20  # struct App (src/app/window.h): each part owns its state in a field of its own
LAYERS = ["core", "view", "draw", "app", "web"]

# what may stand for now (issue 37 takes each apart); the reason after each
ALLOWED_LINES = {  # path: (its lines today, a ceiling it may not pass; the reason)
}
ALLOWED_FUNCS = {  # name: (its lines today, a ceiling; the reason)
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


def strip_c(text):
    """text without comments, string literals' contents and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"(?m)^\s*#[^\n]*(\\\n[^\n]*)*", "", text)


def declared(path):
    """Names of the functions a header declares (prototypes at file scope)."""
    with open(path, encoding="utf-8") as f:
        text = strip_c(f.read())
    names, depth, stmt = set(), 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            if ch == ";":
                st = " ".join(stmt.split())
                m = re.match(r"(?!typedef\b|extern\b)[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(", st)
                if m:
                    names.add(m.group(1))
                stmt = ""
            else:
                stmt += ch
        if depth == 0 and ch == "}":
            stmt = ""
    return names


DEF_HEAD = re.compile(r"^(?!static\b|typedef\b|extern\b|struct\b|enum\b|union\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(")


def defined(path):
    """(name, line) of the functions a .c file defines with external linkage."""
    with open(path, encoding="utf-8") as f:
        lines = strip_c(f.read()).split("\n")
    for i, line in enumerate(lines):
        m = DEF_HEAD.match(line)
        if not m:
            continue
        rest = "\n".join(lines[i:i + 8])
        b, sc = rest.find("{"), rest.find(";")
        if b >= 0 and (sc < 0 or b < sc):
            yield m.group(1), i + 1


def check_parts(root, out, layer="app"):
    d = os.path.join(root, "src", layer)
    if not os.path.isdir(d):
        return
    owner = {}  # function name -> the headers declaring it
    for name in sorted(os.listdir(d)):
        if name.endswith(".h"):
            for fn in declared(os.path.join(d, name)):
                owner.setdefault(fn, []).append(name)
    headers = {n for n in os.listdir(d) if n.endswith(".h")}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".c"):
            continue
        stem = os.path.splitext(name)[0]
        own = stem + ".h"
        # without a header of its own, X_part.c may be a part of module X (export_plan.c
        # of export.h, cli_backward.c of cli.h): declared in X.h
        mine = {own} if own in headers else {h for h in headers if stem.startswith(h[:-2] + "_")}
        for fn, line in defined(os.path.join(d, name)):
            others = [h for h in owner.get(fn, ()) if h not in mine]
            if others:
                fail(f"src/{layer}/{name}:{line}: {fn} is declared in {others[0]}, not in {own}: each part "
                     f"declares its functions in its own header (else a call circle hides from the include check)",
                     out)


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


# made-up trees for --self-test: src/app files, and the line the checks must print (None: none)
SELF_TESTS = {
    "two parts including each other's header": ({
        "app_a.h": "void app_a(void);\n",
        "app_a.c": '#include "app_a.h"\n#include "app_b.h"\nvoid app_a(void)\n{\n    app_b();\n}\n',
        "app_b.h": "void app_b(void);\n",
        "app_b.c": '#include "app_b.h"\n#include "app_a.h"\nvoid app_b(void)\n{\n    app_a();\n}\n',
    }, "src/app/app_a.c: an include circle: app/app_a <-> app/app_b"),
    "two parts calling each other through one shared header": ({
        "window.h": "typedef struct App App;\nvoid app_a(App *a);\nvoid app_b(App *a);\n",
        "app_a.c": '#include "window.h"\nvoid app_a(App *a)\n{\n    app_b(a);\n}\n',
        "app_b.c": '#include "window.h"\nvoid app_b(App *a)\n{\n    app_a(a);\n}\n',
    }, "src/app/app_a.c:2: app_a is declared in window.h, not in app_a.h"),
    "parts in order (a calls b, b calls nothing above it)": ({
        "window.h": "typedef struct App App;\nstruct App {\n    int n;\n};\n",
        "app_a.h": '#include "window.h"\nvoid app_a(App *a);\n',
        "app_a.c": '#include "app_a.h"\n#include "app_b.h"\nvoid app_a(App *a)\n{\n    app_b(a);\n}\n',
        "app_b.h": '#include "window.h"\nvoid app_b(App *a);\n',
        "app_b.c": '#include "app_b.h"\nvoid app_b(App *a) { a->n++; }\n',
    }, None),
}


def self_test():
    """The circle and parts checks on SELF_TESTS' made-up trees: each must print its line."""
    import tempfile
    bad = 0
    for name, (files, want) in SELF_TESTS.items():
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "src", "app"))
            for fname, text in files.items():
                with open(os.path.join(root, "src", "app", fname), "w", encoding="utf-8") as f:
                    f.write(text)
            out = []
            check_layers_and_circles(root, out)
            check_parts(root, out)
            out = [o for o in out if "ALLOWED_CIRCLES" not in o]  # (the real tree's allowed circle)
            ok = any(o.startswith(want) for o in out) if want else not out
            if not ok:
                bad += 1
                print(f"structure_check --self-test: {name}: expected {want or 'no problem'}, got {out}")
    print("structure self-test: ok" if not bad else f"structure self-test: {bad} failed")
    return 1 if bad else 0


def check_app_fields(root, out):
    """struct App holds at most MAX_APP_FIELDS fields (issue 37: it had grown to 68)."""
    path = os.path.join(root, "src", "app", "window.h")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        m = re.search(r"^struct App \{\n(.*?)^\};", f.read(), re.M | re.S)
    if not m:
        fail("src/app/window.h: no struct App found", out)
        return
    fields = [l for l in m.group(1).split("\n") if l.strip() and not l.strip().startswith("//") and ";" in l]
    if len(fields) > MAX_APP_FIELDS:
        fail(f"src/app/window.h: struct App has {len(fields)} fields (at most {MAX_APP_FIELDS}): put the new "
             "state into the part that owns it (a struct of its own, or an existing part's)", out)


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
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    out = []
    check_layers_and_circles(root, out)
    check_lines(root, out)
    check_functions(root, out)
    check_parts(root, out)
    check_app_fields(root, out)
    check_asks(root, out)
    check_keys(root, out)
    for line in out:
        print(line)
    print(f"structure: {len(out)} problem(s)" if out else "structure: ok")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
