"""A variational autoencoder on 28x28 greyscale digits-like images (Kingma & Welling): a
784-400-20 encoder, the reparameterisation trick, and a 20-400-784 decoder trained on the
binary cross-entropy plus the KL term. Each epoch saves reconstructions of the first test
batch and 64 samples from the prior as PNG grids."""
from __future__ import print_function

import argparse
import os

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from torchvision.utils import save_image


class StrokeDigits(torch.utils.data.Dataset):
    """Synthetic stand-in for MNIST (no download on the cluster): each image is one to three
    thick strokes and rings on a 28x28 canvas; the label is the number of strokes."""

    def __init__(self, size, seed):
        g = torch.Generator().manual_seed(seed)
        ys, xs = torch.meshgrid(torch.arange(28.0), torch.arange(28.0), indexing="ij")
        images = torch.zeros(size, 28, 28)
        self.labels = torch.randint(1, 4, (size,), generator=g)
        for k in range(3):
            active = (self.labels > k).float().view(-1, 1, 1)
            p = torch.rand(size, 4, generator=g) * 20 + 4
            # distance of every pixel to the segment p0-p1
            x0, y0, x1, y1 = (p[:, i].view(-1, 1, 1) for i in range(4))
            dx, dy = x1 - x0, y1 - y0
            t = (((xs - x0) * dx + (ys - y0) * dy) / (dx * dx + dy * dy + 1e-6)).clamp(0, 1)
            dist = ((xs - x0 - t * dx) ** 2 + (ys - y0 - t * dy) ** 2).sqrt()
            images = torch.maximum(images, active * (1.5 - dist).clamp(0, 1))
        self.images = images.unsqueeze(1)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], int(self.labels[index])


parser = argparse.ArgumentParser(description="VAE MNIST Example")
parser.add_argument("--batch-size", type=int, default=128, metavar="N",
                    help="input batch size for training (default: 128)")
parser.add_argument("--epochs", type=int, default=10, metavar="N",
                    help="number of epochs to train (default: 10)")
parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
parser.add_argument("--log-interval", type=int, default=10, metavar="N",
                    help="how many batches to wait before logging training status")
parser.add_argument("--train-size", type=int, default=60000)
parser.add_argument("--results", default="results", help="folder for images and the model")
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

torch.manual_seed(args.seed)

device = torch.device("cuda" if args.cuda else "cpu")
os.makedirs(args.results, exist_ok=True)

kwargs = {"num_workers": 1, "pin_memory": True} if args.cuda else {}
train_loader = torch.utils.data.DataLoader(StrokeDigits(args.train_size, seed=1),
                                           batch_size=args.batch_size, shuffle=True, **kwargs)
test_loader = torch.utils.data.DataLoader(StrokeDigits(args.train_size // 6, seed=2),
                                          batch_size=args.batch_size, shuffle=False, **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2), appendix B of the paper
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    print("====> Epoch: {} Average loss: {:.4f}".format(
        epoch, train_loss / len(train_loader.dataset)))


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n],
                                        recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                save_image(comparison.cpu(),
                           os.path.join(args.results, "reconstruction_" + str(epoch) + ".png"), nrow=n)

    test_loss /= len(test_loader.dataset)
    print("====> Test set loss: {:.4f}".format(test_loss))


if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
            save_image(sample.view(64, 1, 28, 28),
                       os.path.join(args.results, "sample_" + str(epoch) + ".png"))
    torch.save(model.state_dict(), os.path.join(args.results, "vae.pt"))
