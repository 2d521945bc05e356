// lesson.c — read a lesson file, validate it with JSON-path errors, and build
// the attention config, weights and inputs. The only file that includes cJSON.
//
// Every check names the file, the JSON path and what was expected, in one
// line: "lessons/x.json: model.n_heads: 3 does not divide d_model 4".
#include "lesson.h"

#include "attn_json.h"
#include "attn_names.h"
#include "bpe.h"
#include "jsonpath.h"
#include "model_keys.h"

_Static_assert(LESSON_MAX_BATCH <= TRACE_MAX_BATCH, "a trace keeps statistics for every batch a lesson may have");
#include "trace.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdint.h>
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// --- text: "string" or {"en": ..., "zh": ...} ---------------------------------

// Titles and tokens are one line: no control characters. Narration may hold
// line breaks and tabs.
// C0, DEL and C1 (U+0080-U+009F, e.g. U+0085 NEL, U+009B CSI) are control characters.
static bool no_controls(JsonCtx *c, const char *s, const char *p, bool allow_newline)
{
    size_t n = strlen(s);
    uint32_t cp;
    for (size_t i = 0, k; i < n; i += k) {
        k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) return jsonpath_fail(c, p, "invalid UTF-8 in the text; expected UTF-8 text");
        if ((cp < 0x20 && !(allow_newline && (cp == '\n' || cp == '\t'))) || (cp >= 0x7f && cp <= 0x9f))
            return jsonpath_fail(c, p, "control character U+%04X in the text; expected printable text",
                        (unsigned)cp);
    }
    return true;
}

static bool text_check(JsonCtx *c, const cJSON *j, const char *p, bool multiline)
{
    if (!cJSON_IsString(j)) return jsonpath_fail(c, p, "expected a string, got %s", jsonpath_type(j));
    if (strlen(j->valuestring) > LESSON_MAX_TEXT)
        return jsonpath_fail(c, p, "text longer than %d bytes", LESSON_MAX_TEXT);
    return no_controls(c, j->valuestring, p, multiline);
}

bool lesson_read_text(JsonCtx *c, const cJSON *j, const char *path, bool multiline, char *out[LANG_COUNT])
{
    out[LANG_EN] = out[LANG_ZH] = NULL;
    if (cJSON_IsString(j)) {
        if (!text_check(c, j, path, multiline)) return false;
        out[LANG_EN] = strdup(j->valuestring);
        return out[LANG_EN] || jsonpath_fail(c, path, "out of memory");
    }
    if (!cJSON_IsObject(j))
        return jsonpath_fail(c, path, "expected a string or {\"en\": ..., \"zh\": ...}, got %s",
                    jsonpath_type(j));
    static const char *const keys[] = {"en", "zh", NULL};
    if (!jsonpath_check_keys(c, j, path, keys)) return false;
    char p[JSONPATH_MAX];
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(j, "en");
    const cJSON *zh = cJSON_GetObjectItemCaseSensitive(j, "zh");
    jsonpath_key(p, path, "en");
    if (!en) return jsonpath_fail(c, p, "missing; expected the English text");
    if (!text_check(c, en, p, multiline)) return false;
    if (zh) {
        jsonpath_key(p, path, "zh");
        if (!text_check(c, zh, p, multiline)) return false;
    }
    out[LANG_EN] = strdup(en->valuestring);
    out[LANG_ZH] = zh ? strdup(zh->valuestring) : NULL;
    if (!out[LANG_EN] || (zh && !out[LANG_ZH])) return jsonpath_fail(c, path, "out of memory");
    return true;
}

// --- weights: stages.h's slots ---------------------------------------------------

_Static_assert(WEIGHT_COUNT == LESSON_N_WEIGHTS, "lesson.h names every weight slot");

const char *lesson_weight_name(int i)
{
    return i >= 0 && i < WEIGHT_COUNT ? WEIGHT_INFO[i].name : NULL;
}

Tensor *lesson_weight(AttnWeights *w, int i) { return attn_weight(w, i); }

// --- tokens and steps ------------------------------------------------------------

static void free_strings(char **s, int n)
{
    if (!s) return;
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

static bool token_list(JsonCtx *c, const cJSON *j, const char *p, int n, char ***out)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n)
        return jsonpath_fail(c, p, "expected an array of %d strings (one per position), got %s", n,
                    cJSON_IsArray(j) ? "a different count" : jsonpath_type(j));
    *out = calloc((size_t)n, sizeof(char *));
    if (!*out) return jsonpath_fail(c, p, "out of memory");
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char q[JSONPATH_MAX];
        jsonpath_index(q, p, i);
        if (!cJSON_IsString(e)) return jsonpath_fail(c, q, "expected a string, got %s", jsonpath_type(e));
        if (strlen(e->valuestring) > 64) return jsonpath_fail(c, q, "token longer than 64 bytes");
        if (!no_controls(c, e->valuestring, q, false)) return false;
        if (!((*out)[i] = strdup(e->valuestring))) return jsonpath_fail(c, q, "out of memory");
    }
    return true;
}

