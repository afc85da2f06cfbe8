"""Word-level language model trained with truncated backpropagation through time: batches are
slices of one long token stream, taken by index. The corpus is a small text, its lines shuffled
and repeated to the size asked for."""
import argparse
import math
import os
import random
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="LSTM language model")
parser.add_argument("--data", type=str, default="./data", help="folder holding seed.txt")
parser.add_argument("--tokens", type=int, default=2_000_000, help="size of the corpus built from it")
parser.add_argument("--emsize", type=int, default=64)
parser.add_argument("--nhid", type=int, default=64)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--epochs", type=int, default=40)
parser.add_argument("--batch_size", type=int, default=20)
parser.add_argument("--bptt", type=int, default=35)
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--log-interval", type=int, default=200)
parser.add_argument("--save", type=str, default="model.pt")
args = parser.parse_args()

torch.manual_seed(args.seed)


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


def make_corpus(path, n_tokens, seed):
    """Tokenizes the text, then repeats its lines in a shuffled order until n_tokens."""
    dictionary = Dictionary()
    with open(path, encoding="utf8") as f:
        lines = [[dictionary.add_word(w) for w in line.split() + ["<eos>"]] for line in f if line.strip()]
    rng = random.Random(seed)
    ids = []
    while len(ids) < n_tokens:
        rng.shuffle(lines)
        for line in lines:
            ids.extend(line)
    return dictionary, torch.tensor(ids[:n_tokens], dtype=torch.long)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


dictionary, corpus = make_corpus(os.path.join(args.data, "seed.txt"), args.tokens, args.seed)
n_val = n_test = args.tokens // 40
train_data = batchify(corpus[: -(n_val + n_test)], args.batch_size)
val_data = batchify(corpus[-(n_val + n_test):-n_test], 10)
test_data = batchify(corpus[-n_test:], 10)
print("corpus: %d tokens, %d training batches per epoch" % (args.tokens, train_data.size(0) // args.bptt))


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, self.nhid), weight.new_zeros(1, bsz, self.nhid))


ntokens = len(dictionary)
model = RNNModel(ntokens, args.emsize, args.nhid)
criterion = nn.CrossEntropyLoss()


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def evaluate(data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(data_source.size(1))
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            total_loss += len(data) * criterion(output.view(-1, ntokens), targets).item()
    return total_loss / (len(data_source) - 1)


def train():
    model.train()
    total_loss = 0.0
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print("| epoch {:3d} | {:5d} batches | ms/batch {:5.2f} | loss {:5.2f}".format(
                epoch, batch, elapsed * 1000 / args.log_interval, cur_loss))
            total_loss = 0.0
            start_time = time.time()


lr = args.lr
best_val_loss = None
for epoch in range(1, args.epochs + 1):
    epoch_start_time = time.time()
    train()
    val_loss = evaluate(val_data)
    print("| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | valid ppl {:8.2f}".format(
        epoch, time.time() - epoch_start_time, val_loss, math.exp(val_loss)))
    if not best_val_loss or val_loss < best_val_loss:
        with open(args.save, "wb") as f:
            torch.save(model, f)
        best_val_loss = val_loss
    else:
        lr /= 4.0

with open(args.save, "rb") as f:
    model = torch.load(f)
test_loss = evaluate(test_data)
print("| end of training | test loss {:5.2f} | test ppl {:8.2f}".format(test_loss, math.exp(test_loss)))
