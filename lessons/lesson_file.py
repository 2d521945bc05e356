"""lesson_file.py: a lesson dict as attnviz's JSON text, checked against the C loader's
limits, and written to disk the way attnviz writes a file (src/core/temp_file.c).

    lesson_text(lesson)        the JSON text ('%.9g' numbers: float32 values round-trip);
                               ValueError naming the first NaN / Inf ("weights.w_q[1][0]: NaN")
    check_lesson(lesson)       ValueError, one line with the JSON path, where attnviz's loader
                               would refuse the lesson (the limits of src/core/attn_json.h,
                               lesson.h and lesson.c: sizes, texts, vocab, token ids)
    check_target(path)         ValueError unless path can be written: run before a long job
    save_lesson(lesson, path)  all of the above, then a temporary file created exclusively in the
                               target's folder, fsync'ed and renamed over the target; a target
                               that exists and is not a regular file (a FIFO, a device, a folder)
                               is refused, a symbolic link is written through (never replaced);
                               temporary files a killed writer left beside it are removed

Used by lessons/from_torch.py and every training script (through lessons/trained.py).
"""

import errno
import json
import math
import os
import stat

# the C loader's limits (src/core/attn_json.h, lesson.h, lesson.c); tests/from_torch_errors.py
# checks that they equal the #defines
LIMITS = {
    "LESSON_MAX_LAYERS": 8, "LESSON_MAX_BATCH": 64, "LESSON_MAX_LEN": 1024, "LESSON_MAX_D_MODEL": 1024,
    "LESSON_MAX_HEADS": 64, "LESSON_MAX_D_HEAD": 1024, "LESSON_MAX_FFN": 4096, "LESSON_MAX_ELEMS": 1 << 22,
    "LESSON_MAX_TEXT": 4096, "LESSON_MAX_VOCAB": 1024,
}
MAX_TOKEN_BYTES = 64          # lesson.c token_list: a token or a vocab entry
TOP_KEYS = ("title", "description", "vocab", "tokenizer", "merges", "model", "input", "mask", "task", "weights", "checkpoints",
            "tokens", "steps", "notes", "quiz", "image")


# ----------------------------------------------------------------------------
# the JSON text
# ----------------------------------------------------------------------------

def _num(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError("a lesson holds finite numbers only, got %r" % x)
    return "%.9g" % x


def compact_json(obj, num=_num):
    """obj as one line of JSON, numbers written by num."""
    if obj is None:
        return "null"
    if isinstance(obj, str):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, dict):
        return "{" + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + compact_json(v, num)
                               for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(compact_json(v, num) for v in obj) + "]"
    return num(obj)


