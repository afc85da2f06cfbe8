"""A tabular regression job with every stage: CSV data from the platform's input mount read by
DataLoader workers, several epochs with validation, a checkpoint per epoch, a final
evaluation, and predictions written to an output folder."""
import argparse
import csv
import os

import torch
from torch.utils.data import DataLoader, Dataset, random_split


class Houses(Dataset):
    def __init__(self, path):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        self.x = torch.tensor([[float(r["rooms"]), float(r["area"]), float(r["age"])] for r in rows])
        self.y = torch.tensor([[float(r["price"])] for r in rows])
        self.x = (self.x - self.x.mean(0)) / self.x.std(0)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def run_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


def mean_error(model, loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += (model(x) - y).abs().sum().item()
            count += len(y)
    return total / count


def predict(model, dataset, path):
    model.eval()
    with torch.no_grad(), open(path, "w") as out:
        for x, _ in DataLoader(dataset, batch_size=64):
            for value in model(x).squeeze(1).tolist():
                out.write("{:.2f}\n".format(value))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()

    dataset = Houses(os.path.join(args.data, "houses.csv"))
    train_set, val_set, test_set = random_split(dataset, [400, 100, 100], torch.Generator().manual_seed(0))
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2)
    val_loader = DataLoader(val_set, batch_size=50)
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        run_epoch(model, train_loader, optimizer)
        print("epoch", epoch, "validation error", round(mean_error(model, val_loader), 2))
        torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    print("test error", round(mean_error(model, DataLoader(test_set, batch_size=50)), 2))
    predict(model, test_set, os.path.join(args.out, "predictions.txt"))


if __name__ == "__main__":
    main()
