"""Trains and evaluates fine; only the prediction step at the very end maps class indices to
names with a table that misses one class, so the failure costs the whole run."""
import torch
from torch.utils.data import DataLoader, TensorDataset

CLASS_NAMES = {0: "negative", 1: "neutral"}  # the third class was added later


def predict(model, loader):
    model.eval()
    names = []
    with torch.no_grad():
        for (x,) in loader:
            names.extend(CLASS_NAMES[i] for i in model(x).argmax(1).tolist())
    return names


def main():
    torch.manual_seed(0)
    x, y = torch.randn(300, 6), torch.randint(0, 3, (300,))
    model = torch.nn.Linear(6, 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _epoch in range(5):
        model.train()
        for xb, yb in DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True):
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    unlabeled = DataLoader(TensorDataset(torch.randn(64, 6) * 3), batch_size=64)
    print(predict(model, unlabeled)[:5])


if __name__ == "__main__":
    main()
