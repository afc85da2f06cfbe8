"""A character-level GPT trained on one text file, in a plain loop: no Lightning, no epochs,
just optimizer steps until --max-steps, with a cosine learning-rate schedule after warm-up,
the loss estimated on both splits every --eval-interval steps and a checkpoint when the
validation loss improves."""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="data/input.txt")
parser.add_argument("--out-dir", default="out")
parser.add_argument("--max-steps", type=int, default=5000)
parser.add_argument("--eval-interval", type=int, default=250)
parser.add_argument("--eval-iters", type=int, default=200)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--block-size", type=int, default=256)
parser.add_argument("--n-layer", type=int, default=6)
parser.add_argument("--n-head", type=int, default=6)
parser.add_argument("--n-embd", type=int, default=384)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--min-lr", type=float, default=1e-4)
parser.add_argument("--warmup-steps", type=int, default=100)
parser.add_argument("--grad-clip", type=float, default=1.0)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
args = parser.parse_args()

torch.manual_seed(1337)
os.makedirs(args.out_dir, exist_ok=True)

with open(args.data, "r", encoding="utf-8") as f:
    text = f.read()
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
data = np.array([stoi[c] for c in text], dtype=np.int64)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
print("%d characters, vocabulary of %d" % (len(data), len(chars)))


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - args.block_size - 1, (args.batch_size,))
    x = torch.stack([torch.from_numpy(d[i:i + args.block_size]) for i in ix.tolist()])
    y = torch.stack([torch.from_numpy(d[i + 1:i + 1 + args.block_size]) for i in ix.tolist()])
    return x.to(args.device), y.to(args.device)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout, block_size):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = nn.MultiheadAttention(n_embd, n_head, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))
        self.register_buffer("mask",
                             torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        t = x.size(1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=self.mask[:t, :t], need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, dropout, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.blocks(self.drop(self.tok(idx) + self.pos(pos)))
        logits = self.head(self.ln_f(x))
        loss = (None if targets is None
                else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1)))
        return logits, loss


model = GPT(len(chars), args.block_size, args.n_layer, args.n_head, args.n_embd, args.dropout).to(args.device)
print("%.2fM parameters" % (sum(p.numel() for p in model.parameters()) / 1e6))
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.1)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(args.eval_iters)
        for k in range(args.eval_iters):
            X, Y = get_batch(split)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


def get_lr(step):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * min(1.0, progress)))


step = 0
best_val_loss = float("inf")
t0 = time.time()
X, Y = get_batch("train")
while step < args.max_steps:
    for group in optimizer.param_groups:
        group["lr"] = get_lr(step)

    if step % args.eval_interval == 0 or step == args.max_steps - 1:
        losses = estimate_loss()
        print("step %d: train loss %.4f, val loss %.4f" % (step, losses["train"], losses["val"]), flush=True)
        if losses["val"] < best_val_loss:
            best_val_loss = losses["val"]
            if step > 0:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "step": step, "best_val_loss": best_val_loss, "args": vars(args),
                            "chars": chars}, os.path.join(args.out_dir, "ckpt.pt"))

    _, loss = model(X, Y)
    X, Y = get_batch("train")  # prefetch the next batch while the backward runs
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
    optimizer.step()

    if step % 10 == 0:
        print("iter %d: loss %.4f, %.0f ms/iter" % (step, loss.item(), (time.time() - t0) * 100), flush=True)
    t0 = time.time()
    step += 1
