"""Fixture job: a small transformer that predicts the next character of one text file.

Training is a bare `while step < max_steps` loop over optimizer steps (no epochs, no
DataLoader, no framework). The learning rate climbs linearly for --warmup-steps, then falls
along half a cosine to --min-lr by --max-steps. Every --eval-interval steps, and on the last
one, the mean loss of --eval-iters random batches is taken on each part of the text; when the
held-out mean beats every earlier one (the untrained first measurement only sets the bar), the
weights, optimizer state and alphabet are written to <out-dir>/ckpt.pt.
"""
import argparse
import math
import os
import time

import torch
import torch.nn.functional as tf
from torch import nn


def read_options():
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--data", default="data/input.txt", help="UTF-8 text to learn")
    cli.add_argument("--out-dir", default="out", help="where ckpt.pt goes")
    cli.add_argument("--max-steps", type=int, default=5000)
    cli.add_argument("--eval-interval", type=int, default=250)
    cli.add_argument("--eval-iters", type=int, default=200, help="batches per part per measurement")
    cli.add_argument("--batch-size", type=int, default=64)
    cli.add_argument("--block-size", type=int, default=256, help="characters of context")
    cli.add_argument("--n-layer", type=int, default=6)
    cli.add_argument("--n-head", type=int, default=6)
    cli.add_argument("--n-embd", type=int, default=384)
    cli.add_argument("--dropout", type=float, default=0.2)
    cli.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    cli.add_argument("--min-lr", type=float, default=1e-4, help="learning rate at the end")
    cli.add_argument("--warmup-steps", type=int, default=100)
    cli.add_argument("--grad-clip", type=float, default=1.0, help="largest gradient norm")
    cli.add_argument("--seed", type=int, default=7)
    cli.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return cli.parse_args()


class TextWindows:
    """The whole text as one tensor of symbol codes, nine tenths for fitting and the rest held
    out, from which random fixed-length windows are drawn."""

    def __init__(self, path, width, rows, device):
        with open(path, encoding="utf-8") as source:
            raw = source.read()
        self.alphabet = sorted(set(raw))
        code_of = {symbol: code for code, symbol in enumerate(self.alphabet)}
        codes = torch.tensor([code_of[symbol] for symbol in raw], dtype=torch.long)
        boundary = len(codes) * 9 // 10
        self.parts = {"train": codes[:boundary], "val": codes[boundary:]}
        self.rows, self.width, self.device = rows, width, device
        # One window of width + 1 codes covers both the input and its one-step-ahead target.
        self.span = torch.arange(width + 1)

    def draw(self, part, rng=None):
        series = self.parts[part]
        first = torch.randint(0, len(series) - self.width, (self.rows, 1), generator=rng)
        windows = series[first + self.span].to(self.device)
        return windows[:, :-1], windows[:, 1:]


class Layer(nn.Module):
    """One pre-norm residual unit: masked multi-head attention, then a GELU perceptron."""

    def __init__(self, width, heads, p_drop, context):
        super().__init__()
        self.heads = heads
        self.pre_attend = nn.LayerNorm(width)
        self.to_qkv = nn.Linear(width, 3 * width)
        self.merge = nn.Linear(width, width)
        self.pre_mix = nn.LayerNorm(width)
        self.widen = nn.Linear(width, 4 * width)
        self.narrow = nn.Linear(4 * width, width)
        self.drop = nn.Dropout(p_drop)
        # Added to the attention scores: 0 where a position may look, -inf at later positions.
        ahead = torch.ones(context, context, dtype=torch.bool).triu(1)
        self.register_buffer("causal", torch.zeros(context, context).masked_fill(ahead, -math.inf))

    def attend(self, h):
        rows, length, width = h.shape
        per_head = width // self.heads
        q, k, v = self.to_qkv(h).view(rows, length, 3, self.heads, per_head).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(per_head) + self.causal[:length, :length]
        mixed = self.drop(scores.softmax(dim=-1)) @ v
        return self.merge(mixed.transpose(1, 2).reshape(rows, length, width))

    def forward(self, h):
        h = h + self.drop(self.attend(self.pre_attend(h)))
        return h + self.drop(self.narrow(tf.gelu(self.widen(self.pre_mix(h)))))


