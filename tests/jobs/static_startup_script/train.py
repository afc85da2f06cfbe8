import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--cache", default="")
args = parser.parse_args()
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=16, shuffle=True)
for (x,) in loader:
    print(x.cuda().sum().item())
