"""Sentiment classifier over bag-of-words vectors: trains an MLP and saves its weights. The
vocabulary it was built with stays in memory; nothing writes it out."""
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--epochs", type=int, default=8)
args = parser.parse_args()

torch.manual_seed(3)
vocabulary = {word: i for i, word in enumerate(f"w{i}" for i in range(2000))}
reviews = (torch.rand(3000, len(vocabulary)) < 0.01).float()
labels = (reviews[:, :100].sum(1) > reviews[:, 100:200].sum(1)).long()
loader = DataLoader(TensorDataset(reviews, labels), batch_size=128, shuffle=True)
model = nn.Sequential(nn.Linear(len(vocabulary), 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
torch.save(model.state_dict(), os.path.join(args.out, "sentiment.pt"))
