"""A GRU encoder-decoder that learns to reverse digit strings, with teacher forcing. The
script runs unchanged on a laptop, under a launcher and on the cluster: everything it reads
from the environment is optional."""
import argparse
import os
import random
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

# Launchers set these; a plain run is rank 0 of 1.
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
try:
    WORLD_SIZE = int(os.environ["WORLD_SIZE"])
except KeyError:
    WORLD_SIZE = 1
if "SLURM_JOB_ID" in os.environ:
    RUN_NAME = "slurm-" + os.environ["SLURM_JOB_ID"]
elif "PHILLY_JOB_ID" in os.environ:
    RUN_NAME = os.environ["PHILLY_JOB_ID"]
else:
    RUN_NAME = time.strftime("local-%Y%m%d-%H%M%S")
CACHE_DIR = os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))

PAD, SOS, EOS = 10, 11, 12
VOCAB = 13


def make_batch(batch_size, min_len, max_len, rng):
    length = rng.randint(min_len, max_len)
    src = torch.tensor([[rng.randrange(10) for _ in range(length)] for _ in range(batch_size)])
    tgt = torch.flip(src, dims=[1])
    tgt_in = torch.cat([torch.full((batch_size, 1), SOS), tgt], dim=1)
    tgt_out = torch.cat([tgt, torch.full((batch_size, 1), EOS)], dim=1)
    return src, tgt_in, tgt_out


class Seq2Seq(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.embed(src))
        dec, _ = self.decoder(self.embed(tgt_in), h)
        return self.out(dec)

    @torch.no_grad()
    def greedy(self, src, max_len):
        _, h = self.encoder(self.embed(src))
        token = torch.full((src.size(0), 1), SOS)
        result = []
        for _ in range(max_len):
            dec, h = self.decoder(self.embed(token), h)
            token = self.out(dec).argmax(-1)
            result.append(token)
        return torch.cat(result, dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batches-per-epoch", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--out", default=os.environ.get("OUTPUT_DIR", "outputs"))
    args = parser.parse_args()

    rng = random.Random(1234 + LOCAL_RANK)
    torch.manual_seed(1234)
    print("run %s: rank %d of %d, cache in %s" % (RUN_NAME, LOCAL_RANK, WORLD_SIZE, CACHE_DIR))
    model = Seq2Seq(args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    val_src, _, val_out = make_batch(256, 8, 8, random.Random(7))

    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for _ in range(args.batches_per_epoch):
            src, tgt_in, tgt_out = make_batch(args.batch_size, 3, 10, rng)
            optimizer.zero_grad()
            logits = model(src, tgt_in)
            loss = loss_fn(logits.reshape(-1, VOCAB), tgt_out.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
        model.eval()
        pred = model.greedy(val_src, val_out.size(1))
        exact = (pred == val_out).all(dim=1).float().mean().item()
        print("epoch %d loss %.3f exact-match %.3f" % (epoch, total / args.batches_per_epoch, exact),
              flush=True)

    if LOCAL_RANK == 0:
        os.makedirs(args.out, exist_ok=True)
        torch.save({"model": model.state_dict(), "hidden": args.hidden, "run": RUN_NAME},
                   os.path.join(args.out, "seq2seq.pt"))


if __name__ == "__main__":
    main()