static bool parse_tokens(JsonCtx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (cJSON_IsArray(j)) {   // one list for both sides (self-attention)
        if (!token_list(c, j, "tokens", ls->len_q, &ls->q_tokens)) return false;
        if (ls->len_k != ls->len_q)
            return jsonpath_fail(c, "tokens", "query and key lengths differ; give {\"query\": [...], \"key\": [...]}");
        return token_list(c, j, "tokens", ls->len_k, &ls->k_tokens);
    }
    if (!cJSON_IsObject(j))
        return jsonpath_fail(c, "tokens", "expected an array of strings or {\"query\": [...], \"key\": [...]}, got %s",
                    jsonpath_type(j));
    static const char *const keys[] = {"query", "key", NULL};
    if (!jsonpath_check_keys(c, j, "tokens", keys)) return false;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "query");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "key");
    if (q && !token_list(c, q, "tokens.query", ls->len_q, &ls->q_tokens)) return false;
    if (!k && q && ls->in.key_is_query) k = q;
    if (k && !token_list(c, k, q == k ? "tokens.query" : "tokens.key", ls->len_k, &ls->k_tokens))
        return false;
    return true;
}

// The keys of "steps" and "notes": every step and every stage of stages.h's tables.
static const char *const step_keys_allowed[] = {
#define STEP_KEY(id, name) name,
    STEP_TABLE(STEP_KEY)
#undef STEP_KEY
#define STAGE_KEY(id, name, kind, step, sym, w, b) name,
    STAGE_TABLE(STAGE_KEY)
#undef STAGE_KEY
    NULL};

#define N_STEP_KEYS (sizeof step_keys_allowed / sizeof *step_keys_allowed - 1)

// The keys of "steps" and "notes" in a lesson of n_layers: the table's, and with several
// layers each of them for one layer, "l{l}.name" (into keys, NULL-terminated; names
// hold the strings). False when out of memory.
static const char **layer_keys(int n_layers, char (**names)[STAGE_NAME_MAX])
{
    size_t n = N_STEP_KEYS * (size_t)(n_layers > 1 ? n_layers + 1 : 1);
    const char **keys = calloc(n + 1, sizeof *keys);
    *names = n_layers > 1 ? calloc(N_STEP_KEYS * (size_t)n_layers, sizeof **names) : NULL;
    if (!keys || (n_layers > 1 && !*names)) return free(keys), free(*names), NULL;
    size_t k = 0;
    for (size_t i = 0; i < N_STEP_KEYS; i++) keys[k++] = step_keys_allowed[i];
    for (int l = 0; n_layers > 1 && l < n_layers; l++)
        for (size_t i = 0; i < N_STEP_KEYS; i++) {
            char *nm = (*names)[(size_t)l * N_STEP_KEYS + i];
            snprintf(nm, STAGE_NAME_MAX, "l%d.%s", l, step_keys_allowed[i]);
            keys[k++] = nm;
        }
    return keys;
}

// "steps" (narration) and "notes" (the teacher's notes): an object from a step or
// stage name (with several layers, also one layer's: "l1.attn", "l1.softmax") to a
// text, into *n, *keys and text[lang] (arrays of *n + 1).
// A step's "head": the head its narration is about, the one the stage opens on (0 ≤ head <
// n_heads), into *head; the object without it into *text_obj (a copy the caller deletes).
static bool step_head(JsonCtx *c, const cJSON *e, const char *p, int n_heads, int *head, cJSON **text_obj)
{
    *head = -1, *text_obj = NULL;
    const cJSON *h = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "head") : NULL;
    if (!h) return true;
    char ph[JSONPATH_MAX];
    jsonpath_key(ph, p, "head");
    // (the range first: a double outside int's range is not cast)
    if (!cJSON_IsNumber(h) || !(h->valuedouble >= 0 && h->valuedouble < n_heads) ||
        h->valuedouble != (double)(int)h->valuedouble)
        return cJSON_IsNumber(h) ? jsonpath_fail(c, ph, "expected the head the narration is about, a whole number from 0 to %d "
                                                       "(model.n_heads %d), got %g", n_heads - 1, n_heads, h->valuedouble)
                                 : jsonpath_fail(c, ph, "expected the head the narration is about, a whole number from 0 to %d, "
                                                       "got %s", n_heads - 1, jsonpath_type(h));
    *head = (int)h->valuedouble;
    *text_obj = cJSON_Duplicate(e, 1);
    if (!*text_obj) return jsonpath_fail(c, p, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(*text_obj, "head");
    return true;
}

