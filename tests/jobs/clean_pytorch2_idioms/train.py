"""A small causal transformer over random token streams, written as current PyTorch 2 scripts
are: the model is built directly on the device (torch.device as a context manager), attention is
scaled_dot_product_attention, the step runs under torch.amp.autocast with a torch.amp.GradScaler,
and the best weights are reloaded with torch.load(weights_only=True) for the final test."""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, width, heads, layers, context):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.zeros(1, context, width))
        self.blocks = nn.Sequential(*[Block(width, heads) for _ in range(layers)])
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens) + self.position[:, :tokens.shape[1]]))


def batches(count, batch, context, vocab, seed, device):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        tokens = torch.randint(vocab, (batch, context + 1), generator=generator)
        yield tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def evaluate(model, device, args):
    model.eval()
    total = 0.0
    with torch.no_grad(), torch.amp.autocast("cuda", dtype=torch.float16):
        for x, y in batches(args.eval_batches, args.batch_size, args.context, args.vocab, 1, device):
            total += F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten()).item()
    model.train()
    return total / args.eval_batches


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--out", default="out")
    args = parser.parse_args()

    device = torch.device("cuda")
    with device:
        model = TinyLM(args.vocab, 128, 4, 2, args.context)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    scaler = torch.amp.GradScaler("cuda")
    best = math.inf
    os.makedirs(args.out, exist_ok=True)
    for step, (x, y) in enumerate(batches(args.steps, args.batch_size, args.context, args.vocab, 0, device)):
        with torch.amp.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % args.eval_every == 0:
            val = evaluate(model, device, args)
            print(f"step {step} loss {loss.item():.3f} val {val:.3f}")
            if val < best:
                best = val
                torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))
    model.load_state_dict(torch.load(os.path.join(args.out, "best.pt"), weights_only=True))
    print(f"test loss {evaluate(model, device, args):.3f}")


if __name__ == "__main__":
    main()
