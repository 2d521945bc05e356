// edit.h — the what-if engine: change a number, a mask cell or a switch of a
// lesson, in the lesson's own JSON paths, with undo and redo.
//
// An edit is written KEY=VALUE, exactly as on the command line (--set):
//
//   input.query[0,1,2]=5      one element (every index of the tensor's rank)
//   weights.w_q[3,1]=-0.25    a weight or bias, PyTorch nn.Linear layout (out, in)
//   weights.b_o=0             no index: every element
//   mask[0,2,3]=0             one mask cell (B, Lq, Lk): 0 masked, 1 attend
//   mask=causal               none | causal | key_padding (the last key of every batch;
//                             a mask that is key padding already keeps its lengths)
//   mask.key_padding[1]=3     the key length of batch 1
//   model.scale=1             a positive divisor, or "sqrt_dk"
//   model.mask_fill=-inf      any float32, or -inf
//   model.norm_eps=1e-6       positive
//
// Edits never change a shape, so every tensor keeps its address: a Trace that
// borrows the lesson's weights stays valid across edits (session.h recomputes).
// Pure core code: no SDL, no I/O.
#ifndef ATTNVIZ_EDIT_H
#define ATTNVIZ_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"
#include "model_keys.h"

#define EDIT_TEXT_MAX 160
#define EDIT_ERR_MAX 400

// The tensors an edit can name, in the order of lesson_tensor_name.
typedef enum LessonTensor {
    LT_QUERY, LT_KEY, LT_VALUE, LT_MASK,
    LT_WEIGHT0,                       // LT_WEIGHT0 + l·LESSON_N_WEIGHTS + i: weight slot i of layer l
    LT_COUNT = LT_WEIGHT0 + LESSON_MAX_LAYERS * LESSON_N_WEIGHTS
} LessonTensor;

// The model keys --set and the lab edit are model_keys.h's EDITABLE rows: each is a kind,
// EDIT_<ID> (EDIT_SCALE: model.scale = value, EDIT_MASK_FILL (may be -inf), EDIT_NORM_EPS,
// EDIT_TEMPERATURE: a language model's softmax over the vocabulary).
#define EDIT_MODEL_KIND_EDITABLE(id) EDIT_##id,
#define EDIT_MODEL_KIND_FIXED(id)
#define EDIT_MODEL_KIND(id, json, field, type, lo, hi, dflt, flags, ed) EDIT_MODEL_KIND_##ed(id)
typedef enum EditKind {
    EDIT_ELEMENT,      // tensor[index] = value
    EDIT_FILL,         // every element of tensor = value
    EDIT_MASK_KIND,    // mask = none | causal | key_padding
    EDIT_KEY_PADDING,  // mask.key_padding[index] = value (a key length)
    MODEL_KEY_TABLE(EDIT_MODEL_KIND)  // model.KEY = value
} EditKind;
// The model key (model_keys.h's row) an edit of this kind sets, or -1 (not a model key's).
int edit_model_key(EditKind kind);

typedef struct Edit {
    EditKind kind;
    int tensor;              // LessonTensor (ELEMENT, FILL)
    size_t index;            // flat element index (ELEMENT), batch (KEY_PADDING)
    float value;
    int mask_kind;           // MaskKind (MASK_KIND)
    char text[EDIT_TEXT_MAX]; // canonical KEY=VALUE, e.g. "weights.w_q[3,1]=-0.25"
} Edit;

// "input.query", "weights.w_q", "mask", ...; NULL out of range.
const char *lesson_tensor_name(int t);
// The tensor t of ls (empty when the lesson has none, e.g. b_q without qkv_bias).
Tensor *lesson_tensor(Lesson *ls, int t);
// LessonTensor of a name as above, or of a weight's short name ("w_q"); -1 when unknown.
int lesson_tensor_find(const char *name);

// Parses "KEY=VALUE" against ls (shapes, switches). On failure returns false with
// one line in err: "KEY=VALUE: what is wrong; expected ...".
bool edit_parse(const Lesson *ls, const char *arg, Edit *e, char *err, size_t n);
// An element edit of tensor t at flat index i (its text is filled in).
void edit_element(const Lesson *ls, int t, size_t i, float value, Edit *e);
// An edit of the scale's divisor (model.scale), its text filled in.
void edit_scale(const Lesson *ls, float value, Edit *e);
// What e edits, as its text names it: "weights.w_q[3,1]", "model.scale".
void edit_key(const Edit *e, char *buf, size_t n);
// The typed text as e's new value (e: an element edit or model.scale): only the number
// is parsed (model.scale also takes sqrt_dk). False with the line edit_parse gives for
// KEY=TEXT ("weights.w_q[3,1]=abc: expected a finite float32 number, …"); e unchanged.
bool edit_value(const Lesson *ls, Edit *e, const char *text, char *err, size_t n);
// Applies e to ls. False (ls unchanged, one line in err) when it does not apply:
// an element of a tensor the lesson lacks, a mask value not 0/1, out of memory.
// Self-attention: an edit of input.query also changes the key and the value that
// are the query.
bool edit_apply(Lesson *ls, const Edit *e, char *err, size_t n);
// Whether applying e to ls would change nothing.
bool edit_is_noop(const Lesson *ls, const Edit *e);

// ---- a lesson's edits, undo and redo ------------------------------------------------
// The edits applied so far are items[0 .. applied); items[applied .. n) can be redone.
typedef struct EditLog {
    Edit *items;
    int n, cap, applied;
} EditLog;

void edit_log_init(EditLog *g);
void edit_log_free(EditLog *g);
// Records e as the newest edit (dropping what could be redone). With merge, and when
// the newest applied edit changes the same element or switch, e replaces it (one
// undo step for a whole drag). False on allocation failure.
bool edit_log_push(EditLog *g, const Edit *e, bool merge);

// ---- copies ----------------------------------------------------------------------
// A deep copy of src (false on allocation failure; dst is then empty).
bool lesson_clone(Lesson *dst, const Lesson *src);
// Copies src's numbers, switches and mask into dst, which has the same shapes (a
// clone of it): dst's tensors keep their addresses.
void lesson_copy_values(Lesson *dst, const Lesson *src);
// Gives ls a (B, Lq, Lk) mask tensor (all 1) when it has none, so that a mask edit
// never allocates. False on allocation failure.
bool lesson_ensure_mask(Lesson *ls);

#endif
