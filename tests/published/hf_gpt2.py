"""A rewrite of Hugging Face transformers' GPT-2, for tests/from_torch_models.py.

Rewrites, written here rather than copied (Apache-2.0, (c) 2018 The OpenAI Team Authors and
HuggingFace Inc. team):
  src/transformers/models/gpt2/modeling_gpt2.py at commit 0010f60284ab4b9d14b7df9c6525b1a2ad44e640
    (GPT2Attention, GPT2MLP, GPT2Block, GPT2Model, GPT2LMHeadModel, the eager attention path),
  src/transformers/pytorch_utils.py at commit 04ae75715f2cca2d87bbaf07c1d8e9fb2ab20bfd (Conv1D),
  src/transformers/activations.py (NewGELUActivation, ACT2FN["gelu_new"]),
  configuration_gpt2.py (GPT2Config's defaults and attribute names) and modeling_outputs.py /
    utils' ModelOutput (outputs that index as tuples).
Kept, because they are what a converter meets in transformers' GPT-2: the names
transformer.wte / wpe / drop / h[i].ln_1 / attn.c_attn / attn.c_proj / ln_2 / mlp.c_fc / mlp.act /
mlp.c_proj / ln_f and lm_head; Conv1D, whose weight is stored (in, out) and applied with addmm;
gelu_new written out with tanh; the causal mask as a bool tril buffer named bias (and the unused
masked_bias) filled with torch.finfo(dtype).min through torch.where; scale_attn_weights,
scale_attn_by_inverse_layer_idx and reorder_and_upcast_attn; layer_past / use_cache presents,
head_mask, attention_mask, position_ids, token_type_ids; lm_head tied to wte by post_init; and
forward returning CausalLMOutputWithCrossAttentions (loss from labels shifted inside, logits of
every position) or, with return_dict=False, a tuple. Left out: cross-attention, model
parallelism, gradient checkpointing, head pruning, loading weights (transformers is not in
Debian's archive, and GPT-2's weights cannot be downloaded here).
"""

import math
from dataclasses import dataclass, fields
from typing import Optional, Tuple

import torch
from torch import nn
from torch.nn import CrossEntropyLoss


# --- pytorch_utils.py / activations.py ------------------------------------------------------

class Conv1D(nn.Module):
    """OpenAI GPT's "1D convolution": a linear layer with the weight transposed, (nx, nf).
    nf: output features, nx: input features."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        w = torch.empty(nx, nf)
        nn.init.normal_(w, std=0.02)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    """GELU's tanh approximation as Google's BERT and OpenAI's GPT wrote it ("gelu_new")."""

    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


ACT2FN = {"gelu_new": NewGELUActivation}


# --- configuration and outputs ------------------------------------------------------------------

class GPT2Config:
    """GPT2Config's defaults, with the attribute_map names (hidden_size, num_attention_heads…)."""

    def __init__(self, vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=None,
                 activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
                 layer_norm_epsilon=1e-5, initializer_range=0.02, scale_attn_weights=True, use_cache=True,
                 scale_attn_by_inverse_layer_idx=False, reorder_and_upcast_attn=False, tie_word_embeddings=True,
                 output_attentions=False, output_hidden_states=False, use_return_dict=True):
        self.vocab_size, self.n_positions, self.n_embd, self.n_layer = vocab_size, n_positions, n_embd, n_layer
        self.n_head, self.n_inner, self.activation_function = n_head, n_inner, activation_function
        self.resid_pdrop, self.embd_pdrop, self.attn_pdrop = resid_pdrop, embd_pdrop, attn_pdrop
        self.layer_norm_epsilon, self.initializer_range = layer_norm_epsilon, initializer_range
        self.scale_attn_weights, self.use_cache = scale_attn_weights, use_cache
        self.scale_attn_by_inverse_layer_idx = scale_attn_by_inverse_layer_idx
        self.reorder_and_upcast_attn, self.tie_word_embeddings = reorder_and_upcast_attn, tie_word_embeddings
        self.output_attentions, self.output_hidden_states = output_attentions, output_hidden_states
        self.use_return_dict, self.add_cross_attention = use_return_dict, False

    hidden_size = property(lambda self: self.n_embd)
    max_position_embeddings = property(lambda self: self.n_positions)
    num_attention_heads = property(lambda self: self.n_head)
    num_hidden_layers = property(lambda self: self.n_layer)