// n_heads > 0 ("steps"): a text may be {"en": …, "zh": …, "head": H} (step_head), into
// (*heads_out)[i] (-1: none).
static bool parse_texts(JsonCtx *c, const cJSON *j, const char *name, const char *what, int n_layers, int n_heads,
                        int *n_out, char ***keys_out, char **text_out[LANG_COUNT], int **heads_out)
{
    if (!j) return true;
    if (!cJSON_IsObject(j))
        return jsonpath_fail(c, name, "expected an object mapping a stage name to its %s, got %s", what,
                    jsonpath_type(j));
    for (const cJSON *e = j->child; e; e = e->next) { // "l7.attn": a layer the model has?
        int layer, used = 0;
        if (sscanf(e->string, "l%d.%n", &layer, &used) == 1 && used > 0 && (layer < 0 || layer >= (n_layers > 1 ? n_layers : 0))) {
            char p[JSONPATH_MAX];
            jsonpath_key(p, name, e->string);
            return n_layers > 1 ? jsonpath_fail(c, p, "layer %d is past model.n_layers %d; expected l0. to l%d. before a step or stage name",
                                                layer, n_layers, n_layers - 1)
                                : jsonpath_fail(c, p, "the lesson has one layer (no model.n_layers); expected a step or stage name without l%d.", layer);
        }
    }
    char (*names)[STAGE_NAME_MAX] = NULL;
    const char **allowed = layer_keys(n_layers, &names);
    if (!allowed) return jsonpath_fail(c, name, "out of memory");
    bool known = jsonpath_check_keys(c, j, name, allowed);
    free(allowed);
    free(names);
    if (!known) return false;
    int n = cJSON_GetArraySize(j);
    *keys_out = calloc((size_t)n + 1, sizeof(char *));
    for (int l = 0; l < LANG_COUNT; l++) text_out[l] = calloc((size_t)n + 1, sizeof(char *));
    if (heads_out) *heads_out = calloc((size_t)n + 1, sizeof(int));
    if (!*keys_out || !text_out[LANG_EN] || !text_out[LANG_ZH] || (heads_out && !*heads_out))
        return jsonpath_fail(c, name, "out of memory");
    for (const cJSON *e = j->child; e; e = e->next) {
        char p[JSONPATH_MAX];
        jsonpath_key(p, name, e->string);
        char *text[LANG_COUNT];
        int head = -1;
        cJSON *plain = NULL;
        if (heads_out && !step_head(c, e, p, n_heads, &head, &plain)) return false;
        bool got = lesson_read_text(c, plain ? plain : e, p, true, text);
        cJSON_Delete(plain);
        if (!got) return false;
        if (heads_out) (*heads_out)[*n_out] = head;
        int i = (*n_out)++;
        (*keys_out)[i] = strdup(e->string);
        text_out[LANG_EN][i] = text[LANG_EN];
        text_out[LANG_ZH][i] = text[LANG_ZH];
        if (!(*keys_out)[i]) return jsonpath_fail(c, p, "out of memory");
    }
    return true;
}

// --- a language model's vocabulary -------------------------------------------------

// "vocab": distinct non-empty token strings, and "tokenizer": "char" (the default), "word"
// or "bpe" (with its "merges": bpe.h).
static bool parse_vocab(JsonCtx *c, const cJSON *root, Lesson *ls)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "vocab"), *t = cJSON_GetObjectItemCaseSensitive(root, "tokenizer");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "merges");
    if (!v) return t ? jsonpath_fail(c, "tokenizer", "splits text into a vocabulary's tokens; expected a \"vocab\" with it") : true;
    const int V = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (V < 1 || V > LESSON_MAX_VOCAB)
        return jsonpath_fail(c, "vocab", "expected an array of 1 to %d token strings, got %s", LESSON_MAX_VOCAB,
                             cJSON_IsArray(v) ? "an empty or longer one" : jsonpath_type(v));
    bool bpe = false;
    if (t) {
        if (cJSON_IsString(t) && strcmp(t->valuestring, "word") == 0) ls->word_tokens = true;
        else if (cJSON_IsString(t) && strcmp(t->valuestring, "bpe") == 0) bpe = true;
        else if (!cJSON_IsString(t) || strcmp(t->valuestring, "char") != 0)
            return jsonpath_fail(c, "tokenizer", "expected \"char\" (a character a token), \"word\" (split at spaces) or "
                                                 "\"bpe\" (byte-pair encoding with \"merges\")");
    }
    if (m && !bpe) return jsonpath_fail(c, "merges", "are byte-pair encoding's; expected \"tokenizer\": \"bpe\" with them");
    ls->n_vocab = V; // (before: what token_list allocated is freed on an error)
    if (!token_list(c, v, "vocab", V, &ls->vocab)) return false;
    for (int i = 0; i < V; i++) {
        char p[JSONPATH_MAX];
        jsonpath_index(p, "vocab", i);
        // (an entry of several characters is fine: input.ids may name it; the char tokenizer never makes it)
        if (!ls->vocab[i][0]) return jsonpath_fail(c, p, "empty; expected a token");
        if (ls->word_tokens && strchr(ls->vocab[i], ' '))
            return jsonpath_fail(c, p, "\"%s\" has a space; the word tokenizer splits there", ls->vocab[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(ls->vocab[j], ls->vocab[i]) == 0)
                return jsonpath_fail(c, p, "\"%s\" again (vocab[%d]); expected distinct tokens", ls->vocab[i], j);
    }
    return !bpe || (ls->bpe = bpe_read(c, m, ls->vocab, V)) != NULL;
}

const char *lesson_vocab_label(const Lesson *ls, int id)
{
    if (ls->classes) return id >= 0 && id < ls->cfg.n_classes ? ls->classes[id] : NULL; // a vision transformer's
    if (!ls->vocab || id < 0 || id >= ls->n_vocab) return NULL;
    return ls->bpe ? ls->bpe->label[id] : ls->vocab[id];
}

