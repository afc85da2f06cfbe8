"""Day-ahead electricity load forecasting: an LSTM reads a week of hourly load and
temperature and predicts the next 24 hours. Written for an AzureML command job: inputs and
outputs come as arguments (${{inputs.x}} / ${{outputs.y}}), metrics go to MLflow when the
environment has it, and the run's files go to ./outputs and ./logs, which AzureML uploads."""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn

try:
    import mlflow
except ImportError:  # local runs without the AzureML environment
    mlflow = None

WINDOW, HORIZON = 24 * 7, 24


class Forecaster(nn.Module):
    def __init__(self, hidden=64, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(2, hidden, layers, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, HORIZON)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def windows(series, start, stop):
    xs, ys = [], []
    for t in range(start, stop - WINDOW - HORIZON + 1, 6):
        xs.append(series[t:t + WINDOW])
        ys.append(series[t + WINDOW:t + WINDOW + HORIZON, 0])
    return torch.tensor(np.stack(xs)), torch.tensor(np.stack(ys))


def log_metric(name, value, step):
    if mlflow is not None:
        mlflow.log_metric(name, value, step=step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="CSV with hour,load_mw,temperature_c")
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    run_id = os.environ.get("AZUREML_RUN_ID", "local")
    os.makedirs("outputs", exist_ok=True)
    os.makedirs("logs", exist_ok=True)
    print("run", run_id, "data", args.data)

    table = np.loadtxt(args.data, delimiter=",", skiprows=1, dtype=np.float32)[:, 1:]
    mean, std = table.mean(0), table.std(0)
    series = (table - mean) / std
    split = int(len(series) * 0.8)
    x_train, y_train = windows(series, 0, split)
    x_val, y_val = windows(series, split - WINDOW, len(series))
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train),
                                               batch_size=args.batch_size, shuffle=True)
    val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_val, y_val), batch_size=256)

    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)
    history = []
    for epoch in range(args.epochs):
        started = time.time()
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val = sum(nn.functional.l1_loss(model(x), y, reduction="sum").item() for x, y in val_loader)
        mae_mw = val / (len(x_val) * HORIZON) * float(std[0])
        scheduler.step(mae_mw)
        history.append({"epoch": epoch, "val_mae_mw": mae_mw, "seconds": time.time() - started})
        log_metric("val_mae_mw", mae_mw, epoch)
        print("epoch %2d val MAE %.1f MW" % (epoch, mae_mw), flush=True)

    torch.save({"model": model.state_dict(), "mean": mean, "std": std},
               os.path.join(args.model_dir, "forecaster.pt"))
    with open(os.path.join("outputs", "history.json"), "w") as f:
        json.dump(history, f)
    with open(os.path.join("logs", "run.txt"), "w") as f:
        f.write("run %s finished, final val MAE %.1f MW\n" % (run_id, history[-1]["val_mae_mw"]))


if __name__ == "__main__":
    main()
