"""DistributedDataParallel when there is more than one GPU, as many training scripts do. Rank 0
saves the wrapped model's state_dict every epoch; after training it reloads the best epoch
into a plain network for the test. On one GPU (the developer's machine) the keys match; on
the platform's four, DDP prefixes every key with "module." and the final test cannot load
them: hours of training lost at the very end."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_data(n, seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=generator)
    return TensorDataset(x, (x.sum(1) > 0).long())


def net():
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))


def accuracy(model, data, device):
    model.eval()
    x, y = data.tensors
    with torch.no_grad():
        return (model(x.to(device)).argmax(1) == y.to(device)).float().mean().item()


def run(rank, world_size, args):
    if world_size > 1:
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    train_set, val_set = make_data(2048, 0), make_data(256, 1)
    sampler = DistributedSampler(train_set) if world_size > 1 else None
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, shuffle=sampler is None)
    model = net().to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, path = 0.0, os.path.join(args.out, "best.pt")

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
        if rank == 0:
            score = accuracy(model, val_set, device)
            print(f"epoch {epoch} validation accuracy {score:.3f}")
            if score >= best:
                best = score
                torch.save(model.state_dict(), path)
        if world_size > 1:
            dist.barrier()

    if rank == 0:
        final = net().to(device)
        final.load_state_dict(torch.load(path, map_location=device))
        print(f"test accuracy {accuracy(final, make_data(512, 2), device):.3f}")
    if world_size > 1:
        dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    world_size = torch.cuda.device_count()
    if world_size > 1:
        mp.spawn(run, args=(world_size, args), nprocs=world_size)
    else:
        run(0, 1, args)


if __name__ == "__main__":
    main()
