"""Leaf-disease classifier: a small CNN trained on 64 px crops, and a final test on the
held-out photos, whose transform the author forgot to crop, so they come at 96 px."""
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Photos(Dataset):
    def __init__(self, count, size):
        self.count, self.size = count, size

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        return torch.rand(3, self.size, self.size, generator=g), index % 5


def build():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 16 * 16, 5))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    train = DataLoader(Photos(1200, 64), batch_size=64, shuffle=True)
    test = DataLoader(Photos(300, 96), batch_size=100)
    model = build().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images.cuda()), labels.cuda()).backward()
            optimizer.step()
        torch.save(model.state_dict(), os.path.join(args.out, f"leaves-{epoch}.pt"))
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in test:
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum().item()
    print(f"test accuracy {correct / 300:.3f}")


if __name__ == "__main__":
    main()