const char *lesson_token_label(const Lesson *ls, int b, int l)
{
    if (l < 0 || l >= ls->len_q) return NULL; // panel_axis_label's key axis is len_k long, not len_q
    if (ls->vocab && tensor_present(&ls->in.ids)) {
        if (b < 0 || b >= ls->batch) b = 0; // a View's batch: clamped as render.c clamps it (lessons differ in batches)
        return lesson_vocab_label(ls, (int)ls->in.ids.data[(size_t)b * ls->len_q + l]);
    }
    return ls->q_tokens ? ls->q_tokens[l] : NULL;
}

// --- another text for a language model -----------------------------------------------

// ls's input replaced by `in` (a language model's input object: its text or ids) for
// `batch` rows: the mask of the new length (the kinds that say how, not which cells), the
// context checked, the author's questions and targets (about the file's input) left out.
static bool reinput(Lesson *ls, cJSON *in, int batch, JsonCtx *c)
{
    if (!ls->vocab)
        return cJSON_Delete(in), jsonpath_fail(c, NULL, "%s is not a language model (it has no \"vocab\"); expected a "
                                               "lesson that reads text", ls->path ? ls->path : "the lesson");
    cJSON *mask = NULL;
    switch (ls->in.mask_kind) {
    case MASK_NONE: break;
    case MASK_CAUSAL:
        mask = ls->in.causal_bottom_right ? cJSON_CreateObject() : cJSON_CreateString("causal");
        if (mask && ls->in.causal_bottom_right)
            cJSON_AddStringToObject(mask, "causal", attn_names_name(&ATTN_NAMES_CAUSAL, CAUSAL_BOTTOM_RIGHT));
        break;
    case MASK_SLIDING:
        mask = cJSON_CreateObject();
        if (mask) cJSON_AddNumberToObject(mask, "sliding_window", ls->in.window);
        if (mask && ls->in.sink_tokens > 0) cJSON_AddNumberToObject(mask, "sink_tokens", ls->in.sink_tokens);
        break;
    default:
        cJSON_Delete(in);
        return jsonpath_fail(c, NULL, "the lesson's mask names cells of its own input (a 0/1 tensor or key padding); "
                                      "expected a causal, sliding-window or no mask to type another text");
    }
    const char *P = cJSON_GetObjectItemCaseSensitive(in, "ids") ? "input.ids" : "input.text";
    AttnInputs ai = {0};
    bool ok = in && (ls->in.mask_kind == MASK_NONE || mask);
    if (!ok) jsonpath_fail(c, NULL, "out of memory");
    ok = ok && attn_json_lm_input(c, in, &ls->cfg, ls->vocab, ls->word_tokens, ls->bpe, &ai);
    const int L = ok ? ai.ids.shape[1] : 0;
    if (ok && ls->cfg.positions == POS_LEARNED && L > ls->cfg.max_positions)
        ok = jsonpath_fail(c, P, "%d tokens, longer than the model's context (model.max_positions %d)", L,
                           ls->cfg.max_positions);
    ok = ok && attn_json_mask(c, mask, batch, L, L, &ai);
    cJSON_Delete(in), cJSON_Delete(mask);
    if (ok) { // the sizes of the forward pass this input would run
        Lesson probe = *ls;
        probe.batch = batch, probe.len_q = probe.len_k = L;
        ok = lesson_check_size(&probe, c->file, P, c->err, c->err_len);
    }
    if (!ok) {
        attn_inputs_free(&ai);
        return false;
    }
    attn_inputs_free(&ls->in);
    ai.window = ls->in.window, ai.sink_tokens = ls->in.sink_tokens, ai.causal_bottom_right = ls->in.causal_bottom_right;
    ls->in = ai;
    ls->batch = batch, ls->len_q = ls->len_k = L;
    ls->typed = true;
    free(ls->targets); // (about the file's input)
    ls->targets = NULL;
    for (int i = 0; i < ls->n_quiz; i++) { // (about the file's input)
        LessonQuiz *q = &ls->quiz[i];
        free(q->id), free(q->stage);
        for (int l = 0; l < LANG_COUNT; l++) free(q->question[l]), free(q->explanation[l]);
    }
    free(ls->quiz);
    ls->quiz = NULL, ls->n_quiz = 0;
    return true;
}

bool lesson_retext(Lesson *ls, const char *text, char *err, size_t err_len)
{
    JsonCtx ctx = {"--text", err, err_len, false, false};
    if (err_len) err[0] = '\0';
    cJSON *in = cJSON_CreateObject();
    if (in && !cJSON_AddStringToObject(in, "text", text)) cJSON_Delete(in), in = NULL;
    return reinput(ls, in, 1, &ctx);
}

bool lesson_append(Lesson *ls, const int *next, char *err, size_t err_len)
{
    JsonCtx ctx = {"generate", err, err_len, false, false};
    if (err_len) err[0] = '\0';
    const int B = ls->batch, L = ls->len_q;
    cJSON *in = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(in, "ids");
    for (int b = 0; rows && b < B; b++) {
        cJSON *row = cJSON_CreateArray();
        for (int l = 0; row && l <= L; l++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber(l < L ? ls->in.ids.data[(size_t)b * L + l] : next[b]));
        cJSON_AddItemToArray(rows, row);
    }
    return reinput(ls, in, B, &ctx);
}