class ModelOutput:
    """transformers' ModelOutput, as far as GPT-2 uses it: fields by name, and by index over
    the fields that are not None (out[0] is the loss when there is one, else the logits)."""

    def to_tuple(self):
        return tuple(getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None)

    def __getitem__(self, k):
        return getattr(self, k) if isinstance(k, str) else self.to_tuple()[k]


@dataclass
class BaseModelOutputWithPastAndCrossAttentions(ModelOutput):
    last_hidden_state: torch.FloatTensor = None
    past_key_values: Optional[Tuple[Tuple[torch.FloatTensor]]] = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None
    cross_attentions: Optional[Tuple[torch.FloatTensor]] = None


@dataclass
class CausalLMOutputWithCrossAttentions(ModelOutput):
    loss: Optional[torch.FloatTensor] = None
    logits: torch.FloatTensor = None
    past_key_values: Optional[Tuple[Tuple[torch.FloatTensor]]] = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None
    cross_attentions: Optional[Tuple[torch.FloatTensor]] = None


# --- modeling_gpt2.py ---------------------------------------------------------------------------

class GPT2Attention(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        max_positions = config.max_position_embeddings
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool))
                             .view(1, 1, max_positions, max_positions))
        self.register_buffer("masked_bias", torch.tensor(-1e4))     # unused since 4.x, kept in checkpoints
        self.embed_dim = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {self.embed_dim} and "
                             f"`num_heads`: {self.num_heads}).")
        self.scale_attn_weights = config.scale_attn_weights
        self.is_cross_attention = False
        self.scale_attn_by_inverse_layer_idx = config.scale_attn_by_inverse_layer_idx
        self.layer_idx = layer_idx
        self.reorder_and_upcast_attn = config.reorder_and_upcast_attn
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)
        self.pruned_heads = set()

    def _causal(self, attn_weights, query, key):
        # the query rows end where the keys end (with a cache: the last rows of the triangle)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        return torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value.to(attn_weights.device))

    def _attn(self, query, key, value, attention_mask=None, head_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                     device=attn_weights.device)
        if self.scale_attn_by_inverse_layer_idx:
            attn_weights = attn_weights / float(self.layer_idx + 1)
        if not self.is_cross_attention:
            attn_weights = self._causal(attn_weights, query, key)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        if head_mask is not None:
            attn_weights = attn_weights * head_mask
        return torch.matmul(attn_weights, value), attn_weights

    def _upcast_and_reordered_attn(self, query, key, value, attention_mask=None, head_mask=None):
        # Megatron-LM's baddbmm with the scale as alpha, in float32
        bsz, num_heads, q_seq_len, dk = query.size()
        k_seq_len = key.size(-2)
        attn_weights = torch.empty(bsz * num_heads, q_seq_len, k_seq_len, dtype=torch.float32, device=query.device)
        scale_factor = 1.0
        if self.scale_attn_weights:
            scale_factor /= float(value.size(-1)) ** 0.5
        if self.scale_attn_by_inverse_layer_idx:
            scale_factor /= float(self.layer_idx + 1)
        q, k = query.reshape(-1, q_seq_len, dk), key.transpose(-1, -2).reshape(-1, dk, k_seq_len)
        attn_weights = torch.baddbmm(attn_weights, q.float(), k.float(), beta=0, alpha=scale_factor)
        attn_weights = attn_weights.reshape(bsz, num_heads, q_seq_len, k_seq_len)
        if not self.is_cross_attention:
            attn_weights = self._causal(attn_weights, query, key)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights.type(value.dtype))
        if head_mask is not None:
            attn_weights = attn_weights * head_mask
        return torch.matmul(attn_weights, value), attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.view(tensor.size()[:-1] + (num_heads, attn_head_size))
        return tensor.permute(0, 2, 1, 3)                         # (batch, head, seq, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (num_heads * attn_head_size,))

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, use_cache=False,
                output_attentions=False):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value) if use_cache is True else None
        if self.reorder_and_upcast_attn:
            attn_output, attn_weights = self._upcast_and_reordered_attn(query, key, value, attention_mask, head_mask)
        else:
            attn_output, attn_weights = self._attn(query, key, value, attention_mask, head_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.resid_dropout(self.c_proj(attn_output))
        outputs = (attn_output, present)
        if output_attentions:
            outputs += (attn_weights,)
        return outputs                                            # a, present, (attentions)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config.hidden_size
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = ACT2FN[config.activation_function]()
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        hidden_size = config.hidden_size
        inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config, layer_idx=layer_idx)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, use_cache=False,
                output_attentions=False):
        residual = hidden_states
        attn_outputs = self.attn(self.ln_1(hidden_states), layer_past=layer_past, attention_mask=attention_mask,
                                 head_mask=head_mask, use_cache=use_cache, output_attentions=output_attentions)
        outputs = attn_outputs[1:]
        hidden_states = attn_outputs[0] + residual
        residual = hidden_states
        hidden_states = residual + self.mlp(self.ln_2(hidden_states))
        outputs = (hidden_states,) + outputs if use_cache else (hidden_states,) + outputs[1:]
        return outputs                                            # hidden_states, present, (attentions)


