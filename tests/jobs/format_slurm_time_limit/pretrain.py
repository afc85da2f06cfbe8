"""Character-level language model pretraining on a plain-text corpus, step-counted."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--corpus", required=True)
parser.add_argument("--max-steps", type=int, default=1000)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--context", type=int, default=64)
args = parser.parse_args()


class Windows(Dataset):
    """Every window of `context` characters, with the window one character on as its target."""

    def __init__(self, text, context):
        self.codes = torch.tensor([min(ord(c), 255) for c in text], dtype=torch.long)
        self.context = context

    def __len__(self):
        return len(self.codes) - self.context - 1

    def __getitem__(self, i):
        chunk = self.codes[i:i + self.context + 1]
        return chunk[:-1], chunk[1:]


class CharLM(nn.Module):
    def __init__(self, width=128, layers=2, heads=4):
        super().__init__()
        self.embed = nn.Embedding(256, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(width, 256)

    def forward(self, x):
        return self.head(self.body(self.embed(x)))


with open(args.corpus, encoding="utf-8") as f:
    corpus = f.read()
loader = DataLoader(Windows(corpus, args.context), batch_size=args.batch_size, shuffle=True, num_workers=2)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = CharLM().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

step = 0
while step < args.max_steps:
    for x, y in loader:
        logits = model(x.to(device))
        loss = nn.functional.cross_entropy(logits.reshape(-1, 256), y.to(device).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 1000 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
        if step >= args.max_steps:
            break
