// lesson_save.c — a Lesson written back as a lesson file, every number explicit
// (see lesson.h). Floats are written with 9 significant digits, which read back
// to the same float32 bit for bit.
#include "lesson.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn_names.h"
#include "bpe.h"
#include "json_out.h"
#include "model_keys.h"
#include "temp_file.h"

// A text: "…", or {"en": …, "zh": …} (with "head": H when head ≥ 0, a step's head).
static void write_text_head(FILE *f, char *const text[LANG_COUNT], int head)
{
    if (!text[LANG_ZH] && head < 0) {
        json_write_string(f, text[LANG_EN]);
        return;
    }
    fputs("{\"en\": ", f);
    json_write_string(f, text[LANG_EN]);
    if (text[LANG_ZH]) fputs(", \"zh\": ", f), json_write_string(f, text[LANG_ZH]);
    if (head >= 0) fprintf(f, ", \"head\": %d", head);
    fputc('}', f);
}

static void write_text(FILE *f, char *const text[LANG_COUNT]) { write_text_head(f, text, -1); }

// Nested arrays, the innermost on one line: [[0, 1], [2, 3]].
// "steps" or "notes": an object from a step or stage name to its text.
// heads (may be NULL): a text's "head" (-1: none), written inside its {"en", "zh"}
static void write_keyed(FILE *f, const char *name, int n, char *const *keys, char **const text[LANG_COUNT],
                        const int *heads)
{
    if (n <= 0) return;
    fprintf(f, ",\n  \"%s\": {", name);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\n    ", i ? "," : "");
        json_write_string(f, keys[i]);
        fputs(": ", f);
        char *t[LANG_COUNT] = {text[LANG_EN][i], text[LANG_ZH][i]};
        write_text_head(f, t, heads ? heads[i] : -1);
    }
    fputs("\n  }", f);
}

static void write_nested(FILE *f, const Tensor *t, int dim, size_t off, int indent)
{
    if (dim < 0 || dim >= TENSOR_MAX_RANK) return;
    size_t stride = 1;
    for (int d = dim + 1; d < t->rank && d < TENSOR_MAX_RANK; d++) stride *= (size_t)t->shape[d];
    fputc('[', f);
    for (int i = 0; i < t->shape[dim]; i++) {
        if (dim == t->rank - 1) {
            if (i) fputs(", ", f);
            json_write_float(f, t->data[off + (size_t)i]);
        } else {
            fprintf(f, "%s\n%*s", i ? "," : "", indent + 2, "");
            write_nested(f, t, dim + 1, off + (size_t)i * stride, indent + 2);
        }
    }
    if (dim < t->rank - 1) fprintf(f, "\n%*s", indent, "");
    fputc(']', f);
}

static void write_tokens(FILE *f, char *const *tok, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        json_write_string(f, tok[i]);
    }
    fputc(']', f);
}

// ",\n  \"tokenizer\": \"bpe\", \"merges\": [[\"a\", \"b\"], …]": the pairs in the order they apply.
static void write_merges(FILE *f, const Lesson *ls)
{
    fputs(",\n  \"tokenizer\": \"bpe\",\n  \"merges\": [", f);
    for (int i = 0; i < ls->bpe->n_merges; i++) {
        fputs(i ? ", [" : "[", f);
        json_write_string(f, ls->vocab[bpe_merge_part(ls->bpe, i, 0)]);
        fputs(", ", f);
        json_write_string(f, ls->vocab[bpe_merge_part(ls->bpe, i, 1)]);
        fputc(']', f);
    }
    fputc(']', f);
}

