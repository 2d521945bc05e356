"""torch_vit.py: a small vision transformer in PyTorch, written from the ViT paper (Dosovitskiy et al.
2020, "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale", eq. 1-4), with
the stages attnviz records and a lesson's names. A one-channel image (B, H, W):

    x_p    = the p × p patches in raster order, each flattened row by row     patches      (B, N, p²)
    z_0    = [x_class; x_p·E] + E_pos                                          patch_embed  (B, N, C)
             (E: an nn.Conv2d of kernel and stride p, as timm's PatchEmbed)    cls_concat   (B, N+1, C)
                                                                               pos_embed, embedding
    z_l    = the pre-norm encoder layers (LN, multi-head self-attention without a mask, the residual,
             LN, the MLP with GELU, the residual): torch_modules' blocks, which record every stage and
             equal nn.TransformerEncoderLayer(norm_first=True) (check_encoder checks it)
    y      = LN(z_L) of every row (as timm's ViT: its norm, then the [CLS] row)  final_norm, cls_out
    logits = y_0·W_Hᵀ + b_H, probs = softmax(logits)                           logits, probs (B, 1, K)

The lesson holds it as {"image": {"height", "width", "patch", "classes"}, "input": {"image"}, and the
weights patch_embed (C, p²), patch_bias, cls_token, pos_embed (N+1, C), final_norm_weight / _bias,
head (K, C), head_bias and layers (src/core/lesson_image.c). Used by tests/gen_vit.py (the
references) and lessons/train_vit.py (the digits lesson).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_modules import BlockStack, make_block, tensor_json


class VisionTransformer(nn.Module):
    def __init__(self, height, width, patch, d_model, n_heads, n_layers, ffn_hidden, n_classes, d_k=None,
                 norm_eps=1e-5, activation="gelu"):
        super().__init__()
        assert height % patch == 0 and width % patch == 0
        self.height, self.width, self.p, self.d_model = height, width, patch, d_model
        self.n_patches = (height // patch) * (width // patch)
        self.cfg = dict(d_model=d_model, n_heads=n_heads, n_layers=n_layers, ffn_hidden=ffn_hidden,
                        d_k=d_k, norm_eps=norm_eps, activation=activation)
        self.embed = nn.Conv2d(1, d_model, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(d_model) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(self.n_patches + 1, d_model) * 0.02)
        self.blocks = BlockStack([make_block(d_model, n_heads, d_k=d_k, residual_norm=True, norm_eps=norm_eps,
                                             ffn_hidden=ffn_hidden, norm_first=True, activation=activation)
                                  for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model, eps=norm_eps)
        self.head = nn.Linear(d_model, n_classes)
        self.trace = []

    def forward(self, img, record=True):
        B, C = img.shape[0], self.d_model
        x = img.reshape(B, 1, self.height, self.width)
        e = self.embed(x).flatten(2).transpose(1, 2)                       # (B, N, C)
        t = torch.cat([self.cls_token.expand(B, 1, C), e], 1)              # (B, N + 1, C)
        pos = self.pos_embed.unsqueeze(0).expand(B, -1, -1)
        z = t + pos
        y = self.blocks(z, z, z, None)
        h = self.norm(y)
        logits = self.head(h[:, :1])                                       # (B, 1, K)
        if record:
            patches = F.unfold(x, self.p, stride=self.p).transpose(1, 2)   # (B, N, p²)
            layers = self.blocks.stages()
            if len(self.blocks.layers) == 1:  # one layer: the stages keep their plain names
                layers = [(n[3:], t) for n, t in layers]
            self.trace = [("patches", patches), ("patch_embed", e), ("cls_concat", t), ("pos_embed", pos),
                          ("embedding", z)] + layers + [
                          ("final_norm", h), ("cls_out", h[:, :1]), ("logits", logits),
                          ("probs", F.softmax(logits, -1))]
        return logits

    def stages(self):
        return [(n, t.detach().clone()) for n, t in self.trace]

    def lesson_weights(self):
        C, p = self.d_model, self.p
        w = {"patch_embed": tensor_json(self.embed.weight.reshape(C, p * p)),
             "patch_bias": tensor_json(self.embed.bias), "cls_token": tensor_json(self.cls_token),
             "pos_embed": tensor_json(self.pos_embed),
             "final_norm_weight": tensor_json(self.norm.weight), "final_norm_bias": tensor_json(self.norm.bias),
             "head": tensor_json(self.head.weight), "head_bias": tensor_json(self.head.bias)}
        w.update(self.blocks.lesson_weights())
        return w

    def load_lesson(self, lesson):
        """Sets the weights from a lesson's (explicit tensors: what lesson() and lesson_write write)."""
        T = lambda v: torch.tensor(v, dtype=torch.float32)  # noqa: E731
        w = lesson["weights"]
        C, p = self.d_model, self.p
        with torch.no_grad():
            self.embed.weight.copy_(T(w["patch_embed"]).reshape(C, 1, p, p)), self.embed.bias.copy_(T(w["patch_bias"]))
            self.cls_token.copy_(T(w["cls_token"])), self.pos_embed.copy_(T(w["pos_embed"]))
            self.norm.weight.copy_(T(w.get("final_norm_weight", [1.0] * C)))
            self.norm.bias.copy_(T(w.get("final_norm_bias", [0.0] * C)))
            self.head.weight.copy_(T(w["head"])), self.head.bias.copy_(T(w["head_bias"]))
            for blk, lw in zip(self.blocks.layers, w["layers"]):
                full = {"norm_weight": [1.0] * C, "norm_bias": [0.0] * C, "ffn_norm_weight": [1.0] * C,
                        "ffn_norm_bias": [0.0] * C}
                full.update(lw)
                blk.load_lesson_weights({k: T(v) for k, v in full.items()})
        return self

    @staticmethod
    def from_lesson(lesson):
        im, m = lesson["image"], lesson["model"]
        return VisionTransformer(im["height"], im["width"], im["patch"], m["d_model"], m["n_heads"],
                                 m.get("n_layers", 1), m.get("ffn_hidden", 0), len(im["classes"]), m.get("d_k"),
                                 m.get("norm_eps", 1e-5), m.get("activation", "relu")).load_lesson(lesson)

    def lesson(self, title, classes, images):
        """The lesson of this model reading images (B, H, W) (the caller adds narration, quiz)."""
        m = {k: v for k, v in self.cfg.items() if k != "d_k" or v is not None}
        m.update(residual_norm=True, norm_first=True)
        return {"title": title,
                "image": {"height": self.height, "width": self.width, "patch": self.p, "classes": list(classes)},
                "model": m, "input": {"image": tensor_json(images)}, "weights": self.lesson_weights()}


