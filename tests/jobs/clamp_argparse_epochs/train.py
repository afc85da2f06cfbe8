"""A classifier whose epochs cost time the DataLoader cap cannot cut (a half-second pause per
epoch stands in for re-sampling the data set, logging and learning-rate bookkeeping): 500
epochs by default, four minutes even when each epoch is sampled to two batches. Preflight
clamps --epochs to 2 without an edit to the job, so the run passes through training,
validation after each epoch and a checkpoint in seconds (docs/harness.md "Clamping")."""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--save-dir", default=".")
    args = parser.parse_args()

    torch.manual_seed(0)
    x = torch.randn(512, 8)
    y = (x.sum(1) > 0).long()
    train = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=32, shuffle=True)
    val = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=32)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for inputs, labels in train:
            optimizer.zero_grad()
            F.cross_entropy(model(inputs), labels).backward()
            optimizer.step()
        time.sleep(0.5)
        model.eval()
        correct = 0
        with torch.no_grad():
            for inputs, labels in val:
                correct += (model(inputs).argmax(1) == labels).sum().item()
        print("epoch %d/%d validation accuracy %.2f" % (epoch + 1, args.epochs, correct / 128))
        torch.save(model.state_dict(), os.path.join(args.save_dir, "model.pt"))


if __name__ == "__main__":
    main()
