import argparse
import csv
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--hidden", type=int, default=32)
args = parser.parse_args()

data_dir = os.environ["SM_CHANNEL_TRAIN"]
with open(os.path.join(data_dir, "credit.csv")) as f:
    rows = [[float(v) for v in row] for row in csv.reader(f)]
table = torch.tensor(rows)
model = torch.nn.Sequential(torch.nn.Linear(table.shape[1] - 1, args.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(args.hidden, 1))
optimizer = torch.optim.Adam(model.parameters())
for _ in range(args.epochs):
    optimizer.zero_grad()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(model(table[:, :-1]), table[:, -1:])
    loss.backward()
    optimizer.step()
torch.save(model.state_dict(), os.path.join(os.environ["SM_MODEL_DIR"], "model.pt"))
