"""A word-level LSTM language model trained by truncated backpropagation through time, with no
DataLoader: the token stream is stacked into parallel columns and each step slices the next
--bptt rows out of it by index. The corpus is grown from a short text: its lines, shuffled,
are repeated until the stream holds --tokens tokens."""
import argparse
import math
import os
import random
import time

import torch
from torch import nn

parser = argparse.ArgumentParser(description="LSTM language model over an index-sliced token stream")
parser.add_argument("--data", default="./data", help="folder with seed.txt")
parser.add_argument("--tokens", type=int, default=2_000_000, help="length of the stream grown from seed.txt")
parser.add_argument("--emsize", type=int, default=64, help="width of the word vectors")
parser.add_argument("--nhid", type=int, default=64, help="width of the LSTM state")
parser.add_argument("--lr", type=float, default=20, help="plain SGD step, quartered when validation stalls")
parser.add_argument("--clip", type=float, default=0.25, help="largest gradient norm per step")
parser.add_argument("--epochs", type=int, default=40)
parser.add_argument("--batch_size", type=int, default=20, help="columns trained side by side")
parser.add_argument("--bptt", type=int, default=35, help="rows per step")
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--log-interval", type=int, default=200, help="steps between progress lines")
parser.add_argument("--save", default="model.pt", help="file for the best network (pickled whole)")
args = parser.parse_args()
torch.manual_seed(args.seed)


def grow_stream(path, length, seed):
    """Word ids of seed.txt's lines (each ended by <eos>), reshuffled and repeated to `length`."""
    ids = {}
    with open(path, encoding="utf8") as f:
        lines = [[ids.setdefault(w, len(ids)) for w in line.split() + ["<eos>"]]
                 for line in f if line.strip()]
    shuffle = random.Random(seed).shuffle
    stream = []
    while len(stream) < length:
        shuffle(lines)
        for line in lines:
            stream += line
    return len(ids), torch.tensor(stream[:length])


def columns(stream, width):
    """Row t holds token t of each of `width` equal runs of the stream (the tail is dropped)."""
    rows = len(stream) // width
    return stream[:rows * width].view(width, rows).t().contiguous()


vocab_size, stream = grow_stream(os.path.join(args.data, "seed.txt"), args.tokens, args.seed)
held = args.tokens // 40
train_rows = columns(stream[:-2 * held], args.batch_size)
valid_rows = columns(stream[-2 * held:-held], 10)
test_rows = columns(stream[-held:], 10)
print(f"{args.tokens} tokens, {vocab_size} words, {len(train_rows) // args.bptt} steps per epoch")


class WordLSTM(nn.Module):
    def __init__(self, words, width, state):
        super().__init__()
        self.embed = nn.Embedding(words, width)
        self.lstm = nn.LSTM(width, state)
        self.out = nn.Linear(state, words)

    def forward(self, rows, carry=None):
        hidden, carry = self.lstm(self.embed(rows), carry)
        return self.out(hidden), carry


def window(rows, start):
    """Rows start.. as input and the same rows one token later as flat targets."""
    end = min(start + args.bptt, len(rows) - 1)
    return rows[start:end], rows[start + 1:end + 1].flatten()


def mean_loss(net, rows):
    net.eval()
    total, carry = 0.0, None
    with torch.no_grad():
        for start in range(0, len(rows) - 1, args.bptt):
            x, y = window(rows, start)
            scores, carry = net(x, carry)
            total += len(x) * loss_fn(scores.flatten(0, 1), y).item()
    return total / (len(rows) - 1)


def train_epoch(net, epoch, step_size):
    net.train()
    carry, running, clock = None, 0.0, time.time()
    for step, start in enumerate(range(0, len(train_rows) - 1, args.bptt)):
        x, y = window(train_rows, start)
        if carry is not None:
            carry = tuple(c.detach() for c in carry)  # no gradient into earlier windows
        net.zero_grad()
        scores, carry = net(x, carry)
        loss = loss_fn(scores.flatten(0, 1), y)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), args.clip)
        for p in net.parameters():
            p.data.sub_(step_size * p.grad)
        running += loss.item()
        if step and step % args.log_interval == 0:
            print(f"epoch {epoch} step {step}: loss {running / args.log_interval:.3f}, "
                  f"{(time.time() - clock) * 1000 / args.log_interval:.1f} ms/step", flush=True)
            running, clock = 0.0, time.time()


net = WordLSTM(vocab_size, args.emsize, args.nhid)
loss_fn = nn.CrossEntropyLoss()
step_size, best = args.lr, math.inf
for epoch in range(1, args.epochs + 1):
    train_epoch(net, epoch, step_size)
    valid = mean_loss(net, valid_rows)
    print(f"epoch {epoch}: validation loss {valid:.3f}, perplexity {math.exp(valid):.1f}", flush=True)
    if valid < best:
        best = valid
        torch.save(net, args.save)
    else:
        step_size /= 4

net = torch.load(args.save, weights_only=False)  # the whole network, saved above by this job
test = mean_loss(net, test_rows)
print(f"test loss {test:.3f}, perplexity {math.exp(test):.1f}")
