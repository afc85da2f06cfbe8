"""Reads its data from where it lives on the author's laptop: fine locally, missing on the
platform, where only the job's inputs are mounted."""
import torch
from torch.utils.data import DataLoader, Dataset

DATA_FILE = "/home/alice/datasets/digits/train.csv"


class CsvDigits(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [line.split(",") for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        row = self.rows[index]
        return torch.tensor([float(v) for v in row[1:]]), int(row[0])


def main():
    dataset = CsvDigits(DATA_FILE)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for data, target in loader:
        loss = torch.nn.functional.cross_entropy(model(data), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
