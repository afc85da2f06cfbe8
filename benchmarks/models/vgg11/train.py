"""Trains VGG-11 on synthetic CIFAR-sized images on the CPU, as CIFAR recipes adapt it: torchvision's
VGG-11 convolutions, global average pooling of their 512 maps and a classifier of 512-unit layers
in place of ImageNet's 7x7 pooling and 4096-unit layers (which alone hold 120 million weights);
SGD with momentum and weight decay 5e-4, the learning rate cut by 10 every 30 epochs. Prints each
training iteration's wall time."""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('-b', '--batch-size', type=int, default=16, help='images per iteration (default: 16)')
    p.add_argument('--image-size', type=int, default=32, help='side of the square images (default: 32)')
    p.add_argument('--classes', type=int, default=100, help='classes of the synthetic labels (default: 100)')
    p.add_argument('--samples', type=int, default=256, help='synthetic training images (default: 256)')
    p.add_argument('--iters', type=int, default=12, help='training iterations to run (default: 12)')
    p.add_argument('--lr', type=float, default=0.01, help='initial learning rate (default: 0.01)')
    p.add_argument('--momentum', type=float, default=0.9)
    p.add_argument('--wd', '--weight-decay', dest='weight_decay', type=float, default=5e-4)
    p.add_argument('-j', '--workers', type=int, default=0, help='DataLoader worker processes (default: 0)')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    return args


def synthetic_images(count, side, classes, seed):
    """Random images and labels made once up front, so that a batch costs next to nothing to load."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(count, 3, side, side, generator=generator)
    labels = torch.randint(0, classes, (count,), generator=generator)
    return TensorDataset(images, labels)


def train(model, loader, criterion, optimizer, scheduler, iters):
    """Runs `iters` iterations, over as many epochs as that takes. An iteration's time runs from the
    end of the previous one to the end of its optimizer step, so it includes fetching its batch."""
    model.train()
    done, epoch = 0, 0
    end = time.perf_counter()
    while done < iters:
        epoch += 1
        for images, target in loader:
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            now = time.perf_counter()
            done += 1
            print(f'iter {done} time {now - end:.6f}', flush=True)
            end = now
            if done == iters:
                break
        scheduler.step()
    print(f'epochs {epoch} loss {loss.item():.4f}')


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dataset = synthetic_images(args.samples, args.image_size, args.classes, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        drop_last=True)
    model = torchvision.models.vgg11(num_classes=args.classes)
    model.avgpool = nn.AdaptiveAvgPool2d(1)
    model.classifier = nn.Sequential(
        nn.Dropout(), nn.Linear(512, 512), nn.ReLU(True),
        nn.Dropout(), nn.Linear(512, 512), nn.ReLU(True),
        nn.Linear(512, args.classes),
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    parameters = sum(p.numel() for p in model.parameters())
    print(f'vgg11: {parameters} parameters, batch {args.batch_size}, {args.image_size}px')
    train(model, loader, criterion, optimizer, scheduler, args.iters)


if __name__ == '__main__':
    main()
