"""Trains a small classifier of tabular features with a compiled model (torch.compile, PyTorch 2),
validating each epoch and saving the weights of the best epoch."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(features, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def synthetic(rows, features, seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, features, generator=generator)
    return TensorDataset(x, (x[:, :4].sum(dim=1) > 0).long())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    train = DataLoader(synthetic(4096, 32, 1), batch_size=args.batch_size, shuffle=True, drop_last=True)
    val = DataLoader(synthetic(512, 32, 2), batch_size=256)

    model = Classifier(32, 128, 2).to(device)
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for inputs, labels in train:
            inputs, labels = inputs.to(device), labels.to(device)
            loss = F.cross_entropy(model(inputs), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for inputs, labels in val:
                correct += (model(inputs.to(device)).argmax(dim=1) == labels.to(device)).sum().item()
        accuracy = correct / len(val.dataset)
        print(f"epoch {epoch} loss {loss.item():.4f} val accuracy {accuracy:.3f}")
        if accuracy > best:
            best = accuracy
            os.makedirs(args.out, exist_ok=True)
            torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))


if __name__ == "__main__":
    main()
