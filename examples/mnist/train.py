"""A small MNIST-style CNN trained on synthetic digits, the way PyTorch's example is written:
several epochs of training, a test pass after each, a checkpoint and a final evaluation."""
import argparse
import itertools
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def synthetic_digits(count, seed):
    generator = torch.Generator().manual_seed(seed)
    images = torch.rand(count, 1, 28, 28, generator=generator)
    labels = torch.randint(0, 10, (count,), generator=generator)
    return TensorDataset(images, labels)


def batches(loader, limit):
    """The loader's batches, or only its first `limit` ones."""
    return loader if limit is None else itertools.islice(loader, limit)


def train(model, loader, optimizer, epoch, max_batches=None):
    model.train()
    for batch, (data, target) in enumerate(batches(loader, max_batches)):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch % 10 == 0:
            print("epoch {} batch {} loss {:.4f}".format(epoch, batch, loss.item()))


def test(model, loader, max_batches=None):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in batches(loader, max_batches):
            correct += model(data).argmax(dim=1).eq(target).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--save-dir", required=True)
    parser.add_argument("--max-batches", type=int, default=None,
                        help="stop each DataLoader loop after N batches (default: all)")
    args = parser.parse_args()

    train_loader = DataLoader(synthetic_digits(2048, 1), batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(synthetic_digits(512, 2), batch_size=256)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(1, args.epochs + 1):
        train(model, train_loader, optimizer, epoch, args.max_batches)
        print("epoch {} accuracy {:.3f}".format(epoch, test(model, test_loader, args.max_batches)))
    torch.save(model.state_dict(), os.path.join(args.save_dir, "mnist_cnn.pt"))
    print("final accuracy {:.3f}".format(test(model, test_loader, args.max_batches)))


if __name__ == "__main__":
    main()
