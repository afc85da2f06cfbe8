"""Digit classification with DistributedDataParallel, as a PyTorchJob's Master runs it: the
operator's MASTER_ADDR, WORLD_SIZE and RANK, a CSV dataset on a claim, checkpoints per epoch."""
import argparse
import csv
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def load(folder):
    rows = []
    with open(os.path.join(folder, "train.csv")) as f:
        for row in csv.reader(f):
            rows.append([float(v) for v in row])
    data = torch.tensor(rows)
    return TensorDataset(data[:, 1:], data[:, 0].long())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--checkpoints", required=True)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("gloo", init_method="env://")
    dataset = load(args.data)
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), num_workers=2)
    layers = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    model = DistributedDataParallel(layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for features, labels in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), os.path.join(args.checkpoints, f"epoch-{epoch}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
