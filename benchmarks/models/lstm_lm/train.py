"""Trains a word-level LSTM language model on the CPU, the way PyTorch's word_language_model example
is built (an embedding, a 2-layer LSTM with dropout, a linear decoder over the vocabulary,
cross-entropy, gradients clipped by norm, plain SGD), on synthetic token sequences, and prints each
training iteration's wall time."""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--vocab', type=int, default=5000, help='vocabulary size (default: 5000)')
    p.add_argument('--emsize', type=int, default=128, help='word embedding size (default: 128)')
    p.add_argument('--nhid', type=int, default=128, help='hidden units per LSTM layer (default: 128)')
    p.add_argument('--nlayers', type=int, default=2, help='LSTM layers (default: 2)')
    p.add_argument('--dropout', type=float, default=0.2)
    p.add_argument('--bptt', type=int, default=35, help='sequence length (default: 35)')
    p.add_argument('-b', '--batch-size', type=int, default=20, help='sequences per iteration (default: 20)')
    p.add_argument('--samples', type=int, default=400, help='synthetic training sequences (default: 400)')
    p.add_argument('--iters', type=int, default=12, help='training iterations to run (default: 12)')
    p.add_argument('--lr', type=float, default=1.0, help='learning rate (default: 1.0)')
    p.add_argument('--clip', type=float, default=0.25, help='gradient norm clipping (default: 0.25)')
    p.add_argument('--seed', type=int, default=1111)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    return args


class RNNModel(nn.Module):
    """Embedding, stacked LSTM, linear decoder; dropout after the embedding and after the LSTM."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, tokens, hidden=None):
        emb = self.drop(self.encoder(tokens))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return self.decoder(output).view(-1, self.ntoken), hidden


def synthetic_sequences(count, length, vocab, seed):
    """Token sequences one longer than the model's input (the targets are the input shifted by one),
    made once up front, so that a batch costs next to nothing to load."""
    generator = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randint(0, vocab, (count, length + 1), generator=generator))


def train(model, loader, criterion, optimizer, args):
    """Runs args.iters iterations, over as many epochs as that takes. An iteration's time runs from
    the end of the previous one to the end of its optimizer step, so it includes fetching its batch."""
    model.train()
    done, epoch, total_loss = 0, 0, 0.0
    end = time.perf_counter()
    while done < args.iters:
        epoch += 1
        for (sequences,) in loader:
            # The LSTM takes (time, batch); each batch starts from a zero state.
            data = sequences[:, :-1].t().contiguous()
            targets = sequences[:, 1:].t().reshape(-1)
            output, _ = model(data)
            loss = criterion(output, targets)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            now = time.perf_counter()
            done += 1
            print(f'iter {done} time {now - end:.6f}', flush=True)
            end = now
            total_loss += loss.item()
            if done == args.iters:
                break
    print(f'epochs {epoch} mean loss {total_loss / done:.4f}')


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dataset = synthetic_sequences(args.samples, args.bptt, args.vocab, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = RNNModel(args.vocab, args.emsize, args.nhid, args.nlayers, args.dropout)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    parameters = sum(p.numel() for p in model.parameters())
    print(f'lstm_lm: {parameters} parameters, batch {args.batch_size} x {args.bptt} tokens')
    train(model, loader, criterion, optimizer, args)


if __name__ == '__main__':
    main()
