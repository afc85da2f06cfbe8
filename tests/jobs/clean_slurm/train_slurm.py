"""Protein family classification from sequence (a 1-D CNN over one-hot amino acids), for
sbatch/srun on the GPU partition. Rank and world size come from Slurm's own variables; when
there is more than one task the tasks rendezvous over TCP on the first node. Checkpoints go
to a folder named by the job id, so a requeued job resumes where it stopped."""
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, random_split
from torch.utils.data.distributed import DistributedSampler

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def read_fasta(path):
    records, header, chunks = [], None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if header is not None:
                    records.append((header, "".join(chunks)))
                header, chunks = line[1:], []
            elif line:
                chunks.append(line)
    if header is not None:
        records.append((header, "".join(chunks)))
    return records


class Sequences(Dataset):
    def __init__(self, path, max_len=128):
        records = read_fasta(path)
        families = [dict(kv.split("=") for kv in h.split()[1:])["family"] for h, _ in records]
        self.classes = sorted(set(families))
        self.items = [(s, self.classes.index(fam)) for (_, s), fam in zip(records, families, strict=True)]
        self.max_len = max_len

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        seq, label = self.items[i]
        x = torch.zeros(len(AMINO), self.max_len)
        for pos, a in enumerate(seq[: self.max_len]):
            x[AMINO.index(a), pos] = 1.0
        return x, label


def model_for(n_classes):
    return nn.Sequential(
        nn.Conv1d(len(AMINO), 64, 9, padding=4), nn.ReLU(), nn.BatchNorm1d(64),
        nn.Conv1d(64, 64, 9, padding=4), nn.ReLU(),
        nn.AdaptiveMaxPool1d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, n_classes))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fasta", required=True)
    parser.add_argument("--ckpt-root", required=True)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--port", type=int, default=29512)
    args = parser.parse_args()

    rank = int(os.environ["SLURM_PROCID"])
    world_size = int(os.environ["SLURM_NTASKS"])
    local_rank = int(os.environ["SLURM_LOCALID"])
    job_id = os.environ["SLURM_JOB_ID"]
    workers = min(4, int(os.environ.get("SLURM_CPUS_PER_TASK", os.environ.get("SLURM_CPUS_ON_NODE", "1"))))
    if world_size > 1:
        # srun gives every task the node list; the first node hosts the rendezvous.
        master = os.environ.get("MASTER_ADDR", os.environ["SLURM_NODELIST"].split(",")[0])
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo",
                                init_method="tcp://%s:%d" % (master, args.port),
                                world_size=world_size, rank=rank)
    device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    print("task %d/%d on %s, job %s, %d loader workers"
          % (rank, world_size, socket.gethostname(), job_id, workers), flush=True)

    dataset = Sequences(args.fasta)
    n_val = len(dataset) // 6
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val],
                                      torch.Generator().manual_seed(42))
    sampler = DistributedSampler(train_set) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              shuffle=sampler is None, num_workers=workers)
    val_loader = DataLoader(val_set, batch_size=256)

    model = model_for(len(dataset.classes)).to(device)
    if world_size > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    ckpt_dir = os.path.join(args.ckpt_root, "job-" + job_id)
    ckpt = os.path.join(ckpt_dir, "last.pt")
    start = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
        print("requeued: resuming at epoch", start)

    for epoch in range(start, args.epochs):
        t0 = time.time()
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        if rank == 0:
            model.eval()
            correct = 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
            print("epoch %d loss %.3f val acc %.3f %.1fs"
                  % (epoch, loss.item(), correct / n_val, time.time() - t0), flush=True)
            os.makedirs(ckpt_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                        "classes": dataset.classes}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
