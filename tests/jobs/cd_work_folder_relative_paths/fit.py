"""Linear regression of a target on a few measurements, fitted with SGD."""
import argparse
import csv
import json

import torch
from torch import nn

TRAIN_FILE = "../data/train.csv"


def load(path):
    with open(path, newline="") as f:
        rows = [[float(v) for v in row] for row in csv.reader(f) if row and not row[0].startswith("x")]
    data = torch.tensor(rows)
    return data[:, :-1], data[:, -1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    features, target = load(TRAIN_FILE)
    model = nn.Linear(features.shape[1], 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        for start in range(0, len(features), 16):
            optimizer.zero_grad()
            loss = loss_fn(model(features[start:start + 16]), target[start:start + 16])
            loss.backward()
            optimizer.step()
        print("epoch %d loss %.4f" % (epoch, loss.item()))
    torch.save(model.state_dict(), "model.pt")
    with open("metrics.json", "w") as f:
        json.dump({"loss": loss.item()}, f)


if __name__ == "__main__":
    main()
