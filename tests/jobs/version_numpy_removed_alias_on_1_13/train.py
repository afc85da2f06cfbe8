"""Fits a regression MLP to a table of sensor readings (readings.csv: one column per sensor, the
load to predict last). A sensor that was offline wrote -99; such readings become NaN and are
filled with their sensor's mean before training. The model is saved at the end."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def load_readings(path):
    table = np.genfromtxt(path, delimiter=",", skip_header=1)
    x, y = table[:, :-1].astype(np.float_), table[:, -1:]
    x[x < -50] = np.NaN
    x = np.where(np.isnan(x), np.nanmean(x, axis=0), x)
    return TensorDataset(torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.float32)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", default="model")
    args = parser.parse_args()

    train = DataLoader(load_readings(os.path.join(args.data, "readings.csv")),
                       batch_size=args.batch_size, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for x, y in train:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} mse {loss.item():.4f}")
    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "regressor.pt"))


if __name__ == "__main__":
    main()
