"""A digit classifier of the kind people first send to a GPU platform: it insists on a CUDA
device, gives its DataLoaders pinned memory and a worker, scores a test split after every
epoch and saves the weights at the end. Random 28x28 pictures with random labels stand in for
the digits (no download in the job), so only the mechanics matter, not the accuracy."""
import argparse
import os

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset


def small_convnet():
    # Two 3x3 convolutions and a 2x2 pooling leave 64 maps of 12x12 from a 28x28 picture.
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout(0.25), nn.Flatten(), nn.Linear(64 * 12 * 12, 128), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(128, 10))


def noise_digits(count, seed):
    g = torch.Generator().manual_seed(seed)
    pictures = torch.randn(count, 1, 28, 28, generator=g)
    return TensorDataset(pictures, torch.randint(0, 10, (count,), generator=g))


def run_training(net, loader, optimizer, device, epoch, every):
    net.train()
    for step, (pictures, digits) in enumerate(loader):
        pictures, digits = pictures.to(device, non_blocking=True), digits.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = F.cross_entropy(net(pictures), digits)
        loss.backward()
        optimizer.step()
        if step % every == 0:
            print(f"epoch {epoch}: {step * len(pictures)}/{len(loader.dataset)} pictures, "
                  f"loss {loss.item():.4f}", flush=True)


def run_test(net, loader, device):
    net.eval()
    loss_sum, right = 0.0, 0
    with torch.no_grad():
        for pictures, digits in loader:
            pictures, digits = pictures.to(device), digits.to(device)
            scores = net(pictures)
            loss_sum += F.cross_entropy(scores, digits, reduction="sum").item()
            right += (scores.argmax(1) == digits).sum().item()
    n = len(loader.dataset)
    print(f"test: loss {loss_sum / n:.4f}, {right}/{n} right")


def main():
    p = argparse.ArgumentParser(description="Digit classifier for one GPU")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--test-batch-size", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=14)
    p.add_argument("--lr", type=float, default=1.0, help="Adadelta's step size")
    p.add_argument("--gamma", type=float, default=0.7, help="step size factor after each epoch")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log-interval", type=int, default=10, help="steps between progress lines")
    p.add_argument("--save-dir", default=".", help="where mnist_cnn.pt goes")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this job needs a GPU")
    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    print(f"GPU: {torch.cuda.get_device_name(device)}, {props.total_memory // 2 ** 20} MiB")

    on_gpu = {"num_workers": 1, "pin_memory": True, "shuffle": True}
    train_loader = DataLoader(noise_digits(6000, 0), batch_size=args.batch_size, **on_gpu)
    test_loader = DataLoader(noise_digits(1000, 1), batch_size=args.test_batch_size, **on_gpu)
    net = small_convnet().to(device)
    optimizer = torch.optim.Adadelta(net.parameters(), lr=args.lr)
    decay = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        run_training(net, train_loader, optimizer, device, epoch, args.log_interval)
        run_test(net, test_loader, device)
        decay.step()
    torch.save(net.state_dict(), os.path.join(args.save_dir, "mnist_cnn.pt"))


if __name__ == "__main__":
    main()
