"""ImageNet classification with a ResNet-50 at 224 px, in the layout of the classic reference
trainers: a folder dataset (here synthetic images, decoded per item), SGD with momentum, a step
schedule, validation every epoch and a checkpoint of the best accuracy."""
import argparse
import os

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, count, size, classes=1000):
        self.count, self.size, self.classes = count, size, classes

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        return torch.rand(3, self.size, self.size, generator=g), index % self.classes


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            correct += (model(images).argmax(1) == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    device = torch.device("cuda")
    train = DataLoader(Images(1_281_167, 224), batch_size=args.batch_size, shuffle=True,
                       num_workers=args.workers, pin_memory=True, drop_last=True)
    val = DataLoader(Images(50_000, 224), batch_size=args.batch_size, num_workers=args.workers)
    model = torchvision.models.resnet50(weights=None).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for i, (images, labels) in enumerate(train):
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i % 100 == 0:
                print(f"epoch {epoch} batch {i} loss {loss.item():.3f}")
        scheduler.step()
        top1 = accuracy(model, val, device)
        if top1 > best:
            best = top1
            torch.save({"epoch": epoch, "model": model.state_dict()}, os.path.join(args.out, "best.pth"))
        print(f"epoch {epoch} top-1 {top1:.3f}")


if __name__ == "__main__":
    main()
