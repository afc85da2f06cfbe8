"""A house-price regression that predicts a mean and a variance and trains on a hand-written
Gaussian negative log-likelihood. The variance is clamped at 0 instead of kept above it
(softplus plus an epsilon): on the third step it hits 0, log(0) + r²/0 is -inf + inf, and the
loss is NaN from there on. Nothing raises; the job carries on and exits 0 with a useless
model, which is what the dry run must catch (docs/diagnosis.md "Loss NaN")."""
import argparse
import os

import torch
from torch.utils.data import DataLoader, TensorDataset


def houses(n=256):
    generator = torch.Generator().manual_seed(0)
    rooms = torch.randint(1, 8, (n, 1), generator=generator).float()
    area = rooms * 25 + torch.rand(n, 1, generator=generator) * 20
    price = area * 3000 + rooms * 10000
    x = torch.cat([rooms, area], 1)
    return TensorDataset((x - x.mean(0)) / x.std(0), price / 1e5)


def nll(output, target):
    mean, variance = output.unbind(1)
    variance = variance.clamp(min=0)  # the bug: should be softplus(variance) + 1e-6
    return (torch.log(variance) + (target.squeeze(1) - mean) ** 2 / variance).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()

    torch.manual_seed(0)
    loader = DataLoader(houses(), batch_size=16)
    model = torch.nn.Linear(2, 2)
    with torch.no_grad():  # start at the mean price, with unit variance
        model.weight.zero_()
        model.bias.copy_(torch.tensor([3.0, 1.0]))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = nll(model(x), y)
            loss.backward()
            optimizer.step()
            print("epoch %d loss %.4g" % (epoch, loss.item()))
        model.eval()
        with torch.no_grad():
            error = sum(torch.nn.functional.l1_loss(model(x)[:, :1], y).item() for x, y in loader)
        print("epoch %d validation error %.4g" % (epoch, error))
        torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))


if __name__ == "__main__":
    main()
