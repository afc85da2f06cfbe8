"""A variational autoencoder of MNIST digits (Kingma & Welling, "Auto-Encoding Variational Bayes").

An encoder maps each 28x28 digit to the mean and log-variance of a Gaussian over a small latent
space; a decoder maps a point of that space back to pixel intensities. Training minimises the
negative evidence lower bound: the reconstruction's binary cross-entropy plus the KL divergence of
the encoder's Gaussian from the standard normal prior. After each epoch the test loss is printed
and --results receives reconstruction_N.png (test digits over their reconstructions) and
sample_N.png (digits decoded from prior samples); vae.pt holds the final weights.

--data is read as is (DATA/MNIST/raw, torchvision's layout): nothing is downloaded.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image

SIDE = 28
LATENT = 20


def parse_args():
    p = argparse.ArgumentParser(description='Train a variational autoencoder on MNIST.')
    p.add_argument('--data', default='../data', metavar='DIR',
                   help='folder holding MNIST/raw with the four IDX files (default: ../data)')
    p.add_argument('--results', default='results', metavar='DIR',
                   help='folder for the image grids and vae.pt (default: results)')
    p.add_argument('--epochs', type=int, default=10, metavar='N', help='passes over the training digits')
    p.add_argument('--batch-size', type=int, default=128, metavar='N', help='digits per step (default: 128)')
    p.add_argument('--log-interval', type=int, default=10, metavar='N',
                   help='print the loss every N training batches (default: 10)')
    p.add_argument('--workers', type=int, default=None, metavar='N',
                   help='DataLoader worker processes (default: 1 on a GPU, 0 on the CPU)')
    p.add_argument('--no-cuda', action='store_true', help='stay on the CPU even when a GPU is visible')
    p.add_argument('--seed', type=int, default=1, help='random seed (default: 1)')
    return p.parse_args()


class DigitVAE(nn.Module):
    def __init__(self, pixels=SIDE * SIDE, hidden=400, latent=LATENT):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(pixels, hidden), nn.ReLU())
        # One layer yields both halves of the posterior: mean, then log-variance.
        self.posterior = nn.Linear(hidden, 2 * latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, pixels), nn.Sigmoid())

    def forward(self, digits):
        mean, log_var = self.posterior(self.encoder(digits)).chunk(2, dim=1)
        # The reparameterisation: z is a deterministic function of (mean, log_var) and noise drawn
        # apart from them, so the gradient reaches the encoder through the sample.
        z = mean + torch.randn_like(mean) * (0.5 * log_var).exp()
        return self.decoder(z), mean, log_var


def negative_elbo(decoded, digits, mean, log_var):
    """Loss summed over the batch: -E[log p(x|z)] + KL(N(mean, var) || N(0, 1)), the latter in closed form."""
    reconstruction = F.binary_cross_entropy(decoded, digits.flatten(1), reduction='sum')
    divergence = 0.5 * (mean.square() + log_var.exp() - log_var - 1).sum()
    return reconstruction + divergence


def train_epoch(model, loader, optimiser, device, epoch, log_interval):
    model.train()
    total = 0.0
    for n, (digits, _) in enumerate(loader, 1):
        digits = digits.to(device)
        decoded, mean, log_var = model(digits)
        loss = negative_elbo(decoded, digits, mean, log_var)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        total += loss.item()
        if n == 1 or n % log_interval == 0:
            print(f'Train Epoch {epoch}: batch {n}/{len(loader)}, {loss.item() / len(digits):.3f} per digit')
    print(f'====> epoch {epoch}: mean training loss {total / len(loader.dataset):.4f} per digit')


@torch.no_grad()
def test_epoch(model, loader, device, epoch, results):
    model.eval()
    total = 0.0
    for n, (digits, _) in enumerate(loader, 1):
        digits = digits.to(device)
        decoded, mean, log_var = model(digits)
        total += negative_elbo(decoded, digits, mean, log_var).item()
        if n == 1:
            shown = min(8, len(digits))
            pairs = torch.cat([digits[:shown], decoded[:shown].view(-1, 1, SIDE, SIDE)])
            save_image(pairs.cpu(), os.path.join(results, f'reconstruction_{epoch}.png'), nrow=shown)
    print(f'====> epoch {epoch}: test loss {total / len(loader.dataset):.4f} per digit')
    # Digits made from scratch: prior samples through the decoder alone.
    made = model.decoder(torch.randn(64, LATENT, device=device))
    save_image(made.view(-1, 1, SIDE, SIDE).cpu(), os.path.join(results, f'sample_{epoch}.png'))


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    use_cuda = torch.cuda.is_available() and not args.no_cuda
    device = torch.device('cuda' if use_cuda else 'cpu')
    os.makedirs(args.results, exist_ok=True)

    workers = args.workers if args.workers is not None else int(use_cuda)
    to_tensor = transforms.ToTensor()
    train_loader = torch.utils.data.DataLoader(datasets.MNIST(args.data, train=True, transform=to_tensor),
                                               batch_size=args.batch_size, shuffle=True,
                                               num_workers=workers, pin_memory=use_cuda)
    test_loader = torch.utils.data.DataLoader(datasets.MNIST(args.data, train=False, transform=to_tensor),
                                              batch_size=args.batch_size, num_workers=workers,
                                              pin_memory=use_cuda)

    model = DigitVAE().to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        train_epoch(model, train_loader, optimiser, device, epoch, args.log_interval)
        test_epoch(model, test_loader, device, epoch, args.results)
    torch.save(model.state_dict(), os.path.join(args.results, 'vae.pt'))


if __name__ == '__main__':
    main()