// --- the file as a whole ---------------------------------------------------------

void lesson_free(Lesson *ls)
{
    free(ls->path);
    for (int l = 0; l < LANG_COUNT; l++) free(ls->title[l]), free(ls->description[l]);
    for (int l = 0; l < LESSON_MAX_LAYERS; l++) attn_weights_free(&ls->w[l]);
    attn_inputs_free(&ls->in);
    free_strings(ls->q_tokens, ls->len_q);
    free_strings(ls->k_tokens, ls->len_k);
    free_strings(ls->vocab, ls->n_vocab);
    free_strings(ls->classes, ls->cfg.n_classes);
    bpe_destroy(ls->bpe);
    free(ls->targets);
    lesson_free_checkpoints(ls);
    free_strings(ls->step_keys, ls->n_steps);
    free(ls->step_head);
    for (int l = 0; l < LANG_COUNT; l++) free_strings(ls->step_text[l], ls->n_steps);
    for (int i = 0; i < ls->n_quiz; i++) {
        LessonQuiz *q = &ls->quiz[i];
        free(q->id), free(q->stage);
        for (int l = 0; l < LANG_COUNT; l++) free(q->question[l]), free(q->explanation[l]);
    }
    free(ls->quiz);
    free_strings(ls->note_keys, ls->n_notes);
    for (int l = 0; l < LANG_COUNT; l++) free_strings(ls->note_text[l], ls->n_notes);
    memset(ls, 0, sizeof *ls);
}

// lesson_parse, with o's text and checkpoint instead of the file's (o NULL: none).
static bool parse_with(Lesson *ls, const char *name, const char *text, size_t len, const LessonOverride *o, char *err,
                       size_t err_len);

bool lesson_parse(Lesson *ls, const char *name, const char *text, size_t len, char *err, size_t err_len)
{
    return parse_with(ls, name, text, len, NULL, err, err_len);
}

bool lesson_parse_with(Lesson *ls, const char *name, const char *text, size_t len, const LessonOverride *o, char *err,
                       size_t err_len)
{
    return parse_with(ls, name, text, len, o, err, err_len);
}

// The model's variants that need one sequence attending to itself (self-attention).
static bool check_self_attention(JsonCtx *c, const Lesson *ls)
{
    if (ls->cfg.decoder_layers > 0) // an encoder–decoder: the source and the target (model_keys_check_input)
        return true;
    if (ls->cfg.decode && !(ls->in.key_is_query && ls->in.value_is_key))
        return jsonpath_fail(c, "model.decode", "generating token by token needs self-attention; expected no separate input.key or input.value");
    if (ls->cfg.n_layers > 1 && !(ls->in.key_is_query && ls->in.value_is_key))
        return jsonpath_fail(c, "model.n_layers", "%d: each layer attends over the one before's output; expected self-attention "
                                           "(no separate input.key or input.value)", ls->cfg.n_layers);
    if (ls->cfg.norm_first && !(ls->in.key_is_query && ls->in.value_is_key))
        return jsonpath_fail(c, "model.norm_first", "a pre-norm block normalises the one input that attends to itself; expected "
                                             "self-attention (no separate input.key or input.value)");
    if ((ls->cfg.rope != ROPE_NONE || ls->cfg.alibi) && !ls->in.key_is_query)
        return jsonpath_fail(c, ls->cfg.rope != ROPE_NONE ? "model.rope" : "model.alibi",
             "positions 0..L-1 are those of one sequence; expected self-attention (no separate input.key)");
    return true;
}

