// typed.c — a typed text's problem in plain words (see typed.h).
#include "typed.h"

#include <stdio.h>
#include <stdlib.h>

#include "attn_json.h"
#include "i18n.h"

#define TYPED_MAX_SHOWN 60 // tokens of the vocabulary listed (a word vocabulary: its first)

bool typed_text_problem(const Lesson *ls, const char *text, Lang lang, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (!ls->vocab) return false;
    const bool words = ls->word_tokens;
    AttnTokenError e;
    int count = attn_tokenize(text, ls->vocab, ls->n_vocab, words, ls->bpe, NULL, LESSON_MAX_LEN, &e);
    if (count == -3) return false; // (out of memory: session_retext says so)
    const int most = ls->cfg.positions == POS_LEARNED && ls->cfg.max_positions ? ls->cfg.max_positions : LESSON_MAX_LEN;
    if (count == -1) {
        char pos[16], tok[48], known[600];
        snprintf(pos, sizeof pos, "%d", e.index + 1);
        snprintf(tok, sizeof tok, "%.*s", (int)(e.len > 40 ? 40 : e.len), text + e.at);
        size_t k = attn_vocab_list(ls->vocab, ls->n_vocab, i18n_get(lang, "text.space"), TYPED_MAX_SHOWN, known,
                                   sizeof known);
        if (ls->n_vocab > TYPED_MAX_SHOWN) { // "… and 140 more"
            char rest[16];
            snprintf(rest, sizeof rest, "%d", ls->n_vocab - TYPED_MAX_SHOWN);
            const char *a[] = {rest};
            if (k + 1 < sizeof known) known[k++] = ' ';
            i18n_fmt(known + k, sizeof known - k, lang, "text.more", 1, a);
        }
        const char *args[] = {pos, tok, known};
        i18n_fmt(out, n, lang, words ? "text.word_unknown" : "text.char_unknown", 3, args);
        return true;
    }
    if (count == 0) {
        i18n_fmt(out, n, lang, words ? "text.empty_words" : "text.empty", 0, NULL);
        return true;
    }
    if (count == -2 || count > most) {
        char have[16], can[16];
        snprintf(have, sizeof have, "%d", count < 0 ? LESSON_MAX_LEN + 1 : count);
        snprintf(can, sizeof can, "%d", most);
        const char *args[] = {have, can};
        i18n_fmt(out, n, lang, words ? "text.too_long_words" : "text.too_long", 2, args);
        return true;
    }
    return false;
}
