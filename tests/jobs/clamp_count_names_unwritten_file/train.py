"""Fine-tunes a small classifier on shards/part-0.csv to part-4.csv after warm-starting its
feature scaling from shards/part-5.csv, a shard that lives only on the laptop. `--epochs 5` has
nothing to do with the file's name, though both say 5: the job fails on the platform at the
read, before any training, and nothing the dry run changes could have caused it."""
import argparse
import csv
import os

import torch
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset

SCALER_SHARD = "shards/part-5.csv"


def read_rows(path):
    with open(path, newline="") as f:
        return [[float(v) for v in row[:4]] + [int(row[4])] for row in list(csv.reader(f))[1:]]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()

    reference = torch.tensor([r[:4] for r in read_rows(SCALER_SHARD)])
    mean, std = reference.mean(0), reference.std(0) + 1e-6

    def shard(i):
        rows = read_rows(os.path.join("shards", "part-%d.csv" % i))
        x = (torch.tensor([r[:4] for r in rows]) - mean) / std
        return TensorDataset(x, torch.tensor([r[4] for r in rows]))

    data = ConcatDataset([shard(i) for i in range(5)])
    loader = DataLoader(data, batch_size=32, shuffle=True)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        torch.save(model.state_dict(), os.path.join(args.out, "epoch-%d.pt" % epoch))


if __name__ == "__main__":
    main()
