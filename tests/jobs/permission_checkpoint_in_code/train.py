"""Trains, then saves its checkpoint beside the code: the code folder is read-only on the
platform, so the save fails after training has already run."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))
    loader = DataLoader(data, batch_size=32)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save(model.state_dict(), "checkpoint_epoch{}.pt".format(epoch))


if __name__ == "__main__":
    main()
