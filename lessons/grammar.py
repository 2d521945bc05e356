"""grammar.py: the small English-like grammar of lessons/train_grammar.py, word by word.

Twenty words (the lesson's vocabulary, tokenizer "word"):

    the man men that sees see likes like Mary Anna John Tom thanked because she he ( ) [ ]

Six kinds of sentence, each drawn by sentence(gen), a torch.Generator:

- simple:      SUBJ VERB OBJ                       "the men like Mary"
- object relative clause:  the N that SUBJ2 VERB2 VERB OBJ
                                                   "the men that the man likes see Anna"
- subject relative clause: the N that VERB2 OBJ2 VERB OBJ
                                                   "the man that sees the men likes Tom"
- pronoun:     NAME thanked NAME because PRONOUN HABIT OBJ
                                                   "Mary thanked John because she likes the man"
- because:     NAME thanked NAME because CLAUSE    (CLAUSE one of the first three: the subject
               of the clause is then at position 5, not 1)
- brackets:    two kinds of brackets, properly nested, 2 to 12 of them   "( [ ( ) ] [ ] )"

SUBJ and OBJ are "the man", "the men" or a name; a verb agrees in number with its subject
(sees / likes with "man" and the names, see / like with "men"): in a relative clause the
main verb agrees with the noun before "that", across the clause. The two names of a pronoun
sentence are a woman (Mary, Anna) and a man (John, Tom), so "she" and "he" each name exactly
one of them, and each person has a habit, the verb that follows the pronoun: Mary and Tom
like, Anna and John see (each pronoun can be followed by either verb, so only the person
tells which). A sentence is at most MAX_LEN words.

Each drawn sentence also returns what the lesson measures (Sentence): where a main verb is
predicted across a clause and where its subject is, where a pronoun is and who it names, and
for brackets the innermost open bracket at each position."""

import torch

VOCAB = ("the man men that sees see likes like Mary Anna John Tom thanked because she he "
         "( ) [ ]").split()
V = len(VOCAB)
ID = {w: i for i, w in enumerate(VOCAB)}
MAX_LEN = 13
WOMEN, MEN = ("Mary", "Anna"), ("John", "Tom")
HABIT = {"Mary": "likes", "Anna": "sees", "John": "sees", "Tom": "likes"}
VERBS = (("sees", "see"), ("likes", "like"))          # (singular, plural)
SINGULAR = {"sees", "likes"}
OPEN, CLOSE = {"(": ")", "[": "]"}, {")": "(", "]": "["}
# how often each kind is drawn (out of 20)
KINDS = (("simple", 2), ("object_rel", 4), ("subject_rel", 3), ("pronoun", 5), ("because", 2), ("brackets", 4))


class Sentence:
    """words; agree: [(row, subject position, plural)] the rows whose next word is a main
    verb after a relative clause; pronoun: (row, referent position, other name's position) or
    None; brackets: [(row, innermost open position)] for every row with an open bracket."""

    def __init__(self, kind):
        self.kind, self.words, self.agree, self.pronoun, self.brackets = kind, [], [], None, []


def _pick(gen, seq):
    return seq[int(torch.randint(len(seq), (1,), generator=gen))]


def _coin(gen):
    return bool(torch.randint(2, (1,), generator=gen))


def _noun_phrase(gen, s, names=True):
    """'the man', 'the men' or a name, appended to s.words: True when plural."""
    k = int(torch.randint(4 if names else 2, (1,), generator=gen))
    if k < 2:
        s.words += ["the", ("man", "men")[k]]
        return k == 1
    s.words.append(_pick(gen, WOMEN + MEN))
    return False


def _verb(gen, plural):
    return _pick(gen, VERBS)[1 if plural else 0]


def _clause(gen, s, kind):
    if kind == "simple":
        plural = _noun_phrase(gen, s)
        s.words.append(_verb(gen, plural))
        _noun_phrase(gen, s)
        return
    plural = _coin(gen)
    s.words += ["the", "men" if plural else "man", "that"]
    subject = len(s.words) - 2
    if kind == "object_rel":
        plural2 = _noun_phrase(gen, s)
        s.words.append(_verb(gen, plural2))
    else:
        s.words.append(_verb(gen, plural))
        _noun_phrase(gen, s)
    s.agree.append((len(s.words) - 1, subject, plural))
    s.words.append(_verb(gen, plural))
    _noun_phrase(gen, s)


def _brackets(gen, s):
    n = 2 * int(torch.randint(1, 7, (1,), generator=gen))      # 2 to 12 brackets
    stack = []
    for i in range(n):
        left = n - i
        if stack and (len(stack) == left or _coin(gen)):
            s.words.append(OPEN[s.words[stack.pop()]])
        else:
            stack.append(i)
            s.words.append(_pick(gen, tuple(OPEN)))
        if stack:
            s.brackets.append((i, stack[-1]))


def sentence(gen):
    """One sentence drawn from the grammar (a Sentence)."""
    r = int(torch.randint(sum(w for _, w in KINDS), (1,), generator=gen))
    for kind, w in KINDS:
        if r < w:
            break
        r -= w
    s = Sentence(kind)
    if kind == "brackets":
        _brackets(gen, s)
    elif kind in ("pronoun", "because"):
        woman, man = _pick(gen, WOMEN), _pick(gen, MEN)
        first, second = (woman, man) if _coin(gen) else (man, woman)
        s.words += [first, "thanked", second, "because"]
        if kind == "pronoun":
            she = _coin(gen)
            person = woman if she else man
            ref = s.words.index(person)
            s.pronoun = (4, ref, 2 - ref)
            s.words += ["she" if she else "he", HABIT[person]]
            _noun_phrase(gen, s)
        else:
            _clause(gen, s, _pick(gen, ("simple", "object_rel", "subject_rel")))
    else:
        _clause(gen, s, kind)
    assert len(s.words) <= MAX_LEN, s.words
    return s


def encode(words):
    return [ID[w] for w in words]


def tensors(sents):
    """Sentences as a training batch: ids (n, MAX_LEN) padded with 0, and the next words
    (n, MAX_LEN) with -100 where nothing is predicted (the last word and the padding)."""
    x = torch.zeros(len(sents), MAX_LEN, dtype=torch.long)
    y = torch.full((len(sents), MAX_LEN), -100, dtype=torch.long)
    for b, s in enumerate(sents):
        ids = torch.tensor(encode(s.words))
        x[b, :len(ids)] = ids
        y[b, :len(ids) - 1] = ids[1:]
    return x, y
