"""A PyTorchJob worker: the training operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
RANK on every replica, so each one joins the process group through env:// and trains its
shard; the master (rank 0) evaluates and writes the model to the mounted output volume.

The task: tell apart token sequences that contain a rising run of four tokens from those that
do not, with a small Transformer encoder. Data are generated per rank."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

VOCAB, SEQ_LEN = 64, 32


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=g)
    y = torch.randint(0, 2, (n,), generator=g)
    for i in torch.nonzero(y).flatten().tolist():
        start = int(torch.randint(0, SEQ_LEN - 4, (1,), generator=g))
        first = int(torch.randint(0, VOCAB - 4, (1,), generator=g))
        x[i, start:start + 4] = torch.arange(first, first + 4)
    return x, y


class Classifier(nn.Module):
    def __init__(self, d_model=64, nhead=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = nn.Parameter(torch.zeros(1, SEQ_LEN, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, 2)

    def forward(self, x):
        h = self.encoder(self.embed(x) + self.pos)
        return self.head(h.mean(dim=1))


def main():
    parser = argparse.ArgumentParser(description="PyTorchJob sequence classifier")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--backend", default=dist.Backend.GLOO,
                        choices=[dist.Backend.GLOO, dist.Backend.NCCL])
    parser.add_argument("--model-dir", default="/tmp/model")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    print("Using distributed PyTorch with {} backend, rank {} of {}, master {}:{}".format(
        args.backend, rank, world_size, os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]), flush=True)
    dist.init_process_group(backend=args.backend)  # env:// from the operator's variables

    torch.manual_seed(0)
    x, y = make_data(args.samples, seed=100 + rank)
    x_val, y_val = make_data(1000, seed=7)
    dataset = torch.utils.data.TensorDataset(x, y)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)

    model = nn.parallel.DistributedDataParallel(Classifier())
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        model.train()
        for step, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            if step % 50 == 0:
                print("epoch {} step {} loss {:.4f}".format(epoch, step, loss.item()), flush=True)
        if rank == 0:
            model.eval()
            with torch.no_grad():
                acc = (model(x_val).argmax(1) == y_val).float().mean().item()
            print("epoch {} accuracy={:.4f} ({:.1f}s)".format(epoch, acc, time.time() - t0), flush=True)

    if rank == 0:
        os.makedirs(args.model_dir, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.model_dir, "classifier.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
