import argparse

import torch
import wandb

try:
    import tensorboardX  # optional: guarded, so not a finding
except ImportError:
    tensorboardX = None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    wandb.init(project="mnist")
    model = torch.nn.Linear(4, 2)
    for epoch in range(args.epochs):
        wandb.log({"epoch": epoch, "norm": model.weight.norm().item()})


if __name__ == "__main__":
    main()
