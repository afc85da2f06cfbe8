import argparse
import json
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--data-dir", required=True)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

with open(os.path.join(args.data_dir, "features.json")) as f:
    samples = json.load(f)
features = torch.tensor([s["x"] for s in samples])
labels = torch.tensor([s["y"] for s in samples])
model = torch.nn.Sequential(torch.nn.Linear(features.shape[1], 8), torch.nn.ReLU(), torch.nn.Linear(8, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(args.epochs):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
torch.save(model.state_dict(), os.path.join(os.environ["AIP_MODEL_DIR"], "model.pt"))
