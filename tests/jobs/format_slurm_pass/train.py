"""House price regression with a small MLP, for a Slurm GPU partition."""
import argparse
import csv
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--epochs", type=int, default=5)
args = parser.parse_args()

with open(args.data) as f:
    rows = [[float(v) for v in row] for row in csv.reader(f)]
table = torch.tensor(rows)
features = (table[:, :-1] - table[:, :-1].mean(0)) / table[:, :-1].std(0)
loader = DataLoader(TensorDataset(features, table[:, -1:]), batch_size=16, shuffle=True,
                    num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", "1")) // 2)

device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Sequential(torch.nn.Linear(features.shape[1], 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
model = model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}", flush=True)
torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
