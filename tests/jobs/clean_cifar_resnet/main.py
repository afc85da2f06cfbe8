"""Trains one of the CIFAR ResNets of resnet_cifar.py on an ImageFolder copy of CIFAR-10
(DATA/train and DATA/test): padded random crops and mirror images for training, SGD with
momentum and weight decay, the step size annealed along a cosine over all epochs. After each
epoch the test split is scored and the network is kept in CKPT_DIR/ckpt.pth whenever the score
beats the best so far; --resume continues from that file."""
import argparse
import os
import time

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

import resnet_cifar

# Per-channel mean and spread of the CIFAR-10 training pictures.
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def parse_args():
    p = argparse.ArgumentParser(description="CIFAR ResNet training")
    p.add_argument("--lr", type=float, default=0.1, help="step size at the start of the cosine")
    p.add_argument("--arch", default="resnet20", choices=sorted(resnet_cifar.DEPTHS))
    p.add_argument("--epochs", type=int, default=200, help="length of the cosine schedule")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--data-dir", default="./data/cifar10", help="folder with train/ and test/")
    p.add_argument("--ckpt-dir", default="./checkpoint", help="where ckpt.pth is kept")
    p.add_argument("--resume", "-r", action="store_true", help="start from CKPT_DIR/ckpt.pth")
    return p.parse_args()


def loaders(data_dir, batch_size):
    normalise = [transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)]
    augment = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()]
    train = datasets.ImageFolder(os.path.join(data_dir, "train"), transforms.Compose(augment + normalise))
    test = datasets.ImageFolder(os.path.join(data_dir, "test"), transforms.Compose(normalise))
    return (DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=2),
            DataLoader(test, batch_size=100, num_workers=2), train.classes)


def one_pass(net, loader, device, optimizer=None):
    """Mean loss and accuracy (%) over the loader; trains on it when given an optimizer."""
    loss_sum, right, count = 0.0, 0, 0
    for pictures, labels in loader:
        pictures, labels = pictures.to(device), labels.to(device)
        scores = net(pictures)
        loss = nn.functional.cross_entropy(scores, labels)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum += loss.item() * len(labels)
        right += (scores.argmax(1) == labels).sum().item()
        count += len(labels)
    return loss_sum / count, 100.0 * right / count


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader, classes = loaders(args.data_dir, args.batch_size)
    net = resnet_cifar.build(args.arch, len(classes)).to(device)
    if device.type == "cuda":
        net = nn.DataParallel(net)
        torch.backends.cudnn.benchmark = True
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    ckpt = os.path.join(args.ckpt_dir, "ckpt.pth")
    best, first = -1.0, 0
    if args.resume:
        saved = torch.load(ckpt, map_location=device)
        net.load_state_dict(saved["net"])
        best, first = saved["acc"], saved["epoch"] + 1
        print(f"resuming after epoch {saved['epoch']} (test accuracy {best:.2f}%)")

    for epoch in range(first, first + args.epochs):
        started = time.time()
        net.train()
        train_loss, train_acc = one_pass(net, train_loader, device, optimizer)
        net.eval()
        with torch.no_grad():
            test_loss, test_acc = one_pass(net, test_loader, device)
        cosine.step()
        print(f"epoch {epoch}: train loss {train_loss:.3f} acc {train_acc:.2f}% | "
              f"test loss {test_loss:.3f} acc {test_acc:.2f}% | {time.time() - started:.1f}s", flush=True)
        if test_acc > best:
            best = test_acc
            os.makedirs(args.ckpt_dir, exist_ok=True)
            torch.save({"net": net.state_dict(), "acc": best, "epoch": epoch}, ckpt)
            print(f"kept as {ckpt}")


if __name__ == "__main__":
    main()
