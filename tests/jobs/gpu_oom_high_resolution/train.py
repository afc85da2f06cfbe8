import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Tiles(Dataset):
    """Synthetic 512x512 aerial tiles with a binary mask."""

    def __init__(self, count, size):
        self.count, self.size = count, size

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        image = torch.rand(3, self.size, self.size, generator=generator)
        mask = (image.mean(0, keepdim=True) > 0.5).float()
        return image, mask


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(block(3, 16), block(16, 16))
        self.head = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        return self.head(self.enc(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(Tiles(600, args.size), batch_size=args.batch_size, shuffle=True)
    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for image, mask in loader:
            image, mask = image.to(device), mask.to(device)
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(image), mask)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
        torch.save(model.state_dict(), f"{args.out}/segmenter.pt")


if __name__ == "__main__":
    main()