// ",\n  \"weights\": {…}": one layer's tensors as its keys; several: "layers": [{…}, …] —
// unless they are the default checkpoint's (the file had no "weights": the last one computed).
// The weights w of ls's model as a "weights" object (indent: the spaces before its closing brace).
static void write_weights_object(FILE *f, const Lesson *ls, const AttnWeights *w, int indent)
{
    const AttnConfig *c = &ls->cfg;
    const int NL = c->n_layers > 1 ? c->n_layers : 1;
    fputs(NL > 1 ? "{\"layers\": [" : "{", f);
    for (int l = 0; l < NL; l++) {
        if (NL > 1) fputs(l ? ", {" : "{", f);
        bool first = true;
        for (int i = 0; i < (NL > 1 ? WEIGHT_EMBED : LESSON_N_WEIGHTS); i++) { // (several: the model's own after)
            const Tensor *t = lesson_weight((AttnWeights *)&w[l], i);
            if (!tensor_present(t)) continue;
            if (c->index_topk == 0 && (i == WEIGHT_W_IQ || i == WEIGHT_W_IK || i == WEIGHT_W_IW)) continue; // (switched off)
            fprintf(f, "%s\n%*s\"%s\": ", first ? "" : ",", indent + (NL > 1 ? 4 : 2), "", lesson_weight_name(i));
            write_nested(f, t, 0, 0, indent + (NL > 1 ? 4 : 2));
            first = false;
        }
        if (NL > 1) fprintf(f, "\n%*s}", indent + 2, "");
    }
    if (NL > 1) {
        fputs("]", f);
        for (int i = WEIGHT_EMBED; i < LESSON_N_WEIGHTS; i++) {
            const Tensor *t = lesson_weight((AttnWeights *)&w[0], i);
            if (!tensor_present(t)) continue;
            fprintf(f, ",\n%*s\"%s\": ", indent + 2, "", lesson_weight_name(i));
            write_nested(f, t, 0, 0, indent + 2);
        }
    }
    fprintf(f, "\n%*s}", indent, "");
}

static void write_weights(FILE *f, const Lesson *ls)
{
    if (ls->n_checkpoints > 0 && ls->ckpt_weights && ls->checkpoint == ls->n_checkpoints - 1 && !ls->other_weights) return;
    fputs(",\n  \"weights\": ", f);
    write_weights_object(f, ls, ls->w, 2);
}