def to_json(obj, indent=0, width=100, num=_num):
    """Readable, deterministic JSON: containers that fit stay on one line, a row
    of numbers always stays on one line. tests/gen_reference.py writes with it too."""
    compact = compact_json(obj, num)
    if not isinstance(obj, (dict, list, tuple)) or len(compact) + indent <= width:
        return compact
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        items = [pad + json.dumps(k, ensure_ascii=False) + ": " + to_json(v, indent + 2, width, num)
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if all(not isinstance(v, (dict, list, tuple)) for v in obj):
        return compact
    items = [pad + to_json(v, indent + 2, width, num) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def _key(path, k):
    return "%s.%s" % (path, k) if path else str(k)


def _nonfinite(obj, path):
    """(path, value) of the first NaN or infinity in obj, else None."""
    if isinstance(obj, float):
        return (path, obj) if math.isnan(obj) or math.isinf(obj) else None
    if isinstance(obj, dict):
        items = ((_key(path, k), v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        items = (("%s[%d]" % (path, i), v) for i, v in enumerate(obj))
    else:
        return None
    for p, v in items:
        bad = _nonfinite(v, p)
        if bad:
            return bad
    return None


def lesson_text(lesson):
    """The lesson as JSON text: numbers with '%.9g' (float32 values round-trip exactly)."""
    bad = _nonfinite(lesson, "")
    if bad:
        raise ValueError("%s: %r; a lesson holds finite numbers only" % bad)
    return to_json(lesson) + "\n"


# ----------------------------------------------------------------------------
# the C loader's limits
# ----------------------------------------------------------------------------

def _type(v):
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(v), "a number" if isinstance(v, (int, float)) else type(v).__name__)


def _check_text(v, path, multiline):
    if not isinstance(v, str):
        raise ValueError("%s: expected a string, got %s" % (path, _type(v)))
    if len(v.encode("utf-8")) > LIMITS["LESSON_MAX_TEXT"]:
        raise ValueError("%s: text longer than %d bytes" % (path, LIMITS["LESSON_MAX_TEXT"]))
    for ch in v:
        cp = ord(ch)
        if (cp < 0x20 and not (multiline and ch in "\n\t")) or 0x7f <= cp <= 0x9f:
            raise ValueError("%s: control character U+%04X in the text; expected printable text" % (path, cp))


def _check_texts(v, path, multiline):
    """A text: a string or {"en": ..., "zh": ...} (lesson.c get_text)."""
    if isinstance(v, str):
        return _check_text(v, path, multiline)
    if not isinstance(v, dict):
        raise ValueError('%s: expected a string or {"en": ..., "zh": ...}, got %s' % (path, _type(v)))
    extra = [k for k in v if k not in ("en", "zh")]
    if extra:
        raise ValueError("%s.%s: unknown key; expected en and zh" % (path, extra[0]))
    if "en" not in v:
        raise ValueError("%s.en: missing; expected the English text" % path)
    for k in v:
        _check_text(v[k], "%s.%s" % (path, k), multiline)


def _check_tokens(v, path, n=None):
    if not isinstance(v, (list, tuple)) or (n is not None and len(v) != n):
        raise ValueError("%s: expected an array of %s strings (one per position), got %s"
                         % (path, n if n is not None else "token", _type(v) if not isinstance(v, (list, tuple))
                            else "%d" % len(v)))
    for i, t in enumerate(v):
        p = "%s[%d]" % (path, i)
        if not isinstance(t, str):
            raise ValueError("%s: expected a string, got %s" % (p, _type(t)))
        if len(t.encode("utf-8")) > MAX_TOKEN_BYTES:
            raise ValueError("%s: token longer than %d bytes" % (p, MAX_TOKEN_BYTES))
        _check_text(t, p, False)


def _shape(v):
    """The shape of a tensor as a lesson writes it: nested arrays or {"shape", "data"}."""
    if isinstance(v, dict) and "shape" in v:
        return [int(s) for s in v["shape"]]
    shape = []
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:
            break
        v = v[0]
    return shape


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _int_in(m, key, lo, hi, path="model"):
    v = m.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) and not (isinstance(v, float) and v == int(v)):
        raise ValueError("%s.%s: expected a whole number from %d to %d, got %r" % (path, key, lo, hi, v))
    if not lo <= v <= hi:
        raise ValueError("%s.%s: %d is outside %d to %d" % (path, key, v, lo, hi))
    return int(v)


def _check_model(m):
    if not isinstance(m, dict):
        raise ValueError("model: expected an object, got %s" % _type(m))
    for key in ("d_model", "n_heads"):
        if key not in m:
            raise ValueError("model.%s: missing" % key)
    C = _int_in(m, "d_model", 1, LIMITS["LESSON_MAX_D_MODEL"])
    H = _int_in(m, "n_heads", 1, LIMITS["LESSON_MAX_HEADS"])
    _int_in(m, "n_layers", 1, LIMITS["LESSON_MAX_LAYERS"])
    d_k = _int_in(m, "d_k", 1, LIMITS["LESSON_MAX_D_HEAD"])
    _int_in(m, "d_v", 1, LIMITS["LESSON_MAX_D_HEAD"])
    _int_in(m, "ffn_hidden", 0, LIMITS["LESSON_MAX_FFN"])
    _int_in(m, "max_positions", 1, LIMITS["LESSON_MAX_LEN"])
    Hkv = _int_in(m, "n_kv_heads", 1, LIMITS["LESSON_MAX_HEADS"])
    if d_k is None and C % H:
        raise ValueError("model.n_heads: %d does not divide d_model %d; give model.d_k" % (H, C))
    if Hkv is not None and H % Hkv:
        raise ValueError("model.n_kv_heads: %d does not divide n_heads %d" % (Hkv, H))
    return H


def _check_ids(ids, V, m):
    if not isinstance(ids, (list, tuple)) or not ids:
        raise ValueError("input.ids: expected token ids, (B, L) or (L), got %s"
                         % ("an empty array" if isinstance(ids, (list, tuple)) else _type(ids)))
    rows = ids if isinstance(ids[0], (list, tuple)) else [ids]
    if len(rows) > LIMITS["LESSON_MAX_BATCH"]:
        raise ValueError("input.ids: batch %d is over the limit of %d" % (len(rows), LIMITS["LESSON_MAX_BATCH"]))
    L = len(rows[0])
    for b, row in enumerate(rows):
        if not isinstance(row, (list, tuple)) or len(row) != L:
            raise ValueError("input.ids[%d]: expected %d ids like row 0" % (b, L))
        for i, t in enumerate(row):
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < V:
                raise ValueError("input.ids[%d][%d]: %r; expected a token id from 0 to %d (the vocab's)"
                                 % (b, i, t, V - 1))
    if not 1 <= L <= LIMITS["LESSON_MAX_LEN"]:
        raise ValueError("input.ids: %d tokens; expected 1 to %d" % (L, LIMITS["LESSON_MAX_LEN"]))
    P = m.get("max_positions")
    if m.get("positions") == "learned" and P is not None and L > P:
        raise ValueError("input: %d tokens, longer than the model's context (model.max_positions %d)" % (L, P))
    return len(rows), L


def check_lesson(lesson):
    """Raises ValueError (one line: the JSON path and what was expected) where attnviz's
    loader would refuse the lesson for its texts, vocab, ids or sizes; the numbers inside the
    weights are checked by lesson_text. Returns the lesson."""
    if not isinstance(lesson, dict):
        raise ValueError("a lesson is a JSON object, got %s" % _type(lesson))
    for k in lesson:
        if k not in TOP_KEYS:
            raise ValueError("%s: unknown key; expected %s" % (k, ", ".join(TOP_KEYS)))
    if "title" not in lesson:
        raise ValueError('title: missing; expected a string or {"en": ..., "zh": ...}')
    _check_texts(lesson["title"], "title", False)
    if "description" in lesson:
        _check_texts(lesson["description"], "description", True)
    H = _check_model(lesson.get("model"))
    for part in ("steps", "notes"):
        if part in lesson:
            if not isinstance(lesson[part], dict):
                raise ValueError("%s: expected an object, got %s" % (part, _type(lesson[part])))
            for k, v in lesson[part].items():
                path = "%s.%s" % (part, k)
                if part == "steps" and isinstance(v, dict) and "head" in v:
                    # the head the narration is about, the one the stage opens on (lesson.c step_head)
                    h = v["head"]
                    if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < H:
                        raise ValueError("%s.head: expected the head the narration is about, a whole number "
                                         "from 0 to %d, got %r" % (path, H - 1, h))
                    v = {key: t for key, t in v.items() if key != "head"}
                _check_texts(v, path, True)
    m, inp = lesson["model"], lesson.get("input")
    if not isinstance(inp, dict):
        raise ValueError("input: expected an object, got %s" % _type(inp))
    vocab = lesson.get("vocab")
    if vocab is not None:
        if not isinstance(vocab, (list, tuple)) or not 1 <= len(vocab) <= LIMITS["LESSON_MAX_VOCAB"]:
            raise ValueError("vocab: expected an array of 1 to %d token strings, got %s"
                             % (LIMITS["LESSON_MAX_VOCAB"], "%d" % len(vocab) if isinstance(vocab, (list, tuple))
                                else _type(vocab)))
        _check_tokens(vocab, "vocab")
        seen = {}
        for i, t in enumerate(vocab):
            if not t:
                raise ValueError("vocab[%d]: empty; expected a token" % i)
            if lesson.get("tokenizer") == "word" and " " in t:
                raise ValueError('vocab[%d]: "%s" has a space; the word tokenizer splits there' % (i, t))
            if t in seen:
                raise ValueError('vocab[%d]: "%s" again (vocab[%d]); expected distinct tokens' % (i, t, seen[t]))
            seen[t] = i
        if "tokens" in lesson:
            raise ValueError('tokens: a language model\'s labels are its tokens (the vocab\'s); expected no "tokens"')
        B, Lq, Lk = 1, None, None
        if "ids" in inp:
            B, Lq = _check_ids(inp["ids"], len(vocab), m)
            Lk = Lq
            if _numel([B, Lq, len(vocab)]) > LIMITS["LESSON_MAX_ELEMS"]:
                raise ValueError("input.ids: the logits (%d, %d, %d) are over the limit of %d elements"
                                 % (B, Lq, len(vocab), LIMITS["LESSON_MAX_ELEMS"]))
    elif "image" in lesson:  # a vision transformer (src/core/lesson_image.c): images in, CLS + patches
        im = lesson["image"]
        s = _shape(inp.get("image"))
        s = [1] + s if len(s) == 2 else s
        if len(s) != 3 or s[1:] != [im["height"], im["width"]]:
            raise ValueError("input.image: shape %s; expected (B, %d, %d)" % (s, im["height"], im["width"]))
        if im["height"] % im["patch"] or im["width"] % im["patch"]:
            raise ValueError("image.patch: %d does not divide the %d × %d image" % (im["patch"], im["height"], im["width"]))
        if not 1 <= len(im["classes"]) <= LIMITS["LESSON_MAX_VOCAB"]:
            raise ValueError("image.classes: expected 1 to %d class names" % LIMITS["LESSON_MAX_VOCAB"])
        B = s[0]
        Lq = Lk = (im["height"] // im["patch"]) * (im["width"] // im["patch"]) + 1
    else:
        q = _shape(inp.get("query"))
        if len(q) not in (2, 3):
            raise ValueError("input.query: expected (B, L, d_model) or (L, d_model), got shape %s" % q)
        q = [1] + q if len(q) == 2 else q
        k = inp.get("key")
        k = _shape(k) if k is not None and not isinstance(k, str) else q
        k = [1] + k if len(k) == 2 else k
        for what, s in (("input.query", q), ("input.key", k)):
            if not 1 <= s[0] <= LIMITS["LESSON_MAX_BATCH"]:
                raise ValueError("%s: batch %d; expected 1 to %d" % (what, s[0], LIMITS["LESSON_MAX_BATCH"]))
            if not 1 <= s[1] <= LIMITS["LESSON_MAX_LEN"]:
                raise ValueError("%s: length %d; expected 1 to %d" % (what, s[1], LIMITS["LESSON_MAX_LEN"]))
        B, Lq, Lk = q[0], q[1], k[1]
        toks = lesson.get("tokens")
        if isinstance(toks, dict):
            if "query" in toks:
                _check_tokens(toks["query"], "tokens.query", Lq)
            if "key" in toks:
                _check_tokens(toks["key"], "tokens.key", Lk)
        elif toks is not None:
            _check_tokens(toks, "tokens", Lq)
            if Lq != Lk:
                raise ValueError('tokens: query and key lengths differ; give {"query": [...], "key": [...]}')
    if Lq is not None and _numel([B, H, Lq, Lk]) > LIMITS["LESSON_MAX_ELEMS"]:
        raise ValueError("model.n_heads: the scores (%d, %d, %d, %d) are over the limit of %d elements"
                         % (B, H, Lq, Lk, LIMITS["LESSON_MAX_ELEMS"]))
    weights = lesson.get("weights")
    if not isinstance(weights, dict):
        raise ValueError("weights: expected an object, got %s" % _type(weights))
    layers = weights.get("layers")
    objs = [("weights.", weights)] + [("weights.layers[%d]." % i, w) for i, w in enumerate(layers or [])
                                      if isinstance(w, dict)]
    for where, obj in objs:
        for name, t in obj.items():
            if name in ("layers", "init"):
                continue
            n = _numel(_shape(t))
            if n > LIMITS["LESSON_MAX_ELEMS"]:
                raise ValueError("%s%s: %d elements, over the limit of %d" % (where, name, n, LIMITS["LESSON_MAX_ELEMS"]))
    return lesson


# ----------------------------------------------------------------------------
# writing a file as attnviz does (src/core/temp_file.c)
# ----------------------------------------------------------------------------

def _target(path):
    """The file that writing path replaces: path, or the regular file a symbolic link leads to."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise ValueError("%s: cannot write: its folder does not exist" % path) from None
        return path
    except OSError as e:
        raise ValueError("%s: cannot write: %s" % (path, e.strerror)) from None
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            raise ValueError("%s: cannot write: a symbolic link to a file that does not exist" % path) from None
        path = real
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("%s: cannot write: it exists and is not a regular file" % path)
    return path


def _create_temp(real, path):
    """(fd, name) of a new file beside real, created exclusively (a planted name or link is never followed)."""
    for _ in range(100):
        tmp = "%s.tmp-%d-%08x" % (real, os.getpid(), int.from_bytes(os.urandom(4), "little"))
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue
        except PermissionError:
            raise ValueError("%s: cannot write: no permission to create a file in its folder" % path) from None
        except OSError as e:
            raise ValueError("%s: cannot write: %s" % (path, e.strerror)) from None
    raise ValueError("%s: cannot write: no free temporary name beside it" % path)


def _clean_stale(real):
    """Removes REAL.tmp-PID-HEX beside real whose process is gone (what a killed writer left),
    as temp_file_clean_stale does."""
    folder, base = os.path.split(real)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for n in names:
        rest = n[len(base) + 5:] if n.startswith(base + ".tmp-") else ""
        pid, _, tail = rest.partition("-")
        if not (pid.isdigit() and len(tail) == 8 and all(c in "0123456789abcdef" for c in tail)):
            continue
        if int(pid) == os.getpid() or int(pid) <= 0:
            continue
        try:
            os.kill(int(pid), 0)
            continue                                 # still running (or not ours to ask)
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            os.unlink(os.path.join(folder, n))
        except OSError:
            pass


def check_target(path):
    """ValueError (one line) unless a lesson can be written to path: the target is a regular
    file, a link to one or a new name, and a file can be created in its folder. For the
    training scripts, before minutes of training."""
    real = _target(path)
    fd, tmp = _create_temp(real, path)
    os.close(fd)
    os.unlink(tmp)


def save_lesson(lesson, path):
    """Writes the lesson dict to path (UTF-8 JSON), atomically: checked and formatted first,
    then a temporary file beside the target, fsync'ed and renamed over it (a symbolic link is
    written through; the target's mode is kept). ValueError (one line) and the old file
    untouched when the lesson or the target is refused."""
    data = lesson_text(check_lesson(lesson)).encode("utf-8")
    real = _target(path)
    _clean_stale(real)
    fd, tmp = _create_temp(real, path)
    try:
        try:
            os.fchmod(fd, stat.S_IMODE(os.stat(real).st_mode))
        except FileNotFoundError:
            pass                                     # a new file: 0666 less the umask, as open gave
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.rename(tmp, real)
    except OSError as e:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ValueError("%s: cannot write: %s" % (path, e.strerror or errno.errorcode.get(e.errno, e))) from None