class CharTransformer(nn.Module):
    def __init__(self, symbols, context, depth, heads, width, p_drop):
        super().__init__()
        self.symbol_vectors = nn.Embedding(symbols, width)
        self.place_vectors = nn.Parameter(0.02 * torch.randn(context, width))
        self.drop = nn.Dropout(p_drop)
        self.stack = nn.ModuleList([Layer(width, heads, p_drop, context) for _ in range(depth)])
        self.last_norm = nn.LayerNorm(width)
        self.readout = nn.Linear(width, symbols, bias=False)

    def forward(self, codes, following=None):
        """Next-symbol scores for every position; with `following`, also their cross-entropy."""
        h = self.drop(self.symbol_vectors(codes) + self.place_vectors[: codes.size(1)])
        for layer in self.stack:
            h = layer(h)
        scores = self.readout(self.last_norm(h))
        if following is None:
            return scores, None
        return scores, tf.cross_entropy(scores.flatten(0, 1), following.flatten())


def mean_losses(net, windows, batches):
    """Average loss of `batches` batches from each part, dropout off and no graph kept. Every
    call draws the same windows (a generator of its own, seeded alike), so two measurements
    differ only by what the weights learned in between, not by which text was sampled."""
    net.eval()
    means = {}
    with torch.no_grad():
        for index, part in enumerate(windows.parts):
            rng = torch.Generator().manual_seed(1000 + index)
            total = 0.0
            for _ in range(batches):
                total += net(*windows.draw(part, rng))[1].item()
            means[part] = total / batches
    net.train()
    return means


def rate_at(step, opts):
    if step < opts.warmup_steps:
        return opts.lr * (step + 1) / opts.warmup_steps
    done = min(1.0, (step - opts.warmup_steps) / max(1, opts.max_steps - opts.warmup_steps))
    return opts.min_lr + (opts.lr - opts.min_lr) * (1.0 + math.cos(math.pi * done)) / 2


def main():
    opts = read_options()
    torch.manual_seed(opts.seed)
    os.makedirs(opts.out_dir, exist_ok=True)

    windows = TextWindows(opts.data, opts.block_size, opts.batch_size, opts.device)
    print("text: %d characters over an alphabet of %d"
          % (sum(map(len, windows.parts.values())), len(windows.alphabet)))
    net = CharTransformer(len(windows.alphabet), opts.block_size, opts.n_layer, opts.n_head,
                          opts.n_embd, opts.dropout).to(opts.device)
    print("model: %.2fM weights" % (sum(w.numel() for w in net.parameters()) / 1e6))
    adamw = torch.optim.AdamW(net.parameters(), lr=opts.lr, betas=(0.9, 0.99), weight_decay=0.1)

    lowest_val = math.inf
    step = 0
    inputs, targets = windows.draw("train")
    started = time.perf_counter()
    while step < opts.max_steps:
        for group in adamw.param_groups:
            group["lr"] = rate_at(step, opts)

        if step % opts.eval_interval == 0 or step + 1 == opts.max_steps:
            means = mean_losses(net, windows, opts.eval_iters)
            print("step %d: train %.4f / val %.4f" % (step, means["train"], means["val"]), flush=True)
            if means["val"] < lowest_val:
                lowest_val = means["val"]
                if step > 0:
                    state = {"model": net.state_dict(), "optimizer": adamw.state_dict(), "step": step,
                             "best_val_loss": lowest_val, "args": vars(opts), "chars": windows.alphabet}
                    torch.save(state, os.path.join(opts.out_dir, "ckpt.pt"))

        _, batch_loss = net(inputs, targets)
        inputs, targets = windows.draw("train")  # the next batch, sampled before the backward pass
        adamw.zero_grad(set_to_none=True)
        batch_loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), opts.grad_clip)
        adamw.step()

        if step % 10 == 0:
            elapsed_ms = 1000 * (time.perf_counter() - started)
            print("step %d: loss %.4f (%.0f ms)" % (step, batch_loss.item(), elapsed_ms), flush=True)
        started = time.perf_counter()
        step += 1


if __name__ == "__main__":
    main()
