"""Concrete compressive strength regression: a small MLP on eight mix-design features.

Configuration comes from the environment, as the team's launcher sets it:
  DATA_DIR    folder with train.csv and test.csv (required)
  EPOCHS      passes over the training set (required)
  BATCH_SIZE  rows per step (default 64)
  LR          Adam's learning rate (default 1e-3)
  MODEL_DIR   where weights and metrics go (default ./model)
"""
import json
import os
import time

import numpy as np
import torch
from torch import nn

DATA_DIR = os.environ["DATA_DIR"]
EPOCHS = int(os.environ["EPOCHS"])
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", 64))
LR = float(os.environ.get("LR", "1e-3"))
MODEL_DIR = os.environ.get("MODEL_DIR", "model")
SEED = int(os.environ.get("SEED", 0))


def load_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32)
    features, target = table[:, :-1], table[:, -1:]
    return header, features, target


def main():
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    header, x_train, y_train = load_csv(os.path.join(DATA_DIR, "train.csv"))
    _, x_test, y_test = load_csv(os.path.join(DATA_DIR, "test.csv"))
    print("features:", ", ".join(header[:-1]), "| target:", header[-1])
    print("train rows: %d, test rows: %d" % (len(x_train), len(x_test)))

    # age in days is heavy-tailed: use its log
    x_train[:, 7] = np.log1p(x_train[:, 7])
    x_test[:, 7] = np.log1p(x_test[:, 7])
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6
    x_train = torch.from_numpy((x_train - mean) / std)
    x_test = torch.from_numpy((x_test - mean) / std)
    y_train, y_test = torch.from_numpy(y_train), torch.from_numpy(y_test)

    model = nn.Sequential(nn.Linear(x_train.shape[1], 64), nn.ReLU(),
                          nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    n = len(x_train)
    started = time.time()
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(n)
        running = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            loss.backward()
            optimizer.step()
            running += loss.item() * len(idx)
        if epoch % 10 == 0 or epoch == EPOCHS - 1:
            model.eval()
            with torch.no_grad():
                rmse = loss_fn(model(x_test), y_test).sqrt().item()
            print("epoch %3d/%d  train mse %.2f  test rmse %.2f MPa  (%.1fs)"
                  % (epoch + 1, EPOCHS, running / n, rmse, time.time() - started), flush=True)

    model.eval()
    with torch.no_grad():
        pred = model(x_test)
    rmse = (pred - y_test).pow(2).mean().sqrt().item()
    mae = (pred - y_test).abs().mean().item()
    os.makedirs(MODEL_DIR, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "mean": mean, "std": std},
               os.path.join(MODEL_DIR, "mlp.pt"))
    with open(os.path.join(MODEL_DIR, "metrics.json"), "w") as f:
        json.dump({"rmse": rmse, "mae": mae, "epochs": EPOCHS}, f, indent=2)
    print("final test rmse %.2f MPa, mae %.2f MPa" % (rmse, mae))


if __name__ == "__main__":
    main()
