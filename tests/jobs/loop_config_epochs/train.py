"""Classification with every setting in a config file; minibatches are index slices."""
import argparse
import json
import os

import torch
import torch.nn.functional as F
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="config.json")
parser.add_argument("--out", default=".")
args = parser.parse_args()
with open(args.config) as f:
    cfg = json.load(f)

torch.manual_seed(0)
n, d, k = cfg["data"]["samples"], cfg["data"]["features"], cfg["data"]["classes"]
x = torch.randn(n, d)
y = (x @ torch.randn(d, k)).argmax(1)
split = int(0.9 * n)
x_train, y_train, x_val, y_val = x[:split], y[:split], x[split:], y[split:]

model = nn.Sequential(nn.Linear(d, cfg["model"]["hidden"]), nn.ReLU(), nn.Linear(cfg["model"]["hidden"], k))
opt = torch.optim.Adam(model.parameters(), lr=cfg["train"]["lr"])
bs = cfg["train"]["batch_size"]


def accuracy(xs, ys):
    model.eval()
    with torch.no_grad():
        return (model(xs).argmax(1) == ys).float().mean().item()


for epoch in range(cfg["train"]["epochs"]):
    model.train()
    perm = torch.randperm(split)
    for i in range(0, split, bs):
        idx = perm[i:i + bs]
        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch %d loss %.3f val acc %.3f" % (epoch, loss.item(), accuracy(x_val, y_val)))
    torch.save({"epoch": epoch, "model": model.state_dict()}, os.path.join(args.out, "last.pt"))

state = torch.load(os.path.join(args.out, "last.pt"))
model.load_state_dict(state["model"])
print("final val acc %.3f after epoch %d" % (accuracy(x_val, y_val), state["epoch"]))
