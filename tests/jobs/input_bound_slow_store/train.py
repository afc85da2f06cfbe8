import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RemoteRows(Dataset):
    """Rows fetched one at a time from a key-value store, each a round trip away."""

    def __init__(self, count, features, latency):
        self.count, self.features, self.latency = count, features, latency
        generator = torch.Generator().manual_seed(7)
        self.weights = torch.randn(features, generator=generator)

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        time.sleep(self.latency)
        row = torch.sin(torch.arange(self.features, dtype=torch.float32) * (index + 1))
        return row, int(row @ self.weights > 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.004)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rows = RemoteRows(4096, 32, args.latency)
    loader = DataLoader(rows, batch_size=args.batch_size, shuffle=True, num_workers=1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for features, labels in loader:
            features, labels = features.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