def check_encoder(vit, img, tol=1e-5):
    """The blocks against nn.TransformerEncoderLayer(norm_first=True, batch_first=True) with the same
    weights (d_k = d_model / n_heads only): the largest difference of the last layer's output."""
    C, H = vit.d_model, vit.cfg["n_heads"]
    if C % H or (vit.cfg["d_k"] not in (None, C // H)):
        return None
    layers = []
    for blk in vit.blocks.layers:
        a = blk.attn
        ref = nn.TransformerEncoderLayer(C, H, vit.cfg["ffn_hidden"], dropout=0.0, activation="gelu",
                                         layer_norm_eps=vit.cfg["norm_eps"], batch_first=True, norm_first=True)
        with torch.no_grad():
            ref.self_attn.in_proj_weight.copy_(torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight]))
            ref.self_attn.in_proj_bias.copy_(torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias]))
            ref.self_attn.out_proj.weight.copy_(a.w_o.weight), ref.self_attn.out_proj.bias.copy_(a.w_o.bias)
            ref.linear1.weight.copy_(blk.ffn_w1.weight), ref.linear1.bias.copy_(blk.ffn_w1.bias)
            ref.linear2.weight.copy_(blk.ffn_w2.weight), ref.linear2.bias.copy_(blk.ffn_w2.bias)
            ref.norm1.load_state_dict(blk.norm.state_dict()), ref.norm2.load_state_dict(blk.ffn_norm.state_dict())
        layers.append(ref.eval())
    with torch.no_grad():
        vit(img)
        st = dict(vit.stages())
        z = st["embedding"]
        for ref in layers:
            z = ref(z)
        last = "l%d.ffn_sum" % (len(layers) - 1) if len(layers) > 1 else "ffn_sum"
        return float((z - st[last]).abs().max())
