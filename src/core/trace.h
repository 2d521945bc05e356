// trace.h — the ordered record of a forward pass: one named tensor per stage,
// grouped into teaching steps (the timeline), with its operands. What a stage
// is drawn as and its formula are the view's (scene.h), derived from the trace.
#ifndef ATTNVIZ_TRACE_H
#define ATTNVIZ_TRACE_H

#include "stages.h"
#include "tensor.h"

#define TRACE_LAYER_STAGES 96  // stages one layer records at most (every row of stages.h's table)
#define TRACE_MAX_LAYERS 8     // = LESSON_MAX_LAYERS
#define TRACE_MAX_STAGES (TRACE_MAX_LAYERS * TRACE_LAYER_STAGES) // a whole model's, at most
#define TRACE_MAX_OPERANDS 3
#define STAGE_NAME_MAX 32
#define TRACE_MAX_BATCH 64   // = LESSON_MAX_BATCH


typedef struct Stage {
    char name[STAGE_NAME_MAX];   // "q_proj", "scores", ... (STAGE_INFO[id].name); in a model of
                                 // several layers, layer l's stages are "l{l}.q_proj", ...
    StageId id;                  // its row of stages.h's table
    int layer;                   // the layer it belongs to; -1: the model's own (input, mask)
    StageKind kind;
    StepId step;
    Tensor t;                    // owned
    bool key_rows;               // its rows are key positions (key/value side), else query positions
    int operands[TRACE_MAX_OPERANDS]; // indices of earlier stages it reads, -1 = none
    const Tensor *weight;        // borrowed nn.Linear weight it applies (or NULL)
    const Tensor *bias;          // borrowed bias (or NULL)
    // Per batch slice (all heads), over finite values: the largest |value| and the
    // smallest positive value (INFINITY when none): the views' colour ranges. Set
    // by trace_compute_stats for the batches the tensor has (last: trace_push does
    // not clear them, most of a Stage's size).
    float absmax[TRACE_MAX_BATCH], minpos[TRACE_MAX_BATCH];
    bool any_nan[TRACE_MAX_BATCH];
} Stage;

// The trace borrows weight tensors from the AttnWeights it was computed with:
// they must outlive it and never move (the app keeps both in one Session, session.h).
typedef struct Trace {
    Stage *stages;               // n of cap (owned; grows as stages are pushed)
    int n, cap;
    int n_layers;                // layers of the model (1: today's single block, names unprefixed)
    int layer;                   // the layer trace_push records into (-1: the model's own stages)
    // Facts of the forward pass the views explain (copied from the config).
    int batch, len_q, len_k, d_model, n_heads, d_k, d_v;
    float scale, mask_fill, norm_eps;
    int mask_kind;               // MaskKind of attention.h
    int n_kv_heads;              // K/V heads (= n_heads without GQA / MQA)
    int rope;                    // RopeStyle of attention.h
    float rope_theta;
    bool alibi;
    int window;                  // sliding window W (mask_kind MASK_SLIDING)
    int sink_tokens;             // ... and its first S keys kept (StreamingLLM's attention sinks; 0: none)
    int window_conv, masked_rows, alibi_form, flash_acc, stream_pos; // AttnConfig's conventions (WindowConv,
                                                         // MaskedRows, AlibiForm, FlashAcc, StreamPos)
    int causal_offset;           // MASK_CAUSAL: query i sees keys j <= i + causal_offset (Lk - Lq bottom-right, else 0)
    int rotary_dim;              // RoPE: the first rotary_dim of d_k dimensions turn (0: no RoPE)
    int *positions;              // (B, L) RoPE's positions when the lesson gives position_ids (owned), else NULL
    float *rope_inv;             // RoPE: the frequency of each of the rotary_dim / 2 pairs (owned; rope_scaling applied)
    float rope_att;              // RoPE: cos and sin are multiplied by it (YaRN's attention factor, else 1)
    float *rope_inv_local;       // … in the sliding layers with rope_local_base_freq (owned; NULL: rope_inv)
    float rope_theta_local;      // … their base (0: none)
    float softcap;               // scores soft-capped to c·tanh(s / c) (0: none)
    float query_pre_attn_scalar; // the scale is √ of it (0: √d_k or the lesson's scale)
    bool qk_norm, attn_gate;     // QK-norm, gated attention
    int sliding_window;          // the sliding layers' window (0: none)
    int mla_rank, mla_q_rank;    // multi-head latent attention: kv_lora_rank r (0: none), q_lora_rank
    int mla_rope;                // … its decoupled RoPE dimensions: the last mla_rope of d_k turn
    int index_heads, index_dim, index_topk; // DeepSeek sparse attention's indexer (index_topk 0: none)
    unsigned char layer_sliding[TRACE_MAX_LAYERS]; // layer l is a sliding-window layer of a local/global pattern
    unsigned char layer_linear[TRACE_MAX_LAYERS];  // layer l is a "linear_attention" layer (delta.c)
    int linear_rule, linear_form; // their LinearRule and LinearForm (attention.h)
    int flash_block_q, flash_block_k; // tiles of the flash stages (0: none)
    bool norm_rms;               // the norms are RMSNorm (else LayerNorm)
    bool norm_first;             // pre-norm block
    int ffn_act;                 // FfnAct of attention.h
    int vocab_size;              // a language model's vocabulary (0: not one); a vision transformer's classes
    int n_classes, patch;        // a vision transformer's classes and patch size (0: not one)
    int *ids;                    // (B, L) its token ids (owned), else NULL
    int pos_kind;                // PosKind of attention.h: its positions
    float temperature;           // probs = softmax(logits / temperature)
    bool tied;                   // logits use the embedding (tie_embeddings)
    int ablate_kind, ablate_layer, ablate_head; // an experiment's ablation (AttnConfig.ablate, AblateKind;
                                 // 0: none): that head's head_out was replaced
    bool has_stats;              // trace_compute_stats has filled Stage.absmax / minpos / any_nan
    int encoder_blocks;          // an encoder–decoder (model.decoder_layers): layers 0 … encoder_blocks − 1 are the
                                 // encoder, then each decoder layer's self-attention and cross-attention blocks (0: none)
} Trace;

