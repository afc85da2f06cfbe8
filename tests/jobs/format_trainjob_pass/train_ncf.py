"""Neural collaborative filtering over (user, item, rating) triples; the rendezvous comes from
the MASTER_ADDR, WORLD_SIZE and RANK the Trainer's torch runtime sets."""
import argparse
import csv
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--ratings", required=True)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

dist.init_process_group("gloo", init_method="env://")
with open(args.ratings) as f:
    triples = [(int(u), int(i), float(r)) for u, i, r in csv.reader(f)]
users = torch.tensor([t[0] for t in triples])
items = torch.tensor([t[1] for t in triples])
ratings = torch.tensor([t[2] for t in triples])
factors = int(os.environ["NCF_FACTORS"])


class NCF(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.users = torch.nn.Embedding(int(users.max()) + 1, factors)
        self.items = torch.nn.Embedding(int(items.max()) + 1, factors)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(1)


model = torch.nn.parallel.DistributedDataParallel(NCF())
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(users, items, ratings), batch_size=4)
for _ in range(args.epochs):
    for u, i, r in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(u, i), r).backward()
        optimizer.step()
dist.destroy_process_group()
