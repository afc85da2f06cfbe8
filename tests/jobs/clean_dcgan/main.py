"""A DCGAN for square RGB pictures. The generator grows a noise vector into a picture through
strided transposed convolutions; the critic shrinks a picture back to one logit. They take turns,
each with its own Adam. The flags keep the spellings DCGAN jobs are usually launched with
(--niter, --batchSize, --outf, ...), so a platform's command line carries over unchanged."""
import argparse
import os
import random

import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader
from torchvision import transforms


def read_options():
    p = argparse.ArgumentParser(description="Train a DCGAN on pictures")
    p.add_argument("--dataset", required=True, choices=("folder", "fake"),
                   help="folder: an ImageFolder tree under --dataroot; fake: random pictures")
    p.add_argument("--dataroot", help="root of the picture tree (--dataset folder)")
    p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    p.add_argument("--batchSize", type=int, default=64, help="pictures per step")
    p.add_argument("--imageSize", type=int, default=64, help="side in pixels: a power of two, 16 or more")
    p.add_argument("--nz", type=int, default=100, help="length of the noise vector")
    p.add_argument("--ngf", type=int, default=64, help="channels of the generator's widest-image layer")
    p.add_argument("--ndf", type=int, default=64, help="channels of the critic's first layer")
    p.add_argument("--niter", type=int, default=25, help="passes over the pictures")
    p.add_argument("--lr", type=float, default=2e-4, help="Adam's step size, the same for both networks")
    p.add_argument("--beta1", type=float, default=0.5, help="Adam's first-moment decay")
    p.add_argument("--cuda", action="store_true", help="train on the first GPU")
    p.add_argument("--outf", default=".", help="folder for the sample grids and the weights")
    p.add_argument("--manualSeed", type=int, help="seed of the generators (a random one when absent)")
    opts = p.parse_args()
    if opts.imageSize < 16 or opts.imageSize & (opts.imageSize - 1):
        p.error("--imageSize must be a power of two, 16 or more")
    if opts.dataset == "folder" and not opts.dataroot:
        p.error("--dataset folder needs --dataroot")
    return opts


def pictures(opts):
    # The generator ends in tanh, so real pictures are brought to [-1, 1] as well.
    to_tanh_range = [transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)]
    if opts.dataset == "fake":
        return torchvision.datasets.FakeData(image_size=(3, opts.imageSize, opts.imageSize),
                                             transform=transforms.Compose(to_tanh_range))
    fit = [transforms.Resize(opts.imageSize), transforms.CenterCrop(opts.imageSize)]
    return torchvision.datasets.ImageFolder(opts.dataroot, transform=transforms.Compose(fit + to_tanh_range))


def widths(base, side):
    """Channels from the 4x4 stage to the side/2 stage, narrowest last: [.., 4b, 2b, b]."""
    stages = side.bit_length() - 3  # how many doublings lead from 4 to side
    return [base * 2 ** k for k in reversed(range(stages))]


def generator(nz, base, side):
    chans = widths(base, side)
    layers = [nn.Unflatten(1, (nz, 1, 1)), nn.ConvTranspose2d(nz, chans[0], 4, 1, 0, bias=False),
              nn.BatchNorm2d(chans[0]), nn.ReLU(True)]
    for wide, narrow in zip(chans, chans[1:], strict=False):
        layers += [nn.ConvTranspose2d(wide, narrow, 4, 2, 1, bias=False), nn.BatchNorm2d(narrow),
                   nn.ReLU(True)]
    layers += [nn.ConvTranspose2d(chans[-1], 3, 4, 2, 1, bias=False), nn.Tanh()]
    return nn.Sequential(*layers)


def critic(base, side):
    chans = widths(base, side)[::-1]
    layers = [nn.Conv2d(3, chans[0], 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True)]
    for narrow, wide in zip(chans, chans[1:], strict=False):
        layers += [nn.Conv2d(narrow, wide, 4, 2, 1, bias=False), nn.BatchNorm2d(wide),
                   nn.LeakyReLU(0.2, True)]
    # A logit per picture; BCEWithLogitsLoss applies the sigmoid in a stable way.
    layers += [nn.Conv2d(chans[-1], 1, 4, 1, 0, bias=False), nn.Flatten(0)]
    return nn.Sequential(*layers)


def small_normal_init(module):
    """The DCGAN paper's start: convolutions from N(0, 0.02), batch-norm scales near 1."""
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


def main():
    opts = read_options()
    seed = opts.manualSeed if opts.manualSeed is not None else random.randrange(1, 10_000)
    print("seed:", seed)
    random.seed(seed)
    torch.manual_seed(seed)
    device = torch.device("cuda:0" if opts.cuda else "cpu")
    os.makedirs(opts.outf, exist_ok=True)

    loader = DataLoader(pictures(opts), batch_size=opts.batchSize, shuffle=True, num_workers=opts.workers)
    gen = generator(opts.nz, opts.ngf, opts.imageSize).to(device)
    disc = critic(opts.ndf, opts.imageSize).to(device)
    gen.apply(small_normal_init)
    disc.apply(small_normal_init)
    gen_opt = torch.optim.Adam(gen.parameters(), lr=opts.lr, betas=(opts.beta1, 0.999))
    disc_opt = torch.optim.Adam(disc.parameters(), lr=opts.lr, betas=(opts.beta1, 0.999))
    bce = nn.BCEWithLogitsLoss()
    probe = torch.randn(opts.batchSize, opts.nz, device=device)  # one noise batch for every grid

    for epoch in range(opts.niter):
        for step, (real, _) in enumerate(loader):
            real = real.to(device)
            is_real = torch.ones(len(real), device=device)
            fake = gen(torch.randn(len(real), opts.nz, device=device))

            # The critic learns to tell the two apart; detach() keeps this step out of gen.
            disc_opt.zero_grad()
            disc_loss = bce(disc(real), is_real) + bce(disc(fake.detach()), 1 - is_real)
            disc_loss.backward()
            disc_opt.step()

            # The generator is pushed towards pictures the critic takes for real ones.
            gen_opt.zero_grad()
            gen_loss = bce(disc(fake), is_real)
            gen_loss.backward()
            gen_opt.step()

            print(f"epoch {epoch + 1}/{opts.niter} step {step + 1}/{len(loader)}: "
                  f"critic {disc_loss.item():.3f}, generator {gen_loss.item():.3f}", flush=True)
            if step % 100 == 0:
                grid = os.path.join(opts.outf, f"probe_epoch{epoch:03d}.png")
                torchvision.utils.save_image(gen(probe).detach(), grid, normalize=True)

        for name, net in (("generator", gen), ("critic", disc)):
            torch.save(net.state_dict(), os.path.join(opts.outf, f"{name}_epoch{epoch}.pth"))


if __name__ == "__main__":
    main()
