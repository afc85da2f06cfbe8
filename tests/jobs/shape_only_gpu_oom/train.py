"""Continued pre-training of a wide decoder on a lab's token shards: 1.4 billion parameters in
FP32 with AdamW, written on a workstation with a 48 GB card and submitted as is."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __init__(self, blocks, length):
        self.blocks, self.length = blocks, length

    def __len__(self):
        return self.blocks

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        tokens = torch.randint(0, 50304, (self.length + 1,), generator=g)
        return tokens[:-1], tokens[1:]


class Layer(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


class Decoder(nn.Module):
    def __init__(self, vocab=50304, width=4096, layers=6, heads=32, length=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.zeros(length, width))
        self.layers = nn.ModuleList(Layer(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)

    def forward(self, tokens):
        t = tokens.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf"), device=tokens.device), 1)
        x = self.embed(tokens) + self.position[:t]
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x) @ self.embed.weight.t()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    model = Decoder().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    loader = DataLoader(Shards(20000, 512), batch_size=args.batch_size, shuffle=True)
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            logits = model(x.cuda())
            loss = F.cross_entropy(logits.flatten(0, 1), y.cuda().flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
        torch.save(model.state_dict(), os.path.join(args.out, f"decoder-{epoch}.pt"))


if __name__ == "__main__":
    main()
