// bpe.h — byte-level byte-pair encoding (a lesson's "tokenizer": "bpe"): the text's
// bytes, split into chunks (a word with the space before it, a number, a run of
// punctuation, a run of white space), then in each chunk the merges applied in their
// order, as GPT-2's and minbpe's encoders do: the adjacent pair whose merge comes first
// is merged everywhere in the chunk, again until no pair has a merge. Every byte is a
// token of the vocabulary (the byte fallback), so any text tokenizes.
//
// The lesson's form (lessons/README.md): "vocab" holds each token's text, with a byte
// that is not a character of its own written "<0xNN>" (two upper-case hex digits; in a
// BPE vocabulary "<0xNN>" always means that byte); "merges": [["t", "h"], ["th", "e"], …]
// the pairs in the order they apply. Each merge's two parts are bytes or earlier merges'
// results, its result (their bytes joined) is a token of the vocabulary, and every token
// of several bytes is one merge's result: the merges form the vocabulary.
#ifndef ATTNVIZ_BPE_H
#define ATTNVIZ_BPE_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
typedef struct JsonCtx JsonCtx;

#define BPE_MAX_TOKEN_BYTES 64 // a token's bytes (the vocab's strings are at most 64 bytes)

typedef struct Bpe {
    int n_vocab, n_merges;
    int (*merge)[3];        // (n_merges, 3): the parts a, b and the token made, in the order they apply
    unsigned char **bytes;  // (n_vocab): each token's bytes
    int *len;               // (n_vocab): their counts
    char **label;           // (n_vocab): each token as drawn (bpe_label)
    int byte_token[256];    // the token of each byte
    int *pair_rank;         // open addressing: (a, b) → its merge's index, size pair_slots
    int pair_slots;
} Bpe;

// The merges of "merges" (m) over vocab (V strings, the lesson's "vocab") into a new Bpe;
// NULL with the error (its JSON path: merges[i], vocab[i] or vocab) in c.
Bpe *bpe_read(JsonCtx *c, const struct cJSON *m, char *const *vocab, int V);
// A copy of b (NULL: out of memory).
Bpe *bpe_copy(const Bpe *b, char *const *vocab);
void bpe_destroy(Bpe *b);

// s (a NUL-terminated string of any bytes) into token ids (ids may be NULL), at most max;
// returns how many, -2 past max, -3 out of memory. Never refuses a byte.
int bpe_encode(const Bpe *b, const char *s, int *ids, int max);
// The bytes of ids[0 .. n − 1] joined into out (cap bytes, NUL-terminated, cut at cap);
// returns the length written.
size_t bpe_decode(const Bpe *b, const int *ids, int n, char *out, size_t cap);

// The merge pairs as the lesson writes them: merges[i]'s parts' vocab strings.
int bpe_merge_part(const Bpe *b, int i, int side);

#endif
