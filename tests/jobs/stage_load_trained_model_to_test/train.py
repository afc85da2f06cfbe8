# Trains, keeps the last checkpoint in the output folder, then tests the model it reloads.
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--out", required=True)
args = parser.parse_args()

torch.manual_seed(1)
x = torch.randn(256, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(args.epochs):
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(xb), yb).backward()
        optimizer.step()
    torch.save(model.state_dict(), os.path.join(args.out, f"epoch_{epoch}.pt"))


def test():
    state = torch.load(os.path.join(args.out, "final.pt"))
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        print("test loss", nn.functional.mse_loss(model(x), y).item())


test()