// What a block (a layer of the trace) attends with: one attention of a model of one kind, or an
// encoder–decoder's encoder self-attention (rows and keys: the source), the decoder's causal
// self-attention (rows and keys: the target) or its cross-attention (rows the target, keys the source).
typedef enum TraceBlock { BLOCK_SELF, BLOCK_ENCODER, BLOCK_DECODER_SELF, BLOCK_CROSS } TraceBlock;
TraceBlock trace_block(const Trace *tr, int layer);

void trace_init(Trace *tr);
// RoPE's position of token l of batch b: the lesson's position_ids, else l.
int trace_position(const Trace *tr, int b, int l);
void trace_free(Trace *tr);
// Room for n stages in all (attn_forward reserves a whole model's before its first push,
// so that no pointer into stages moves while it runs). False on allocation failure.
bool trace_reserve(Trace *tr, int n);
// Appends stage id (name, kind and step from stages.h's table, in tr->layer: "l{layer}."
// before the name when the model has several layers) with a zeroed tensor of the given
// shape that reads the stages op0..op2 (-1: none); its index or -1.
int trace_push(Trace *tr, StageId id, int rank, const int *shape, int op0, int op1, int op2);
// The same with the tensor's values unset, for a stage the caller writes whole next
// (the forward pass's large stages: no zeroing of memory about to be overwritten).
int trace_push_raw(Trace *tr, StageId id, int rank, const int *shape, int op0, int op1, int op2);
// The K/V heads (n_kv_heads, or n_heads without GQA), and the (batch, K/V head) slice
// that query head h of batch b reads: b·H_kv + h / (H / H_kv), as repeat_interleave.
int trace_kv_heads(const Trace *tr);
size_t trace_kv_slice(const Trace *tr, int b, int h);
// Fills every stage's absmax / minpos / any_nan: what the view colours with. Not part
// of attn_forward (its speed is the core's); a Session computes them once per lesson,
// and a view of a trace without them measures the tensors itself.
void trace_compute_stats(Trace *tr);
// Index of the stage with this (full) name, or -1.
int trace_find(const Trace *tr, const char *name);
const Stage *trace_get(const Trace *tr, const char *name);
// The stage of table name `base` ("mask", "masked_scores") that stage s reads in its own
// layer: in s's layer, or of the model's own (input, mask); -1 when there is none.
int trace_find_near(const Trace *tr, int s, const char *base);
// The layer a view at stage s shows: its layer, or 0 for the model's own stages.
int trace_layer_at(const Trace *tr, int s);
// The stage of layer `layer` with stage s's table row (the same step of another layer),
// else that layer's first stage; s itself when the trace has one layer.
int trace_same_in_layer(const Trace *tr, int s, int layer);
// Number of stages in step s of layer `layer` (with the model's own stages), and the
// first one's index (-1 when the step is absent there).
int trace_step_first(const Trace *tr, int layer, StepId s);
int trace_step_count(const Trace *tr, int layer, StepId s);
const char *step_name(StepId s);
// The head of t that query head h reads: with grouped K/V heads (t (B, Hkv, L, d),
// Hkv < n_heads) head h / (n_heads / Hkv); h itself otherwise.
int trace_kv_head(const Trace *tr, const Tensor *t, int h);
// RoPE's frequencies in layer `layer` (rope_inv, or rope_inv_local in a sliding layer with its own base).
const float *trace_rope_inv(const Trace *tr, int layer);   // stable English id, e.g. "projection"

#endif
