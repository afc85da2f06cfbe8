"""Rating prediction by matrix factorisation with user and item biases, trained with Adam on
a chronological split of a ratings CSV (user_id,item_id,rating,timestamp). Logs the
process's memory with psutil and writes the embeddings and a YAML summary of the run."""
import argparse
import os
import time

import numpy as np
import psutil
import torch
import torch.nn as nn
import yaml


class BiasedMF(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        self.global_bias = nn.Parameter(torch.zeros(1))
        for emb in (self.user, self.item):
            nn.init.normal_(emb.weight, std=0.05)
        for emb in (self.user_bias, self.item_bias):
            nn.init.zeros_(emb.weight)

    def forward(self, u, i):
        dot = (self.user(u) * self.item(i)).sum(-1)
        return dot + self.user_bias(u).squeeze(-1) + self.item_bias(i).squeeze(-1) + self.global_bias


def rss_mb():
    return psutil.Process(os.getpid()).memory_info().rss / 2 ** 20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ratings", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=5e-2)
    parser.add_argument("--weight-decay", type=float, default=1e-5)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    args = parser.parse_args()

    table = np.genfromtxt(args.ratings, delimiter=",", names=True, dtype=None, encoding="utf-8")
    table = np.sort(table, order="timestamp")
    n_test = int(len(table) * args.test_fraction)
    train, test = table[:-n_test], table[-n_test:]
    n_users = int(table["user_id"].max()) + 1
    n_items = int(table["item_id"].max()) + 1
    print("%d ratings, %d users, %d items; rss %.0f MiB" % (len(table), n_users, n_items, rss_mb()))

    def tensors(part):
        return (torch.from_numpy(part["user_id"].astype(np.int64)),
                torch.from_numpy(part["item_id"].astype(np.int64)),
                torch.from_numpy(part["rating"].astype(np.float32)))

    train_set = torch.utils.data.TensorDataset(*tensors(train))
    tu, ti, tr = tensors(test)
    loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    model = BiasedMF(n_users, n_items, args.dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    started = time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        for u, i, r in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(u, i), r)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            rmse = torch.sqrt(nn.functional.mse_loss(model(tu, ti).clamp(1, 5), tr)).item()
        if epoch % 5 == 0 or epoch == 1:
            print("epoch %3d train mse %.3f test rmse %.3f rss %.0f MiB"
                  % (epoch, loss.item(), rmse, rss_mb()), flush=True)

    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "mf.pt"))
    with open(os.path.join(args.out, "summary.yaml"), "w") as f:
        yaml.safe_dump({"test_rmse": round(rmse, 4), "epochs": args.epochs, "dim": args.dim,
                        "seconds": round(time.time() - started, 1)}, f)


if __name__ == "__main__":
    main()
