"""The model and data of `mimic demo`: a small GPT-style language model and a synthetic language.

The language is a random Markov chain over the vocabulary: each token has a few possible
successors, so a model that learns the chain's table can push the loss from ln(vocab) towards
ln(successors). Everything is generated on the CPU from fixed seeds, so every run sees the same
batches; only plain aten ops are used (no fused attention), which the device runs natively.
Sizes are demo_config.ModelSize.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

SUCCESSORS = 4  # possible next tokens of each token in the synthetic language
LANGUAGE_SEED = 1
MODEL_SEED = 0
BATCH_SEEDS_FROM = 1000  # batch i of the run is drawn with seed BATCH_SEEDS_FROM + i


class Block(nn.Module):
    """Pre-norm transformer block: causal self-attention, then a GELU MLP."""

    def __init__(self, size):
        super().__init__()
        self.heads = size.heads
        self.norm1 = nn.LayerNorm(size.d_model)
        self.qkv = nn.Linear(size.d_model, 3 * size.d_model)
        self.proj = nn.Linear(size.d_model, size.d_model)
        self.norm2 = nn.LayerNorm(size.d_model)
        self.fc1 = nn.Linear(size.d_model, 4 * size.d_model)
        self.fc2 = nn.Linear(4 * size.d_model, size.d_model)

    def forward(self, x, causal_mask):
        batch, seq, width = x.shape
        head_dim = width // self.heads
        q, k, v = (self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, head_dim)
                   .permute(2, 0, 3, 1, 4))
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim) + causal_mask
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, width)
        x = x + self.proj(attended)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyLM(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.embed = nn.Embedding(size.vocab, size.d_model)
        self.position = nn.Parameter(torch.randn(size.seq_len, size.d_model) * 0.02)
        self.blocks = nn.ModuleList(Block(size) for _ in range(size.layers))
        self.norm = nn.LayerNorm(size.d_model)
        self.head = nn.Linear(size.d_model, size.vocab)

    def forward(self, tokens):
        seq = tokens.shape[1]
        causal_mask = torch.full((seq, seq), float("-inf"), device=tokens.device).triu(1)
        x = self.embed(tokens) + self.position[:seq]
        for block in self.blocks:
            x = block(x, causal_mask)
        return self.head(self.norm(x))


def next_token_loss(logits, targets):
    """Cross-entropy of the predicted next tokens (logits: batch x seq x vocab)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def build_model(size):
    """The same initial weights on every rank and every run."""
    torch.manual_seed(MODEL_SEED)
    return TinyLM(size)


class MarkovLanguage:
    """Batches of the synthetic language; batch (step, rank) is the same on every run and
    different for every rank, as a sharded data loader would give."""

    def __init__(self, size):
        self.size = size
        generator = torch.Generator().manual_seed(LANGUAGE_SEED)
        self.successors = torch.randint(0, size.vocab, (size.vocab, SUCCESSORS),
                                        generator=generator)

    def batch(self, step, rank, world_size):
        """(tokens, targets), each batch x seq_len int64 on the CPU; targets are the tokens
        shifted by one."""
        generator = torch.Generator().manual_seed(BATCH_SEEDS_FROM + step * world_size + rank)
        size = self.size
        token = torch.randint(0, size.vocab, (size.batch,), generator=generator)
        sequence = [token]
        for _ in range(size.seq_len):
            choice = torch.randint(0, SUCCESSORS, (size.batch,), generator=generator)
            token = self.successors[token, choice]
            sequence.append(token)
        sequence = torch.stack(sequence, dim=1)
        return sequence[:, :-1], sequence[:, 1:]

    def loss_floor(self):
        """The entropy of the chain: the loss of a model that learnt it perfectly (duplicate
        successors make it a little lower; this is the bound for distinct ones)."""
        return math.log(SUCCESSORS)