// The file's text as JSON into *out (false with the error in c): the checks a text needs
// before cJSON reads it (size, NUL, UTF-8, nesting, the count of values, JSON's number
// grammar), then cJSON, then nothing after the value.
static bool parse_json(JsonCtx *c, const char *text, size_t len, cJSON **out)
{
    int line, col;
    if (len > LESSON_MAX_FILE_BYTES)
        return jsonpath_fail(c, NULL, "file is larger than %u MiB, the limit for a lesson",
                    LESSON_MAX_FILE_BYTES >> 20);
    if (len == 0 || jsonpath_only_space(text, len))
        return jsonpath_fail(c, NULL, "empty file; expected a JSON object");
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        jsonpath_line_col(text, (size_t)(nul - text), &line, &col);
        return jsonpath_fail(c, NULL, "%d:%d: NUL byte; expected UTF-8 JSON text", line, col);
    }
    size_t bad = utf8_invalid_at((const unsigned char *)text, len);
    if (bad < len) {
        jsonpath_line_col(text, bad, &line, &col);
        return jsonpath_fail(c, NULL, "%d:%d: invalid UTF-8; expected UTF-8 JSON text", line, col);
    }
    for (const char *u = text; (u = memchr(u, '\\', (size_t)(text + len - u))) != NULL;) {
        size_t run = 0;   // a backslash run of odd length escapes what follows
        while (u + run < text + len && u[run] == '\\') run++;
        if (run % 2 == 1 && u + run + 5 <= text + len && u[run] == 'u' &&
            strncmp(u + run + 1, "0000", 4) == 0) {
            jsonpath_line_col(text, (size_t)(u + run - 1 - text), &line, &col);
            return jsonpath_fail(c, NULL, "%d:%d: \\u0000 (NUL) in a string; expected text without NUL", line, col);
        }
        u += run;
    }
    JsonScan scan = jsonpath_scan(text, len, LESSON_MAX_NESTING);
    c->halfway_down = scan.halfway_down, c->halfway_up = scan.halfway_up;
    bool early = scan.early;
    if (scan.deep_at < len) {
        jsonpath_line_col(text, scan.deep_at, &line, &col);
        return jsonpath_fail(c, NULL, "%d:%d: nested more than %d levels deep; expected a lesson object",
                    line, col, LESSON_MAX_NESTING);
    }
    // cJSON costs about 64 + 16 bytes a value: counting first bounds what a file
    // can cost (16 MiB of "0," would otherwise take 680 MB to reject)
    if (scan.values > LESSON_MAX_VALUES)
        return jsonpath_fail(c, NULL, "more than %u JSON values (numbers, strings, arrays, ...); expected at most "
                             "%u (large regular tensors can use \"arange\" or weights.init)",
                    LESSON_MAX_VALUES, LESSON_MAX_VALUES);
    if (scan.bad_number < len) {
        size_t run = scan.bad_len;
        jsonpath_line_col(text, scan.bad_number, &line, &col);
        return jsonpath_fail(c, NULL, "%d:%d: invalid number \"%.*s\"; expected a JSON number (no leading zeros, "
                             "digits on both sides of the point)",
                    line, col, (int)run, text + scan.bad_number);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        const char *ep = cJSON_GetErrorPtr();
        if (!end && ep && ep >= text && ep <= text + len) off = (size_t)(ep - text);
        jsonpath_line_col(text, early ? len : off, &line, &col);
        return jsonpath_fail(c, NULL, "%d:%d: JSON syntax error%s; expected valid JSON", line, col,
                    early ? " (file ends too early)" : "");
    }
    // trailing garbage after the value
    for (const char *p = end; p && p < text + len; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            jsonpath_line_col(text, (size_t)(p - text), &line, &col);
            cJSON_Delete(root);
            return jsonpath_fail(c, NULL, "%d:%d: unexpected text after the JSON value", line, col);
        }
    }
    *out = root;
    return true;
}

