"""A GPT-2-small-sized decoder (12 layers, 768 wide, 12 heads, 124M parameters) trained on
1,024-token blocks of a tokenized corpus, 12 blocks a micro-batch and 40 micro-batches of
gradient accumulation per optimizer step, AdamW with warm-up and cosine decay, in the layout of
the well-known minimal GPT trainers (but with a DataLoader over the token file)."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Blocks(Dataset):
    """Fixed-length blocks of a token stream; here a synthetic one."""

    def __init__(self, tokens, block):
        self.tokens, self.block = tokens, block

    def __len__(self):
        return (len(self.tokens) - 1) // self.block

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.tokens[i * self.block:(i + 1) * self.block + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.heads = heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=50257, block=1024, layers=12, width=768, heads=12):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.size(1), device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=12)
    parser.add_argument("--accumulation", type=int, default=40)
    parser.add_argument("--max-iters", type=int, default=600000)
    parser.add_argument("--lr", type=float, default=6e-4)
    parser.add_argument("--out", default="out")
    args = parser.parse_args()

    tokens = np.random.default_rng(0).integers(0, 50257, size=4_000_000, dtype=np.uint16)
    loader = DataLoader(Blocks(tokens, 1024), batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = GPT().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    step, batches = 0, iter(loader)
    while step < args.max_iters:
        lr = args.lr * min(1.0, (step + 1) / 2000) * 0.5 * (1 + math.cos(math.pi * step / args.max_iters))
        for group in optimizer.param_groups:
            group["lr"] = lr
        for _ in range(args.accumulation):
            try:
                x, y = next(batches)
            except StopIteration:
                batches = iter(loader)
                x, y = next(batches)
            loss = model(x.cuda(), y.cuda()) / args.accumulation
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 2000 == 0:
            torch.save(model.state_dict(), os.path.join(args.out, "ckpt.pt"))
        step += 1


if __name__ == "__main__":
    main()
