"""A multi-GPU training script written the usual way: DataParallel when there is more than
one GPU, and a checkpoint of `model.module`, which exists only when the model was wrapped.
With one GPU the save line fails with AttributeError, hours into a run on the platform."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print("GPUs:", torch.cuda.device_count(),
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
    torch.manual_seed(0)
    x, y = torch.randn(512, 20), torch.randint(0, 4, (512,))
    loader = DataLoader(TensorDataset(x, y), batch_size=32 * max(1, torch.cuda.device_count()), shuffle=True)

    model = Net()
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
        model = nn.DataParallel(model)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    for epoch in range(args.epochs):
        model.train()
        for inputs, labels in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
        print("epoch", epoch, "loss", round(loss.item(), 4))
        torch.save(model.module.state_dict(), os.path.join(args.out, "model_%d.pt" % epoch))


if __name__ == "__main__":
    main()
