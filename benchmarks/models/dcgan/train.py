"""Trains a DCGAN on the CPU, as the DCGAN paper and PyTorch's example do: a generator of
transposed convolutions with batch norm and ReLU, a discriminator of strided convolutions with
batch norm and LeakyReLU, binary cross-entropy, one Adam optimizer each (lr 2e-4, beta1 0.5). Each
iteration updates the discriminator on a real and a generated batch, then the generator. The real
images are synthetic; prints each training iteration's wall time."""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('-b', '--batch-size', type=int, default=16, help='images per iteration (default: 16)')
    p.add_argument('--image-size', type=int, default=64, choices=[64], help='side of the images (64)')
    p.add_argument('--nz', type=int, default=100, help='size of the latent vector (default: 100)')
    p.add_argument('--ngf', type=int, default=32, help="generator's feature maps (default: 32)")
    p.add_argument('--ndf', type=int, default=32, help="discriminator's feature maps (default: 32)")
    p.add_argument('--samples', type=int, default=256, help='synthetic training images (default: 256)')
    p.add_argument('--iters', type=int, default=12, help='training iterations to run (default: 12)')
    p.add_argument('--lr', type=float, default=0.0002)
    p.add_argument('--beta1', type=float, default=0.5)
    p.add_argument('--seed', type=int, default=999)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    return args


def init_weights(module):
    """The DCGAN paper's initialisation: N(0, 0.02) convolutions, N(1, 0.02) batch-norm scales."""
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


class Generator(nn.Module):
    """A latent vector (nz x 1 x 1) up to a 3 x 64 x 64 image in [-1, 1]."""

    def __init__(self, nz, ngf):
        super().__init__()

        def up(cin, cout, stride, padding):
            return [nn.ConvTranspose2d(cin, cout, 4, stride, padding, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(True)]

        self.main = nn.Sequential(
            *up(nz, ngf * 8, 1, 0),        # 4 x 4
            *up(ngf * 8, ngf * 4, 2, 1),   # 8 x 8
            *up(ngf * 4, ngf * 2, 2, 1),   # 16 x 16
            *up(ngf * 2, ngf, 2, 1),       # 32 x 32
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False),
            nn.Tanh(),                     # 64 x 64
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    """A 3 x 64 x 64 image down to the probability that it is real."""

    def __init__(self, ndf):
        super().__init__()

        def down(cin, cout, norm=True):
            layers = [nn.Conv2d(cin, cout, 4, 2, 1, bias=False)]
            if norm:
                layers.append(nn.BatchNorm2d(cout))
            return layers + [nn.LeakyReLU(0.2, inplace=True)]

        self.main = nn.Sequential(
            *down(3, ndf, norm=False),     # 32 x 32
            *down(ndf, ndf * 2),           # 16 x 16
            *down(ndf * 2, ndf * 4),       # 8 x 8
            *down(ndf * 4, ndf * 8),       # 4 x 4
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, images):
        return self.main(images).view(-1)


def synthetic_images(count, side, seed):
    """Random images in the generator's range, made once up front, so that a batch costs next to
    nothing to load."""
    generator = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.rand(count, 3, side, side, generator=generator) * 2 - 1)


def train(net_g, net_d, loader, criterion, opt_g, opt_d, args):
    """Runs args.iters iterations, over as many epochs as that takes. An iteration's time runs from
    the end of the previous one to the end of the generator's optimizer step, so it includes
    fetching its batch and the discriminator's update."""
    net_g.train()
    net_d.train()
    done, epoch = 0, 0
    end = time.perf_counter()
    while done < args.iters:
        epoch += 1
        for (real,) in loader:
            batch = real.size(0)
            real_label = torch.full((batch,), 1.0)
            fake_label = torch.full((batch,), 0.0)

            # (1) The discriminator: maximise log(D(x)) + log(1 - D(G(z))).
            net_d.zero_grad()
            err_d_real = criterion(net_d(real), real_label)
            err_d_real.backward()
            noise = torch.randn(batch, args.nz, 1, 1)
            fake = net_g(noise)
            err_d_fake = criterion(net_d(fake.detach()), fake_label)
            err_d_fake.backward()
            opt_d.step()

            # (2) The generator: maximise log(D(G(z))), the discriminator's verdict on the same fakes.
            net_g.zero_grad()
            err_g = criterion(net_d(fake), real_label)
            err_g.backward()
            opt_g.step()

            now = time.perf_counter()
            done += 1
            print(f'iter {done} time {now - end:.6f}', flush=True)
            end = now
            if done == args.iters:
                break
    print(f'epochs {epoch} loss_D {(err_d_real + err_d_fake).item():.4f} loss_G {err_g.item():.4f}')


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dataset = synthetic_images(args.samples, args.image_size, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    net_g, net_d = Generator(args.nz, args.ngf), Discriminator(args.ndf)
    net_g.apply(init_weights)
    net_d.apply(init_weights)
    criterion = nn.BCELoss()
    opt_d = torch.optim.Adam(net_d.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    opt_g = torch.optim.Adam(net_g.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    sizes = [sum(p.numel() for p in net.parameters()) for net in (net_g, net_d)]
    print(f'dcgan: {sizes[0]} + {sizes[1]} parameters, batch {args.batch_size}, {args.image_size}px')
    train(net_g, net_d, loader, criterion, opt_g, opt_d, args)


if __name__ == '__main__':
    main()
