"""Activity recognition from one accelerometer axis: a 1-D CNN + GRU over windows of 64
samples. Run from the experiment folder: it reads data/ and writes checkpoints/ and
log.txt relative to the current directory, so each run lives in its own folder."""
import argparse
import os
import shutil

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def read_split(path, labels):
    xs, ys = [], []
    with open(path) as f:
        for line in f:
            name, *values = line.strip().split(",")
            ys.append(labels.index(name))
            xs.append([float(v) for v in values])
    return TensorDataset(torch.tensor(xs).unsqueeze(1), torch.tensor(ys))


class ConvGRU(nn.Module):
    def __init__(self, num_classes, channels=32, hidden=64):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(1, channels, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(channels, channels, 5, padding=2, stride=2), nn.ReLU())
        self.gru = nn.GRU(channels, hidden, batch_first=True)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, x):
        h = self.conv(x).transpose(1, 2)
        _, last = self.gru(h)
        return self.out(last[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--export", default=None, help="copy the best checkpoint here at the end")
    args = parser.parse_args()

    with open("data/labels.txt") as f:
        labels = [line.strip() for line in f if line.strip()]
    train_set = read_split("data/train.csv", labels)
    val_set = read_split("data/val.csv", labels)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)

    os.makedirs("checkpoints", exist_ok=True)
    log = open("log.txt", "a")
    model = ConvGRU(len(labels))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = -1.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        acc = correct / len(val_set)
        print("epoch %2d loss %.3f val acc %.3f" % (epoch, loss.item(), acc), file=log, flush=True)
        print("epoch %2d loss %.3f val acc %.3f" % (epoch, loss.item(), acc), flush=True)
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "labels": labels, "epoch": epoch}, "checkpoints/best.pt")
    log.close()
    if args.export:
        shutil.copy("checkpoints/best.pt", os.path.join(args.export, "best.pt"))
        shutil.copy("log.txt", os.path.join(args.export, "log.txt"))
    print("best val acc %.3f" % best)


if __name__ == "__main__":
    main()
