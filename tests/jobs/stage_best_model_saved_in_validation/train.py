# Keeps the best model as it validates, as many training scripts do.
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

torch.manual_seed(0)
x = torch.randn(512, 8)
y = (x.sum(dim=1, keepdim=True) > 0).float()
train_loader = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=args.batch_size, shuffle=True)
val_loader = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=args.batch_size)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.BCEWithLogitsLoss()
best = float("inf")


def validate(epoch):
    global best
    model.eval()
    total = 0.0
    with torch.no_grad():
        for xb, yb in val_loader:
            total += loss_fn(model(xb), yb).item()
            if total < best:
                best = total
                torch.save(model.state_dict(), "best_model.pt")
    print(f"epoch {epoch}: validation loss {total:.4f}")


for epoch in range(args.epochs):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss_fn(model(xb), yb).backward()
        optimizer.step()
    validate(epoch)
