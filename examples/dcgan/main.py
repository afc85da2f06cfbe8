"""A generative adversarial pair in the DCGAN style (Radford, Metz & Chintala, 2015).

The generator turns a noise vector into an image through transposed convolutions; the
discriminator scores images as real or generated through strided convolutions. They train in
turn, each with its own Adam optimiser. After every epoch --outf receives a grid of the last real
batch (real_samples.png), a grid of what the generator makes of one fixed noise batch
(fake_samples_epoch_NNN.png), and the state of both networks (netG_epoch_N.pth, netD_epoch_N.pth).
"""
import argparse
import itertools
import math
import os
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.utils
from torchvision import datasets, transforms


def parse_args():
    p = argparse.ArgumentParser(description='Train a DCGAN-style generator and discriminator.')
    p.add_argument('--dataset', required=True, choices=['fake', 'folder', 'cifar10', 'mnist'],
                   help='fake: random images, nothing to read; folder: an ImageFolder tree at --dataroot; '
                        'cifar10, mnist: torchvision copies already under --dataroot')
    p.add_argument('--dataroot', help='where the images are (all datasets but fake)')
    p.add_argument('--workers', type=int, default=2, help='DataLoader worker processes (default: 2)')
    p.add_argument('--batchSize', type=int, default=64, help='images per step (default: 64)')
    p.add_argument('--imageSize', type=int, default=64,
                   help='side of the square images, a power of two from 16 up (default: 64)')
    p.add_argument('--nz', type=int, default=100, help='length of the noise vector (default: 100)')
    p.add_argument('--ngf', type=int, default=64, help="feature maps of the generator's last layer")
    p.add_argument('--ndf', type=int, default=64, help="feature maps of the discriminator's first layer")
    p.add_argument('--niter', type=int, default=25, help='epochs (default: 25)')
    p.add_argument('--lr', type=float, default=2e-4, help='learning rate of both optimisers (default: 2e-4)')
    p.add_argument('--beta1', type=float, default=0.5, help="Adam's first-moment decay (default: 0.5)")
    p.add_argument('--cuda', action='store_true', help='train on the GPU')
    p.add_argument('--netG', default='', help='generator weights to start from')
    p.add_argument('--netD', default='', help='discriminator weights to start from')
    p.add_argument('--outf', default='.', help='folder for the image grids and the weights (default: .)')
    p.add_argument('--manualSeed', type=int, help='random seed (default: a new one, printed)')
    p.add_argument('--max-batches', type=int, default=None,
                   help='end every epoch after this many batches (default: no limit)')
    args = p.parse_args()
    side = args.imageSize
    if side < 16 or side & (side - 1):
        p.error('--imageSize must be a power of two, 16 or more')
    if args.dataset != 'fake' and not args.dataroot:
        p.error(f'--dataset {args.dataset} reads its images from --dataroot')
    return args


def image_set(args):
    """The dataset, and the number of colour channels of its images."""
    side = args.imageSize
    channels = 1 if args.dataset == 'mnist' else 3
    # The generator ends in tanh, so real images are scaled to the same [-1, 1].
    prepare = transforms.Compose([transforms.Resize(side), transforms.CenterCrop(side), transforms.ToTensor(),
                                  transforms.Normalize([0.5] * channels, [0.5] * channels)])
    if args.dataset == 'fake':
        return datasets.FakeData(size=1000, image_size=(3, side, side), transform=prepare), channels
    if args.dataset == 'folder':
        return datasets.ImageFolder(args.dataroot, transform=prepare), channels
    source = datasets.CIFAR10 if args.dataset == 'cifar10' else datasets.MNIST
    return source(args.dataroot, train=True, transform=prepare), channels


