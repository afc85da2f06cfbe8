"""Data-parallel training meant to be started by a launcher (torchrun, torch.distributed.launch,
or a platform that exports the same variables): when RANK is in the environment each process
joins the env:// rendezvous, shards the data with a DistributedSampler and wraps the model in
DistributedDataParallel; run by hand, it trains as a single process."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend=backend, init_method="env://")
        if torch.cuda.is_available():
            torch.cuda.set_device(local_rank)
        return True, rank, world_size, local_rank
    return False, 0, 1, 0


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout(x), 1)
        return self.fc2(F.relu(self.fc1(x)))


def synthetic_split(n, seed):
    # Ten prototype patterns plus noise, in place of the real data set.
    g = torch.Generator().manual_seed(0)
    prototypes = torch.rand(10, 1, 28, 28, generator=g)
    g.manual_seed(seed)
    labels = torch.randint(0, 10, (n,), generator=g)
    images = prototypes[labels] + 0.5 * torch.randn(n, 1, 28, 28, generator=g)
    return TensorDataset(images, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64, help="per process")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--train-samples", type=int, default=6000)
    parser.add_argument("--output-dir", default="outputs")
    args = parser.parse_args()

    distributed, rank, world_size, local_rank = setup()
    device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    if rank == 0:
        print("distributed: %s, world size %d" % (distributed, world_size), flush=True)
        os.makedirs(args.output_dir, exist_ok=True)

    train_set = synthetic_split(args.train_samples, seed=1)
    val_set = synthetic_split(args.train_samples // 5, seed=2)
    sampler = (DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
               if distributed else None)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              shuffle=sampler is None, num_workers=2, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=256)

    model = ConvNet().to(device)
    if distributed:
        model = DDP(model, device_ids=[local_rank] if torch.cuda.is_available() else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr * world_size)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        started = time.time()
        optimizer.zero_grad()
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y) / args.accum_steps
            loss.backward()
            if (step + 1) % args.accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()

        if rank == 0:
            model.eval()
            correct = 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
            print("epoch %d: val acc %.3f (%.1fs)" % (epoch, correct / len(val_set), time.time() - started),
                  flush=True)
            state = model.module.state_dict() if distributed else model.state_dict()
            torch.save({"epoch": epoch, "model": state, "optimizer": optimizer.state_dict()},
                       os.path.join(args.output_dir, "last.pt"))
        if distributed:
            dist.barrier()

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
