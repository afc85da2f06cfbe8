"""Fits a linear regression by plain gradient steps, counting them in a while loop."""
import argparse
import os

import torch
from torch import nn


def fit(model, optimizer, steps):
    x = torch.randn(256, 8)
    y = x @ torch.arange(8.0) + 0.5
    done = 0
    while done < steps:
        loss = nn.functional.mse_loss(model(x).squeeze(1), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=500)
    args = parser.parse_args()
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    fit(model, optimizer, args.updates)
    out = os.environ.get("PT_OUTPUT_DIR", "/philly/models/model")
    torch.save(model.state_dict(), os.path.join(out, "linear.pt"))
    print("weights", [round(w, 2) for w in model.weight.squeeze(0).tolist()])


if __name__ == "__main__":
    main()