class GPT2PreTrainedModel(nn.Module):
    """What GPT-2 takes from PreTrainedModel: the config, dtype, get_head_mask, and post_init,
    which initialises the weights and ties the output embedding to the input one."""
    base_model_prefix = "transformer"

    def __init__(self, config):
        super().__init__()
        self.config = config

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, Conv1D)):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
        for name, p in module.named_parameters():
            if name == "c_proj.weight":                           # GPT-2's scaled residual projections
                p.data.normal_(mean=0.0, std=self.config.initializer_range / math.sqrt(2 * self.config.n_layer))

    def post_init(self):
        self.apply(self._init_weights)
        out = getattr(self, "lm_head", None)
        if out is not None and self.config.tie_word_embeddings:
            out.weight = self.transformer.wte.weight

    def get_head_mask(self, head_mask, num_hidden_layers):
        if head_mask is None:
            return [None] * num_hidden_layers
        if head_mask.dim() == 1:
            head_mask = head_mask[None, :, None, None].expand(num_hidden_layers, -1, -1, -1)[:, None]
        elif head_mask.dim() == 2:
            head_mask = head_mask[:, None, :, None, None]
        return head_mask.to(dtype=self.dtype)


class GPT2Model(GPT2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_dim = config.hidden_size
        self.wte = nn.Embedding(config.vocab_size, self.embed_dim)
        self.wpe = nn.Embedding(config.max_position_embeddings, self.embed_dim)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config, layer_idx=i) for i in range(config.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=config.layer_norm_epsilon)
        self.post_init()

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, head_mask=None, inputs_embeds=None, use_cache=None, output_attentions=None,
                output_hidden_states=None, return_dict=None):
        cfg = self.config
        output_attentions = output_attentions if output_attentions is not None else cfg.output_attentions
        output_hidden_states = output_hidden_states if output_hidden_states is not None else cfg.output_hidden_states
        use_cache = use_cache if use_cache is not None else cfg.use_cache
        return_dict = return_dict if return_dict is not None else cfg.use_return_dict
        if input_ids is not None and inputs_embeds is not None:
            raise ValueError("You cannot specify both input_ids and inputs_embeds at the same time")
        elif input_ids is not None:
            input_shape = input_ids.size()
            input_ids = input_ids.view(-1, input_shape[-1])
            batch_size = input_ids.shape[0]
        elif inputs_embeds is not None:
            input_shape = inputs_embeds.size()[:-1]
            batch_size = inputs_embeds.shape[0]
        else:
            raise ValueError("You have to specify either input_ids or inputs_embeds")
        device = input_ids.device if input_ids is not None else inputs_embeds.device
        if token_type_ids is not None:
            token_type_ids = token_type_ids.view(-1, input_shape[-1])
        if past_key_values is None:
            past_length = 0
            past_key_values = tuple([None] * len(self.h))
        else:
            past_length = past_key_values[0][0].size(-2)
        if position_ids is None:
            position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long, device=device)
            position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        else:
            position_ids = position_ids.view(-1, input_shape[-1])
        if attention_mask is not None:                           # (B, L) 1 / 0 -> additive (B, 1, 1, L)
            attention_mask = attention_mask.view(batch_size, -1)[:, None, None, :].to(dtype=self.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.dtype).min
        head_mask = self.get_head_mask(head_mask, cfg.n_layer)
        if inputs_embeds is None:
            inputs_embeds = self.wte(input_ids)
        hidden_states = inputs_embeds + self.wpe(position_ids)
        if token_type_ids is not None:
            hidden_states = hidden_states + self.wte(token_type_ids)
        hidden_states = self.drop(hidden_states)
        output_shape = input_shape + (hidden_states.size(-1),)
        presents = () if use_cache else None
        all_self_attentions = () if output_attentions else None
        all_hidden_states = () if output_hidden_states else None
        for i, (block, layer_past) in enumerate(zip(self.h, past_key_values)):
            if output_hidden_states:
                all_hidden_states = all_hidden_states + (hidden_states,)
            outputs = block(hidden_states, layer_past=layer_past, attention_mask=attention_mask,
                            head_mask=head_mask[i], use_cache=use_cache, output_attentions=output_attentions)
            hidden_states = outputs[0]
            if use_cache is True:
                presents = presents + (outputs[1],)
            if output_attentions:
                all_self_attentions = all_self_attentions + (outputs[2 if use_cache else 1],)
        hidden_states = self.ln_f(hidden_states).view(output_shape)
        if output_hidden_states:
            all_hidden_states = all_hidden_states + (hidden_states,)
        if not return_dict:
            return tuple(v for v in [hidden_states, presents, all_hidden_states, all_self_attentions] if v is not None)
        return BaseModelOutputWithPastAndCrossAttentions(last_hidden_state=hidden_states, past_key_values=presents,
                                                         hidden_states=all_hidden_states,
                                                         attentions=all_self_attentions)


class GPT2LMHeadModel(GPT2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.post_init()

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, head_mask=None, inputs_embeds=None, labels=None, use_cache=None,
                output_attentions=None, output_hidden_states=None, return_dict=None):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        transformer_outputs = self.transformer(
            input_ids, past_key_values=past_key_values, attention_mask=attention_mask, token_type_ids=token_type_ids,
            position_ids=position_ids, head_mask=head_mask, inputs_embeds=inputs_embeds, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=return_dict)
        hidden_states = transformer_outputs[0]
        lm_logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:                                    # shifted here: tokens < n predict n
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = CrossEntropyLoss()(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        if not return_dict:
            output = (lm_logits,) + tuple(transformer_outputs[1:])
            return ((loss,) + output) if loss is not None else output
        return CausalLMOutputWithCrossAttentions(loss=loss, logits=lm_logits,
                                                 past_key_values=transformer_outputs.past_key_values,
                                                 hidden_states=transformer_outputs.hidden_states,
                                                 attentions=transformer_outputs.attentions)
