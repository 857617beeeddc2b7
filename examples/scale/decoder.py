"""A GPT-style decoder at the sizes of the scale study, built directly on a device.

The shapes are GPT-3's (Brown et al. 2020, table 2.1): "1.3b" is GPT-3 XL (24 layers, d_model
2048, 16 heads of 128, sequence 2048) and "7b" is GPT-3 6.7B (32 layers, d_model 4096, 32 heads),
with GPT-2's vocabulary of 50257 tokens, learned positions and the LM head tied to the token
embedding, as GPT-3 and MPT do. "test" is the same program at a size a test can run in full mode.

Attention is the plain matmul-softmax-matmul of the era's PyTorch (1.13 has no fused attention
kernel); the published throughputs this study is compared with use FlashAttention, which reads
and writes far fewer bytes for the scores.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class DecoderSize:
    layers: int
    d_model: int
    heads: int
    seq_len: int
    vocab: int = 50257

    def parameters(self):
        """The parameter count, from the shapes (tied head; weights and biases)."""
        d = self.d_model
        block = 12 * d * d + 13 * d  # qkv, projection, 4x MLP, their biases, two LayerNorms
        return self.layers * block + (self.vocab + self.seq_len) * d + 2 * d

    def forward_flops_per_token(self):
        """Model FLOPs of one token's forward pass, counted as MosaicML's llm-foundry counts them
        for MFU (scripts/train/benchmarking/README.md): 2 per parameter and per token, plus the
        attention scores and their weighted sum (4 x layers x d_model x seq_len)."""
        return 2 * self.parameters() + 4 * self.layers * self.d_model * self.seq_len

    def describe(self):
        return (f"{self.layers}-layer decoder, d_model {self.d_model}, {self.heads} heads, "
                f"sequence {self.seq_len}, vocabulary {self.vocab}: "
                f"{self.parameters() / 1e9:.2f}B parameters")


SIZES = {
    "1.3b": DecoderSize(layers=24, d_model=2048, heads=16, seq_len=2048),
    "7b": DecoderSize(layers=32, d_model=4096, heads=32, seq_len=2048),
    "test": DecoderSize(layers=2, d_model=128, heads=4, seq_len=64, vocab=512),
}


class Attention(nn.Module):
    """Causal self-attention over all heads of one device."""

    def __init__(self, d_model, heads, **on):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model, **on)
        self.proj = nn.Linear(d_model, d_model, **on)

    def forward(self, x, causal_mask):
        batch, seq, _ = x.shape
        q, k, v = (self.qkv(x).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + causal_mask
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, -1)
        return self.proj(attended)


class MLP(nn.Module):
    def __init__(self, d_model, hidden, **on):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden, **on)
        self.fc2 = nn.Linear(hidden, d_model, **on)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """Pre-norm transformer block. `attention` and `mlp` are modules with the interfaces of
    Attention and MLP (a tensor-parallel study passes sharded ones)."""

    def __init__(self, d_model, attention, mlp, **on):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model, **on)
        self.attention = attention
        self.norm2 = nn.LayerNorm(d_model, **on)
        self.mlp = mlp

    def forward(self, x, causal_mask):
        x = x + self.attention(self.norm1(x), causal_mask)
        return x + self.mlp(self.norm2(x))


class Decoder(nn.Module):
    """`make_attention(d_model, heads, **on)` and `make_mlp(d_model, hidden, **on)` build each
    block's halves; by default the unsharded Attention and MLP."""

    def __init__(self, size, device, dtype, make_attention=Attention, make_mlp=MLP):
        super().__init__()
        on = {"device": device, "dtype": dtype}
        d = size.d_model
        self.tokens = nn.Embedding(size.vocab, d, **on)
        self.positions = nn.Embedding(size.seq_len, d, **on)
        self.blocks = nn.ModuleList(
            Block(d, make_attention(d, size.heads, **on), make_mlp(d, 4 * d, **on), **on)
            for _ in range(size.layers))
        self.norm = nn.LayerNorm(d, **on)
        self.register_buffer("causal_mask", torch.full(
            (size.seq_len, size.seq_len), float("-inf"), **on).triu(1), persistent=False)

    def forward(self, ids):
        # Positions 0..seq-1 are the table's first rows: a slice, not a gather by index, whose
        # gradient needs no index_add (and whose time does not depend on device data).
        x = self.tokens(ids) + self.positions.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x, self.causal_mask)
        return F.linear(self.norm(x), self.tokens.weight)  # the head tied to the embedding


def next_token_loss(logits, targets):
    """Cross-entropy of each position's prediction of the next token (targets: the ids shifted
    by one)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