static bool parse_with(Lesson *ls, const char *name, const char *text, size_t len, const LessonOverride *o, char *err,
                       size_t err_len)
{
    const char *typed = o ? o->text : NULL;
    memset(ls, 0, sizeof *ls);
    JsonCtx ctx = {name, err, err_len, false, false}, *c = &ctx;
    if (err_len) err[0] = '\0';
    cJSON *root = NULL;
    if (!parse_json(c, text, len, &root)) return false;
    bool ok = false;
    if (!cJSON_IsObject(root)) {
        jsonpath_fail(c, NULL, "expected a JSON object at the top level, got %s", jsonpath_type(root));
        goto done;
    }
    static const char *const keys[] = {"title", "description", "vocab", "tokenizer", "model", "input", "mask",
                                       "weights", "checkpoints", "tokens", "steps", "notes", "quiz", "targets",
                                       "task", "merges", "image", NULL};
    if (!jsonpath_check_keys(c, root, "", keys)) goto done;
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
    if (!title) {
        jsonpath_fail(c, "title", "missing; expected a string or {\"en\": ..., \"zh\": ...}");
        goto done;
    }
    if (!lesson_read_text(c, title, "title", false, ls->title)) goto done;
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (desc) {
        if (!lesson_read_text(c, desc, "description", true, ls->description)) goto done;
    }
    if (!parse_vocab(c, root, ls)) goto done;
    ls->cfg.vocab_size = ls->n_vocab;
    if (!lesson_read_image(c, root, ls)) goto done; // (lesson_image.c)
    if (!model_keys_read(c, cJSON_GetObjectItemCaseSensitive(root, "model"), &ls->cfg)) goto done;
    if (typed && !ls->vocab) { // (a vision transformer's images are picked by batch, not typed)
        c->file = "--text";
        jsonpath_fail(c, NULL, "%s is not a language model (it has no \"vocab\"); expected a lesson that reads text", name);
        goto done;
    }
    if (ls->vocab && typed) { // the text typed instead of the file's input (its errors: the argument's)
        cJSON *in = cJSON_CreateObject();
        if (!in || !cJSON_AddStringToObject(in, "text", typed)) {
            cJSON_Delete(in);
            jsonpath_fail(c, NULL, "out of memory");
            goto done;
        }
        c->file = "--text";
        bool ok_in = attn_json_lm_input(c, in, &ls->cfg, ls->vocab, ls->word_tokens, ls->bpe, &ls->in);
        c->file = name;
        cJSON_Delete(in);
        if (!ok_in) goto done;
        ls->typed = true;
    } else if (ls->vocab) { // a language model: text or token ids in
        if (!attn_json_lm_input(c, cJSON_GetObjectItemCaseSensitive(root, "input"), &ls->cfg, ls->vocab, ls->word_tokens,
                                ls->bpe, &ls->in))
            goto done;
    }
    if (ls->vocab) {
        ls->batch = ls->in.ids.shape[0];
        ls->len_q = ls->len_k = ls->in.ids.shape[1];
        if (ls->cfg.positions == POS_LEARNED && ls->cfg.max_positions == 0) ls->cfg.max_positions = ls->len_q;
        if (ls->cfg.positions == POS_LEARNED && ls->len_q > ls->cfg.max_positions) {
            jsonpath_fail(c, "input", "%d tokens, longer than the model's context (model.max_positions %d)", ls->len_q,
                          ls->cfg.max_positions);
            goto done;
        }
        if (cJSON_GetObjectItemCaseSensitive(root, "tokens")) {
            jsonpath_fail(c, "tokens", "a language model's labels are its tokens (the vocab's); expected no \"tokens\"");
            goto done;
        }
    } else if (ls->cfg.n_classes > 0) { // a vision transformer: images in
        if (cJSON_GetObjectItemCaseSensitive(root, "tokens")) {
            jsonpath_fail(c, "tokens", "a vision transformer's labels are CLS and its patches' numbers; expected no "
                                       "\"tokens\"");
            goto done;
        }
        if (cJSON_GetObjectItemCaseSensitive(root, "mask")) {
            jsonpath_fail(c, "mask", "a vision transformer's tokens all see each other; expected no \"mask\"");
            goto done;
        }
        if (!lesson_read_image_input(c, cJSON_GetObjectItemCaseSensitive(root, "input"), ls)) goto done;
    } else {
        if (!attn_json_input(c, cJSON_GetObjectItemCaseSensitive(root, "input"), &ls->cfg, &ls->in)) goto done;
        ls->batch = ls->in.query.shape[0];
        ls->len_q = ls->in.query.shape[1];
        ls->len_k = ls->in.key.shape[1];
    }
    if (!check_self_attention(c, ls)) goto done;
    if (!lesson_check_size(ls, typed ? "--text" : c->file, typed ? "input.text" : "input", c->err, c->err_len)) goto done;
    {   // the weights' budget, before any is read or generated
        const cJSON *cks = cJSON_GetObjectItemCaseSensitive(root, "checkpoints");
        const int K = cJSON_IsArray(cks) ? cJSON_GetArraySize(cks) : 0;
        if (!lesson_check_weights(&ls->cfg, K > LESSON_MAX_CHECKPOINTS ? 0 : K,
                                  cJSON_GetObjectItemCaseSensitive(root, "weights") != NULL, c->file, c->err, c->err_len))
            goto done;
    }
    if (!attn_json_mask(c, cJSON_GetObjectItemCaseSensitive(root, "mask"), ls->batch, ls->len_q,
                    ls->len_k, &ls->in))
        goto done;
    if (ls->cfg.decode && ls->in.mask_kind != MASK_CAUSAL && ls->in.mask_kind != MASK_SLIDING) {
        jsonpath_fail(c, "model.decode", "a token is generated before the ones after it exist; expected mask \"causal\" or "
                                "{\"sliding_window\": W}");
        goto done;
    }
    if (ls->cfg.n_layer_types > 0 && !(ls->in.mask_kind == MASK_CAUSAL && !ls->in.causal_bottom_right)) {
        jsonpath_fail(c, "model.layer_types", "sliding, full and linear layers narrow the causal mask, keep it or are causal by their recurrence; expected mask "
                                   "\"causal\"");
        goto done;
    }
    if (!model_keys_check_input(c, &ls->cfg, &ls->in, ls->len_k)) goto done; // (DeepSeek's)
    if (!lesson_read_checkpoints(c, root, o, ls)) goto done;
    if (!lesson_read_targets(c, cJSON_GetObjectItemCaseSensitive(root, "targets"), ls)) goto done;
    if (!lesson_read_task(c, cJSON_GetObjectItemCaseSensitive(root, "task"), ls)) goto done;
    if (!parse_tokens(c, cJSON_GetObjectItemCaseSensitive(root, "tokens"), ls)) goto done;
    if (!parse_texts(c, cJSON_GetObjectItemCaseSensitive(root, "steps"), "steps", "narration", ls->cfg.n_layers, ls->cfg.n_heads,
                     &ls->n_steps, &ls->step_keys, ls->step_text, &ls->step_head))
        goto done;
    if (!parse_texts(c, cJSON_GetObjectItemCaseSensitive(root, "notes"), "notes", "teacher's notes",
                     ls->cfg.n_layers, 0, &ls->n_notes, &ls->note_keys, ls->note_text, NULL))
        goto done;
    if (!lesson_read_quiz(c, cJSON_GetObjectItemCaseSensitive(root, "quiz"), ls)) goto done;
    if (typed || ls->other_weights) { // the author's questions are about the file's input and weights
        for (int i = 0; i < ls->n_quiz; i++) {
            LessonQuiz *q = &ls->quiz[i];
            free(q->id), free(q->stage);
            for (int l = 0; l < LANG_COUNT; l++) free(q->question[l]), free(q->explanation[l]);
        }
        free(ls->quiz);
        ls->quiz = NULL, ls->n_quiz = 0;
    }
    ls->path = strdup(name);
    ok = ls->path != NULL;
    if (!ok) jsonpath_fail(c, NULL, "out of memory");
done:
    cJSON_Delete(root);
    if (!ok) lesson_free(ls);
    return ok;
}

