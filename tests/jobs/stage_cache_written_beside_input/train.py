# A dataset that parses its CSV once and caches the tensors next to it for the next run.
import argparse
import csv
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Readings(Dataset):
    def __init__(self, root):
        cache = os.path.join(root, "readings.pt")
        if os.path.exists(cache):
            self.x, self.y = torch.load(cache)
            return
        with open(os.path.join(root, "readings.csv")) as f:
            rows = [[float(v) for v in row] for row in list(csv.reader(f))[1:]]
        data = torch.tensor(rows)
        self.x, self.y = data[:, :3], data[:, 3:]
        torch.save((self.x, self.y), cache)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()
loader = DataLoader(Readings(args.data), batch_size=16, shuffle=True)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for _epoch in range(args.epochs):
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(xb), yb).backward()
        optimizer.step()
