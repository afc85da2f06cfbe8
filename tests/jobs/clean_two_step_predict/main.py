"""Step one of the job: trains the sub-pixel network of espcn.py to enlarge the luma of the
pictures in --data/train by --upscale_factor, reports the mean PSNR on --data/test after every
epoch, and pickles the whole network to --out/model_epoch_N.pth each epoch, the form
super_resolve.py (step two) loads without knowing the architecture's arguments."""
import argparse
import math
import os

import torch
from torch import nn
from torch.utils.data import DataLoader

from espcn import SubPixelNet
from lowres_pairs import LowResPairs


def parse_args():
    p = argparse.ArgumentParser(description="Train a single-image super-resolution network")
    p.add_argument("--data", required=True, help="folder holding train/ and test/ picture folders")
    p.add_argument("--upscale_factor", type=int, required=True, help="how many times larger the output is")
    p.add_argument("--crop_size", type=int, default=256, help="side of the centred crop of each picture")
    p.add_argument("--batchSize", type=int, default=64, help="pictures per training step")
    p.add_argument("--testBatchSize", type=int, default=10, help="pictures per test batch")
    p.add_argument("--nEpochs", type=int, default=2, help="passes over the training pictures")
    p.add_argument("--lr", type=float, default=0.01, help="Adam's step size")
    p.add_argument("--cuda", action="store_true", help="train on the GPU (an error when there is none)")
    p.add_argument("--threads", type=int, default=4, help="DataLoader worker processes")
    p.add_argument("--seed", type=int, default=123, help="seed of torch's generator")
    p.add_argument("--out", default=".", help="folder for the model_epoch_N.pth files")
    return p.parse_args()


def psnr(mse):
    # Pixels are in [0, 1], so the peak signal is 1 and PSNR is -10 log10(mse).
    return -10 * math.log10(mse)


def fit_one_epoch(net, loader, loss_fn, optimizer, device, epoch):
    net.train()
    losses = []
    for step, (small, full) in enumerate(loader, start=1):
        small, full = small.to(device), full.to(device)
        optimizer.zero_grad()
        loss = loss_fn(net(small), full)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(f"epoch {epoch} step {step}/{len(loader)}: mse {losses[-1]:.5f}")
    print(f"epoch {epoch} done: mean mse {sum(losses) / len(losses):.5f}")


def test_psnr(net, loader, loss_fn, device):
    net.eval()
    scores = []
    with torch.no_grad():
        for small, full in loader:
            scores.append(psnr(loss_fn(net(small.to(device)), full.to(device)).item()))
    return sum(scores) / len(scores)


def main():
    args = parse_args()
    if args.cuda and not torch.cuda.is_available():
        raise SystemExit("--cuda was given, but there is no GPU")
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if args.cuda else "cpu")

    train_set = LowResPairs(os.path.join(args.data, "train"), args.crop_size, args.upscale_factor)
    test_set = LowResPairs(os.path.join(args.data, "test"), args.crop_size, args.upscale_factor)
    train_loader = DataLoader(train_set, batch_size=args.batchSize, shuffle=True, num_workers=args.threads)
    test_loader = DataLoader(test_set, batch_size=args.testBatchSize, num_workers=args.threads)
    print(f"{len(train_set)} training and {len(test_set)} test pictures")

    net = SubPixelNet(args.upscale_factor).to(device)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    for epoch in range(1, args.nEpochs + 1):
        fit_one_epoch(net, train_loader, loss_fn, optimizer, device, epoch)
        print(f"epoch {epoch}: test PSNR {test_psnr(net, test_loader, loss_fn, device):.2f} dB")
        path = os.path.join(args.out, f"model_epoch_{epoch}.pth")
        torch.save(net, path)
        print("wrote", path)


if __name__ == "__main__":
    main()