// Opens path for reading without blocking on a FIFO or a device, and only when
// it is a regular file; *size is its size. -1 with one line in err otherwise.
static int open_regular(JsonCtx *c, const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return jsonpath_fail(c, NULL, "cannot open: %s", strerror(errno)), -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        jsonpath_fail(c, NULL, "cannot read: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        jsonpath_fail(c, NULL, "not a regular file (%s); expected a lesson file",
             S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
             S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

// Reads up to max bytes of fd into a new buffer (*n of them; a file that grew
// since fstat is read up to max, one that shrank to its end).
static char *read_fd(int fd, size_t max, size_t *n)
{
    char *buf = malloc(max ? max : 1);
    if (!buf) return NULL;
    *n = 0;
    while (*n < max) {
        ssize_t got = read(fd, buf + *n, max - *n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            free(buf);
            return NULL;
        }
        if (got == 0) break;
        *n += (size_t)got;
    }
    return buf;
}

bool lesson_load_with(Lesson *ls, const char *path, const LessonOverride *o, char *err, size_t err_len)
{
    memset(ls, 0, sizeof *ls);
    JsonCtx ctx = {path, err, err_len, false, false};
    size_t size = 0, n = 0;
    int fd = open_regular(&ctx, path, &size);
    if (fd < 0) return false;
    if (size > LESSON_MAX_FILE_BYTES) {
        close(fd);
        return jsonpath_fail(&ctx, NULL, "file is larger than %u MiB, the limit for a lesson", LESSON_MAX_FILE_BYTES >> 20);
    }
    // one byte past the size: a file that grew past the limit is still told so
    errno = 0;
    char *buf = read_fd(fd, size + 1 > LESSON_MAX_FILE_BYTES + 1 ? LESSON_MAX_FILE_BYTES + 1 : size + 1, &n);
    int e = errno;
    close(fd);
    if (!buf) return jsonpath_fail(&ctx, NULL, e ? "cannot read: %s" : "out of memory%s", e ? strerror(e) : "");
    bool ok = parse_with(ls, path, buf, n, o, err, err_len);
    free(buf);
    return ok;
}

bool lesson_load(Lesson *ls, const char *path, char *err, size_t err_len)
{
    return lesson_load_with(ls, path, NULL, err, err_len);
}

// --- a title without reading the file -------------------------------------------

static size_t skip_space(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

// The end (one past) of the JSON value starting at s[i], or 0 when it does not
// end within n bytes.
static size_t value_end(const char *s, size_t i, size_t n)
{
    long depth = 0;
    bool in_str = false;
    for (size_t k = i; k < n; k++) {
        char ch = s[k];
        if (in_str) {
            if (ch == '\\') k++;
            else if (ch == '"') {
                in_str = false;
                if (depth == 0) return k + 1;
            }
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            if (++depth > LESSON_MAX_NESTING) return 0;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) return k + 1;
            if (depth < 0) return k;
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r')) {
            return k;
        }
    }
    return 0;
}

bool lesson_peek_title(const char *path, size_t max, char *title[LANG_COUNT], size_t *size, char *err,
                       size_t err_len)
{
    title[LANG_EN] = title[LANG_ZH] = NULL;
    if (err_len) err[0] = '\0';
    JsonCtx ctx = {path, err, err_len, false, false};
    int fd = open_regular(&ctx, path, size);
    if (fd < 0) return false;
    size_t n = 0;
    char *text = read_fd(fd, *size < max ? *size : max, &n);
    int e = errno;
    close(fd);
    if (!text) return jsonpath_fail(&ctx, NULL, "cannot read: %s", strerror(e));
    // the top-level object's members, in order, up to "title"
    size_t i = skip_space(text, 0, n);
    bool found = false;
    if (i < n && text[i] == '{') {
        i++;
        for (;;) {
            i = skip_space(text, i, n);
            size_t key_end = i < n && text[i] == '"' ? value_end(text, i, n) : 0;
            if (!key_end) break;
            bool is_title = key_end - i == 7 && memcmp(text + i, "\"title\"", 7) == 0;
            i = skip_space(text, key_end, n);
            if (i >= n || text[i] != ':') break;
            i = skip_space(text, i + 1, n);
            size_t end = value_end(text, i, n);
            if (!end) break;
            if (is_title) {
                cJSON *j = cJSON_ParseWithLength(text + i, end - i);
                char quiet[LESSON_ERR_MAX];
                JsonCtx qc = {path, quiet, sizeof quiet, false, false};
                found = j && lesson_read_text(&qc, j, "title", false, title);
                if (!found) free(title[LANG_EN]), free(title[LANG_ZH]), title[LANG_EN] = title[LANG_ZH] = NULL;
                cJSON_Delete(j);
                break;
            }
            i = skip_space(text, end, n);
            if (i >= n || text[i] != ',') break;
            i++;
        }
    }
    free(text);
    return found;
}
