"""Turns accuracy into a "loss" through .item(), which leaves the autograd graph, then
calls backward() on it: PyTorch refuses, since the tensor has no gradient function."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(data, batch_size=16):
        predictions = model(x).argmax(1)
        accuracy_loss = torch.tensor(1.0 - (predictions == y).float().mean().item())
        optimizer.zero_grad()
        accuracy_loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
