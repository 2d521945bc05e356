"""bpe.py: byte-level byte-pair encoding as attnviz's core does it (src/core/bpe.h), written
again from the algorithm in plain Python: the trainer of the BPE lesson
(lessons/train_bpe_lm.py) and the reference the C tokenizer is checked against
(tests/gen_bpe.py -> tests/ref/bpe_cases.json -> tests/test_bpe.c).

A token is bytes. Token ids 0-255 are the bytes; merge i makes token 256 + i from its two
parts. Text is first split into chunks (a word with the space before it, a number, a run
of punctuation, a run of white space: `chunks`), and merges never cross a chunk. Encoding a
chunk: the adjacent pair whose merge comes first is merged everywhere in the chunk (left to
right), again, until no adjacent pair has a merge (GPT-2's and minbpe's rule).

The lesson writes a token as text (`token_text`): its UTF-8 characters as themselves, and a
byte that is not a printable character of its own as "<0xNN>".
"""

import re
from collections import Counter

SPACE = b" \t\n\r\v\f"


def byte_class(b):
    """0 letter (ASCII letters and every byte of a non-ASCII character), 1 digit, 2 white
    space, 3 other."""
    if (0x61 <= b <= 0x7A) or (0x41 <= b <= 0x5A) or b >= 0x80:
        return 0
    if 0x30 <= b <= 0x39:
        return 1
    if b in SPACE:
        return 2
    return 3


def chunks(data):
    """data (bytes) cut into chunks: " ?letters+", " ?digits+", " ?others+", or white space
    (a last space of a run that a non-space follows goes with what follows)."""
    out, i, n = [], 0, len(data)
    while i < n:
        j = i
        if data[j] == 0x20 and j + 1 < n and byte_class(data[j + 1]) != 2:
            j += 1
        k = byte_class(data[j])
        while j < n and byte_class(data[j]) == k:
            j += 1
        if k == 2 and j < n and j - i > 1 and data[j - 1] == 0x20:
            j -= 1
        out.append(data[i:j])
        i = j
    return out


def merge_pair(ids, pair, new):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def encode(text, merges):
    """text (str or bytes) into token ids with merges [(a, b), ...] (merge i makes 256 + i)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    rank = {tuple(p): i for i, p in enumerate(merges)}
    ids = []
    for ch in chunks(data):
        t = list(ch)
        while len(t) > 1:
            best = min((rank[p] for p in zip(t, t[1:]) if p in rank), default=None)
            if best is None:
                break
            t = merge_pair(t, merges[best], 256 + best)
        ids.extend(t)
    return ids


MAX_TEXT = 64  # a vocab string's bytes at most (the lesson reader's limit)


def train(text, n_merges, min_count=2):
    """The first n_merges merges of text's chunks (fewer when no pair is seen min_count
    times): the most frequent adjacent pair each time (ties: the smaller pair of ids),
    leaving out pairs whose token would be written in more than MAX_TEXT bytes. text may be a
    list of texts, each cut into chunks on its own (as a model's training stream is encoded
    text by text). The pair counts are kept up to date word by word (only the words holding
    the merged pair are counted again), the most frequent found with a heap."""
    import heapq
    texts = [text] if isinstance(text, str) else text
    words = Counter(ch for t in texts for ch in chunks(t.encode("utf-8")))
    seqs = [list(w) for w in words]
    freq = list(words.values())
    counts, where = Counter(), {}
    for wi, t in enumerate(seqs):
        for p in zip(t, t[1:]):
            counts[p] += freq[wi]
            where.setdefault(p, set()).add(wi)
    heap = [(-c, p) for p, c in counts.items()]
    heapq.heapify(heap)
    merges, toks, banned = [], [bytes([b]) for b in range(256)], set()
    while len(merges) < n_merges and heap:
        c, pair = heapq.heappop(heap)
        c = -c
        if pair in banned or counts.get(pair, 0) != c:
            continue  # (a stale entry: its count changed since)
        if c < min_count:
            break
        if len(token_text(toks[pair[0]] + toks[pair[1]]).encode("utf-8")) > MAX_TEXT:
            banned.add(pair)
            continue
        new = 256 + len(merges)
        merges.append(pair)
        toks.append(toks[pair[0]] + toks[pair[1]])
        changed = set()
        for wi in where.pop(pair, ()):
            t = seqs[wi]
            for p in zip(t, t[1:]):
                counts[p] -= freq[wi]
                changed.add(p)
            t = seqs[wi] = merge_pair(t, pair, new)
            for p in zip(t, t[1:]):
                counts[p] += freq[wi]
                where.setdefault(p, set()).add(wi)
                changed.add(p)
        for p in changed:
            if counts[p] > 0:
                heapq.heappush(heap, (-counts[p], p))
    return merges


def token_bytes(merges):
    """Every token's bytes: the 256 bytes, then each merge's result."""
    out = [bytes([b]) for b in range(256)]
    for a, b in merges:
        out.append(out[a] + out[b])
    return out


def token_text(data):
    """A token's bytes as the lesson writes them: UTF-8 characters as themselves, every
    other byte (control characters, bytes of a character cut in two) as "<0xNN>"."""
    out, i = [], 0
    while i < len(data):
        for n in (1, 2, 3, 4):
            try:
                ch = data[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            ch = None
        if ch is None or ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F:
            out.append("<0x%02X>" % data[i])
            i += 1
        else:
            out.append(ch)
            i += len(ch.encode("utf-8"))
    return "".join(out)


def text_bytes(s):
    """A vocab string's bytes, as the core reads it: "<0xNN>" is the byte NN."""
    return re.sub(rb"<0x([0-9A-F]{2})>", lambda m: bytes([int(m.group(1), 16)]), s.encode("utf-8"))


def lesson_keys(merges):
    """The lesson's "vocab" and "merges" (strings) for merges."""
    toks = token_bytes(merges)
    vocab = [token_text(t) for t in toks]
    for t, v in zip(toks, vocab):  # (a token holding the text "<0x41>" would read as a byte)
        assert text_bytes(v) == t, "token %r cannot be written unambiguously" % t
    return vocab, [[vocab[a], vocab[b]] for a, b in merges]
