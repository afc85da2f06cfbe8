"""Scores new reviews with the trained model and writes them to reports/scores.csv under the
model's folder, a folder the author had made by hand on the laptop."""
import csv
import os
import sys

import torch
from torch import nn

out = sys.argv[1]
model = nn.Sequential(nn.Linear(2000, 64), nn.ReLU(), nn.Linear(64, 2))
model.load_state_dict(torch.load(os.path.join(out, "sentiment.pt")))
model.eval()
reviews = (torch.rand(16, 2000) < 0.01).float()
with torch.no_grad():
    scores = model(reviews).softmax(1)[:, 1]
with open(os.path.join(out, "reports", "scores.csv"), "w", newline="") as f:
    csv.writer(f).writerows([i, float(s)] for i, s in enumerate(scores))
