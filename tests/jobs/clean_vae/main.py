"""A variational autoencoder (Kingma & Welling, 2014) for 28x28 greyscale pictures, fully
connected: 784 -> 400 -> a 20-dimensional Gaussian (mean and log-variance), then 20 -> 400 ->
784 pixel probabilities. The loss is the summed binary cross-entropy of the reconstruction plus
the KL divergence of the code from N(0, I). After each epoch a held-out set is scored and two
PNG grids are written: held-out pictures above their reconstructions, and decodings of draws
from the prior. The weights are saved at the end."""
import argparse
import os

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.utils import save_image

SIDE = 28
PIXELS = SIDE * SIDE
CODE = 20


class StrokeDigits(Dataset):
    """Synthetic stand-in for MNIST (no download on the cluster): each image is one to three
    thick strokes on a 28x28 canvas; the label is the number of strokes."""

    def __init__(self, size, seed):
        g = torch.Generator().manual_seed(seed)
        ys, xs = torch.meshgrid(torch.arange(float(SIDE)), torch.arange(float(SIDE)), indexing="ij")
        images = torch.zeros(size, SIDE, SIDE)
        self.labels = torch.randint(1, 4, (size,), generator=g)
        for k in range(3):
            active = (self.labels > k).float().view(-1, 1, 1)
            ends = torch.rand(size, 4, generator=g) * 20 + 4
            x0, y0, x1, y1 = (ends[:, i].view(-1, 1, 1) for i in range(4))
            dx, dy = x1 - x0, y1 - y0
            # distance of every pixel to the segment from (x0, y0) to (x1, y1)
            t = (((xs - x0) * dx + (ys - y0) * dy) / (dx * dx + dy * dy + 1e-6)).clamp(0, 1)
            dist = ((xs - x0 - t * dx) ** 2 + (ys - y0 - t * dy) ** 2).sqrt()
            images = torch.maximum(images, active * (1.5 - dist).clamp(0, 1))
        self.images = images.unsqueeze(1)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], int(self.labels[index])


class GaussianAutoencoder(nn.Module):
    def __init__(self, hidden=400):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(PIXELS, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * CODE))
        self.decoder = nn.Sequential(nn.Linear(CODE, hidden), nn.ReLU(), nn.Linear(hidden, PIXELS),
                                     nn.Sigmoid())

    def forward(self, pictures):
        mean, log_var = self.encoder(pictures).chunk(2, dim=1)
        # Sampling as mean + sigma * noise keeps the draw differentiable in mean and sigma.
        code = mean + torch.randn_like(mean) * (0.5 * log_var).exp()
        return self.decoder(code), mean, log_var


def negative_elbo(recon, pictures, mean, log_var):
    """Summed over the batch: reconstruction cross-entropy + KL(q(z|x) || N(0, I)) in closed form."""
    reconstruction = F.binary_cross_entropy(recon, pictures.flatten(1), reduction="sum")
    divergence = 0.5 * (mean.pow(2) + log_var.exp() - 1 - log_var).sum()
    return reconstruction + divergence


def elbo_loss(model, pictures):
    recon, mean, log_var = model(pictures)
    return negative_elbo(recon, pictures, mean, log_var), recon


def fit_epoch(model, loader, optimizer, device, epoch, log_every):
    model.train()
    total = 0.0
    for step, (pictures, _) in enumerate(loader):
        pictures = pictures.to(device)
        optimizer.zero_grad()
        loss, _ = elbo_loss(model, pictures)
        loss.backward()
        optimizer.step()
        total += loss.item()
        if step % log_every == 0:
            print(f"epoch {epoch} step {step}/{len(loader)}: {loss.item() / len(pictures):.2f} per picture",
                  flush=True)
    return total / len(loader.dataset)


def score(model, loader, device, grid_path):
    """Mean loss per held-out picture; the first batch's pictures and reconstructions, eight of
    each, go to grid_path."""
    model.eval()
    total = 0.0
    with torch.no_grad():
        for step, (pictures, _) in enumerate(loader):
            pictures = pictures.to(device)
            loss, recon = elbo_loss(model, pictures)
            total += loss.item()
            if step == 0:
                shown = pictures[:8]
                pair = torch.cat([shown, recon[:len(shown)].view(-1, 1, SIDE, SIDE)])
                save_image(pair.cpu(), grid_path, nrow=len(shown))
    return total / len(loader.dataset)


def main():
    p = argparse.ArgumentParser(description="Variational autoencoder on 28x28 pictures")
    p.add_argument("--batch-size", type=int, default=128, help="pictures per step")
    p.add_argument("--epochs", type=int, default=10, help="passes over the training pictures")
    p.add_argument("--no-cuda", action="store_true", help="stay on the CPU even with a GPU")
    p.add_argument("--seed", type=int, default=1, help="seed of torch's generator")
    p.add_argument("--log-interval", type=int, default=10, help="steps between progress lines")
    p.add_argument("--train-size", type=int, default=60000, help="training pictures (held out: a sixth)")
    p.add_argument("--results", default="results", help="folder for the grids and the weights")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    use_gpu = torch.cuda.is_available() and not args.no_cuda
    device = torch.device("cuda" if use_gpu else "cpu")
    os.makedirs(args.results, exist_ok=True)
    extra = {"num_workers": 1, "pin_memory": True} if use_gpu else {}
    train = DataLoader(StrokeDigits(args.train_size, seed=1), batch_size=args.batch_size, shuffle=True,
                       **extra)
    held_out = DataLoader(StrokeDigits(args.train_size // 6, seed=2), batch_size=args.batch_size, **extra)

    model = GaussianAutoencoder().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        train_loss = fit_epoch(model, train, optimizer, device, epoch, args.log_interval)
        grid = os.path.join(args.results, f"reconstruction_{epoch}.png")
        held_out_loss = score(model, held_out, device, grid)
        print(f"epoch {epoch}: train {train_loss:.2f}, held out {held_out_loss:.2f} per picture", flush=True)
        with torch.no_grad():
            dreamt = model.decoder(torch.randn(64, CODE, device=device))
        save_image(dreamt.view(64, 1, SIDE, SIDE).cpu(), os.path.join(args.results, f"sample_{epoch}.png"))
    torch.save(model.state_dict(), os.path.join(args.results, "vae.pt"))


if __name__ == "__main__":
    main()