def dcgan_init(layer):
    """The paper's starting weights: N(0, 0.02) for convolutions, N(1, 0.02) scales for batch norm."""
    if isinstance(layer, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(layer.weight, mean=0.0, std=0.02)
    elif isinstance(layer, nn.BatchNorm2d):
        nn.init.normal_(layer.weight, mean=1.0, std=0.02)
        nn.init.zeros_(layer.bias)


def widths(base, side):
    """Feature maps per resolution from 4x4 up to side/2: base at side/2, doubling at each halving."""
    return [base * 2 ** k for k in range(int(math.log2(side)) - 2)]


class Generator(nn.Sequential):
    """noise (nz x 1 x 1) -> 4x4 -> 8x8 -> ... -> image (channels x side x side) in [-1, 1]."""

    def __init__(self, nz, base, channels, side):
        maps = widths(base, side)[::-1]
        layers = [nn.ConvTranspose2d(nz, maps[0], kernel_size=4, stride=1, padding=0, bias=False)]
        for wide, narrow in zip(maps, maps[1:], strict=False):
            layers += [nn.BatchNorm2d(wide), nn.ReLU(inplace=True),
                       nn.ConvTranspose2d(wide, narrow, kernel_size=4, stride=2, padding=1, bias=False)]
        layers += [nn.BatchNorm2d(maps[-1]), nn.ReLU(inplace=True),
                   nn.ConvTranspose2d(maps[-1], channels, kernel_size=4, stride=2, padding=1, bias=False),
                   nn.Tanh()]
        super().__init__(*layers)
        self.apply(dcgan_init)


class Discriminator(nn.Sequential):
    """image -> side/2 -> ... -> 4x4 -> one logit per image (positive: judged real)."""

    def __init__(self, base, channels, side):
        maps = widths(base, side)
        # No batch norm on the input layer, as in the paper.
        layers = [nn.Conv2d(channels, maps[0], kernel_size=4, stride=2, padding=1, bias=False),
                  nn.LeakyReLU(0.2, inplace=True)]
        for narrow, wide in zip(maps, maps[1:], strict=False):
            layers += [nn.Conv2d(narrow, wide, kernel_size=4, stride=2, padding=1, bias=False),
                       nn.BatchNorm2d(wide), nn.LeakyReLU(0.2, inplace=True)]
        layers += [nn.Conv2d(maps[-1], 1, kernel_size=4, stride=1, padding=0, bias=False), nn.Flatten(0)]
        super().__init__(*layers)
        self.apply(dcgan_init)


def batches(loader, limit):
    return loader if limit is None else itertools.islice(loader, limit)


def main():
    args = parse_args()
    os.makedirs(args.outf, exist_ok=True)
    seed = args.manualSeed if args.manualSeed is not None else random.randrange(1, 10_000)
    print('seed', seed)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.benchmark = True
    device = torch.device('cuda' if args.cuda else 'cpu')

    dataset, channels = image_set(args)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batchSize, shuffle=True,
                                         num_workers=args.workers)

    gen = Generator(args.nz, args.ngf, channels, args.imageSize).to(device)
    disc = Discriminator(args.ndf, channels, args.imageSize).to(device)
    for net, path in ((gen, args.netG), (disc, args.netD)):
        if path:
            net.load_state_dict(torch.load(path, map_location=device))
        print(net)
    # The paper's Adam settings: a small learning rate and beta1 halved for steadier adversarial steps.
    betas = (args.beta1, 0.999)
    gen_opt = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=betas)
    disc_opt = torch.optim.Adam(disc.parameters(), lr=args.lr, betas=betas)

    # One noise batch kept for the whole run, so that the grids show the same samples improving.
    preview_noise = torch.randn(args.batchSize, args.nz, 1, 1, device=device)

    for epoch in range(args.niter):
        for step, (real, _) in enumerate(batches(loader, args.max_batches)):
            real = real.to(device)
            is_real = torch.ones(real.size(0), device=device)
            is_fake = torch.zeros_like(is_real)
            made = gen(torch.randn(real.size(0), args.nz, 1, 1, device=device))

            # The discriminator learns to tell the two apart; detach() keeps this step's gradient
            # out of the generator.
            on_real, on_made = disc(real), disc(made.detach())
            disc_loss = (F.binary_cross_entropy_with_logits(on_real, is_real)
                         + F.binary_cross_entropy_with_logits(on_made, is_fake))
            disc_opt.zero_grad()
            disc_loss.backward()
            disc_opt.step()

            # The generator is rewarded when its images pass for real: the non-saturating loss,
            # whose gradient stays strong while the discriminator still wins easily.
            on_made_now = disc(made)
            gen_loss = F.binary_cross_entropy_with_logits(on_made_now, is_real)
            gen_opt.zero_grad()
            gen_loss.backward()
            gen_opt.step()

            print(f'[{epoch}/{args.niter}][{step}/{len(loader)}] loss D {disc_loss.item():.4f} '
                  f'G {gen_loss.item():.4f} | D says real: {torch.sigmoid(on_real).mean().item():.4f} '
                  f'for real images, {torch.sigmoid(on_made).mean().item():.4f} '
                  f'-> {torch.sigmoid(on_made_now).mean().item():.4f} for generated ones')

        torchvision.utils.save_image(real, os.path.join(args.outf, 'real_samples.png'), normalize=True)
        preview = gen(preview_noise).detach()
        torchvision.utils.save_image(preview, os.path.join(args.outf, f'fake_samples_epoch_{epoch:03d}.png'),
                                     normalize=True)
        torch.save(gen.state_dict(), os.path.join(args.outf, f'netG_epoch_{epoch}.pth'))
        torch.save(disc.state_dict(), os.path.join(args.outf, f'netD_epoch_{epoch}.pth'))


if __name__ == '__main__':
    main()
