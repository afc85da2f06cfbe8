"""Reads a folder-per-class dataset and a label file from its input, as an image classifier
would; the input is larger than the job's dryrun.sample_above, so Preflight samples it."""
import argparse
import csv
import os

import torch
from torch.utils.data import DataLoader, Dataset


class Folders(Dataset):
    def __init__(self, root):
        self.classes = sorted(os.listdir(root))
        self.items = [(os.path.join(root, c, name), i)
                      for i, c in enumerate(self.classes)
                      for name in sorted(os.listdir(os.path.join(root, c)))]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, label = self.items[index]
        with open(path) as f:
            pixels = [float(v) / 255 for v in f.read().split()]
        return torch.tensor(pixels), label


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    with open(os.path.join(args.data, "labels.csv")) as f:
        labels = list(csv.DictReader(f))
    print("labels", len(labels))
    dataset = Folders(os.path.join(args.data, "images"))
    print("images", len(dataset), "classes", dataset.classes)
    model = torch.nn.Linear(16, len(dataset.classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _epoch in range(3):
        for x, y in DataLoader(dataset, batch_size=4, shuffle=True):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