char *lesson_weights_json(const Lesson *ls, const AttnWeights *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    write_weights_object(f, ls, w, 4);
    const bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

// The checkpoints (when the lesson has them); false when one's weights could not be printed (out of
// memory: the lesson is not written whole).
static bool write_checkpoints(FILE *f, const Lesson *ls)
{
    bool written = true;
    if (ls->n_checkpoints == 0 || !ls->ckpt_weights) return true;
    fputs(",\n  \"checkpoints\": [", f);
    for (int k = 0; k < ls->n_checkpoints; k++) {
        fprintf(f, "%s\n    {\"step\": %d, \"loss\": ", k ? "," : "", ls->ckpt_step[k]);
        json_write_float(f, ls->ckpt_loss[k]);
        char *w = lesson_checkpoint_json(ls, k);
        fprintf(f, ", \"weights\": %s}", w ? w : "null");
        written = written && w;
        free(w);
    }
    fputs("\n  ]", f);
    return written;
}

bool lesson_write(const Lesson *ls, FILE *f)
{
    const AttnConfig *c = &ls->cfg;
    bool written = true;
    fputs("{\n  \"title\": ", f);
    write_text(f, ls->title);
    if (ls->description[LANG_EN]) {
        fputs(",\n  \"description\": ", f);
        write_text(f, ls->description);
    }
    if (ls->vocab) { // a language model
        fputs(",\n  \"vocab\": ", f);
        write_tokens(f, ls->vocab, ls->n_vocab);
        if (ls->word_tokens) fputs(",\n  \"tokenizer\": \"word\"", f);
        if (ls->bpe) write_merges(f, ls);
    }
    if (ls->classes) lesson_write_image(f, ls); // a vision transformer
    fputs(",\n  \"model\": {", f);
    model_keys_write(f, c, ls->vocab != NULL);
    fputs("},\n", f);
    if (ls->vocab) { // the token ids (what the text was split into)
        fputs("  \"input\": {\n    \"ids\": ", f);
        write_nested(f, &ls->in.ids, 0, 0, 4);
        if (tensor_present(&ls->in.position_ids)) {
            fputs(",\n    \"position_ids\": ", f);
            write_nested(f, &ls->in.position_ids, 0, 0, 4);
        }
        fputs("\n  },\n  \"mask\": ", f);
        goto mask;
    }

    if (ls->classes) { // its images; no mask
        fputs("  \"input\": {\n    \"image\": ", f);
        write_nested(f, &ls->in.query, 0, 0, 4);
        fputs("\n  }", f);
        goto mask_done;
    }
    fputs("  \"input\": {\n    \"query\": ", f);
    write_nested(f, &ls->in.query, 0, 0, 4);
    fputs(",\n    \"key\": ", f);
    if (ls->in.key_is_query)
        fputs("\"query\"", f);
    else
        write_nested(f, &ls->in.key, 0, 0, 4);
    fputs(",\n    \"value\": ", f);
    if (ls->in.value_is_key)
        fputs("\"key\"", f);
    else if (ls->in.value_is_query)
        fputs("\"query\"", f);
    else
        write_nested(f, &ls->in.value, 0, 0, 4);
    if (tensor_present(&ls->in.position_ids)) {
        fputs(",\n    \"position_ids\": ", f);
        write_nested(f, &ls->in.position_ids, 0, 0, 4);
    }
    fputs("\n  },\n  \"mask\": ", f);
mask:
    if (ls->cfg.decoder_layers > 0) { // an encoder–decoder: its decoder's causal mask is the model's, not the file's
        fputs("null", f);
        goto mask_done;
    }
    switch (ls->in.mask_kind) {
    case MASK_NONE: fputs("null", f); break;
    case MASK_CAUSAL: // "causal" (top-left), or {"causal": "bottom_right"}
        if (ls->in.causal_bottom_right)
            fprintf(f, "{\"causal\": \"%s\"}", attn_names_name(&ATTN_NAMES_CAUSAL, CAUSAL_BOTTOM_RIGHT));
        else
            fputs("\"causal\"", f);
        break;
    case MASK_SLIDING:
        if (ls->in.sink_tokens > 0)
            fprintf(f, "{\"sliding_window\": %d, \"sink_tokens\": %d}", ls->in.window, ls->in.sink_tokens);
        else
            fprintf(f, "{\"sliding_window\": %d}", ls->in.window);
        break;
    case MASK_KEY_PADDING:
        fputs("{\"key_padding\": [", f);
        for (int b = 0; b < ls->batch; b++) {
            const float *row = ls->in.mask.data + (size_t)b * ls->len_q * ls->len_k;
            int len = 0;
            while (len < ls->len_k && row[len] != 0.0f) len++;
            fprintf(f, "%s%d", b ? ", " : "", len);
        }
        fputs("]}", f);
        break;
    case MASK_TENSOR: write_nested(f, &ls->in.mask, 0, 0, 2); break;
    }
mask_done:
    lesson_write_targets(f, ls);
    lesson_write_task(f, ls);
    write_weights(f, ls);
    written = write_checkpoints(f, ls) && written;
    if (ls->classes) {      // a vision transformer's labels are its own (CLS, 1 … N): not written
    } else if (ls->q_tokens) {
        fputs(",\n  \"tokens\": ", f);
        if (ls->in.key_is_query || !ls->k_tokens) {
            if (ls->in.key_is_query) { // one list labels both sides
                write_tokens(f, ls->q_tokens, ls->len_q);
            } else {                   // the keys had no labels: they get none
                fputs("{\"query\": ", f);
                write_tokens(f, ls->q_tokens, ls->len_q);
                fputc('}', f);
            }
        } else {
            fputs("{\"query\": ", f);
            write_tokens(f, ls->q_tokens, ls->len_q);
            fputs(", \"key\": ", f);
            write_tokens(f, ls->k_tokens, ls->len_k);
            fputc('}', f);
        }
    } else if (ls->k_tokens) {
        fputs(",\n  \"tokens\": {\"key\": ", f);
        write_tokens(f, ls->k_tokens, ls->len_k);
        fputc('}', f);
    }
    write_keyed(f, "steps", ls->n_steps, ls->step_keys, ls->step_text, ls->step_head);
    write_keyed(f, "notes", ls->n_notes, ls->note_keys, ls->note_text, NULL);
    if (ls->n_quiz > 0) {
        fputs(",\n  \"quiz\": [", f);
        for (int i = 0; i < ls->n_quiz; i++) {
            const LessonQuiz *q = &ls->quiz[i];
            fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
            json_write_string(f, q->id);
            fputs(", \"stage\": ", f);
            json_write_string(f, q->stage);
            fputs(", \"question\": ", f);
            write_text(f, q->question);
            fputs(", \"answer\": ", f);
            if (q->list) fputc('[', f);
            for (int k = 0; k < q->n_answer; k++) fprintf(f, "%s%.9g", k ? ", " : "", (double)q->answer[k]);
            if (q->list) fputc(']', f);
            if (q->has_tolerance) fprintf(f, ", \"tolerance\": %.9g", (double)q->tolerance);
            if (q->unordered) fputs(", \"unordered\": true", f);
            if (q->batch >= 0) fprintf(f, ", \"batch\": %d", q->batch);
            if (q->head >= 0) fprintf(f, ", \"head\": %d", q->head);
            if (q->n_cell == 1) fprintf(f, ", \"cell\": [%d]", q->cell[0]);
            if (q->n_cell == 2) fprintf(f, ", \"cell\": [%d, %d]", q->cell[0], q->cell[1]);
            if (q->explanation[LANG_EN]) {
                fputs(", \"explanation\": ", f);
                char *const *ex = q->explanation;
                write_text(f, ex);
            }
            fputc('}', f);
        }
        fputs("\n  ]", f);
    }
    fputs("\n}\n", f);
    return written && !ferror(f);
}

static bool save(const Lesson *ls, const char *path, bool replace, char *err, size_t err_len)
{
    // a temporary file beside the target (same file system: the rename is atomic),
    // created exclusively under an unpredictable name, never through a planted link;
    // a target that is not a regular file is refused, a symbolic link written through
    size_t n = strlen(path) + 4200;
    char *tmp = malloc(n);
    if (!tmp) {
        snprintf(err, err_len, "%.400s: out of memory", path);
        return false;
    }
    FILE *f = replace ? temp_file_open_target(path, tmp, n) : temp_file_create(path, tmp, n);
    if (!f) {
        int e = errno;
        snprintf(err, err_len, "%.400s: cannot write: %s", path, temp_file_strerror(e));
        free(tmp);
        errno = e;
        return false;
    }
    bool ok = lesson_write(ls, f);
    int e = ok ? 0 : (errno ? errno : EIO);
    if (!ok) fclose(f), unlink(tmp);
    else if (replace) ok = (e = temp_file_finish(f, tmp, path)) == 0;
    else { // link() never replaces: EEXIST when the name was taken meanwhile
        if (fflush(f) != 0 || fsync(fileno(f)) != 0) ok = false, e = errno;
        if (fclose(f) != 0 && ok) ok = false, e = errno;
        if (ok && link(tmp, path) != 0) {
            e = errno;
            // a file system without hard links (FAT, the browser build's): the name is
            // checked, then taken by rename (a name taken in between would be replaced)
            struct stat st;
            if ((e == EMLINK || e == EPERM || e == ENOSYS || e == EOPNOTSUPP) && lstat(path, &st) != 0 && errno == ENOENT)
                e = rename(tmp, path) == 0 ? 0 : errno;
            else if (e == EMLINK || e == EPERM || e == ENOSYS || e == EOPNOTSUPP)
                e = EEXIST;
            ok = e == 0;
        }
        unlink(tmp);
    }
    if (!ok) snprintf(err, err_len, "%.400s: cannot write: %s", path, temp_file_strerror(e ? e : EIO));
    free(tmp);
    if (!ok) errno = e ? e : EIO; // EEXIST: lesson_save_new found the name taken
    return ok;
}

bool lesson_save(const Lesson *ls, const char *path, char *err, size_t err_len)
{
    return save(ls, path, true, err, err_len);
}

bool lesson_save_new(const Lesson *ls, const char *path, char *err, size_t err_len)
{
    return save(ls, path, false, err, err_len);
}
