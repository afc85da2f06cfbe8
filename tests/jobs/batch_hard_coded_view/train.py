"""Speech-command classifier on log-mel frames, in the style of course assignments: the author
flattens each batch with the batch size written out, which holds because the loader drops the
last, short batch."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BATCH = 32


class Frames(Dataset):
    def __init__(self, count):
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        return torch.randn(1, 64, 100, generator=g), index % 12


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 16 * 25, 12)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 4)
        x = x.view(BATCH, -1)
        return self.fc(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    train = DataLoader(Frames(2000), batch_size=BATCH, shuffle=True, drop_last=True)
    test = DataLoader(Frames(320), batch_size=BATCH, drop_last=True)
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            x, y = x.cuda(), y.cuda()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test:
                correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
        print(f"epoch {epoch} loss {loss.item():.3f} accuracy {correct / 320:.3f}")
        torch.save(model.state_dict(), os.path.join(args.out, "kws.pt"))


if __name__ == "__main__":
    main()
