"""Trains a small MLP; distributed when a launcher sets the usual variables."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn

DATA_ROOT = os.environ.get("DATA_ROOT", "data")
LOG_EVERY = int(os.getenv("LOG_EVERY", "10"))
SEED = int(os.environ["SEED"]) if "SEED" in os.environ else 0


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ.get("LOCAL_RANK", 0))
    elif "SLURM_PROCID" in os.environ:
        args.rank = int(os.environ["SLURM_PROCID"])
        args.gpu = args.rank % max(torch.cuda.device_count(), 1)
    else:
        print("Not using distributed mode")
        args.distributed = False
        return
    args.distributed = True
    dist.init_process_group("gloo", rank=args.rank, world_size=args.world_size)


def master_port():
    try:
        return int(os.environ["MASTER_PORT"])
    except KeyError:
        return 29500


def run_name():
    if not os.environ.get("RUN_NAME"):
        return "local"
    return os.environ["RUN_NAME"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    init_distributed_mode(args)
    torch.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    for epoch in range(args.epochs):
        for step in range(4):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x[step * 16:(step + 1) * 16]), y[step * 16:(step + 1) * 16])
            loss.backward()
            optimizer.step()
            if step % LOG_EVERY == 0:
                print(run_name(), master_port(), epoch, step, loss.item())


if __name__ == "__main__":
    main()
