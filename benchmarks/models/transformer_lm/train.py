"""Trains a small GPT-style language model on the CPU: a token embedding and a learned positional
embedding, nn.TransformerEncoder layers under a causal mask, a final LayerNorm and a linear head
over the vocabulary, AdamW with a linear warm-up, on synthetic token sequences; prints each training
iteration's wall time."""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--vocab', type=int, default=4000, help='vocabulary size (default: 4000)')
    p.add_argument('--d-model', type=int, default=128, help='model width (default: 128)')
    p.add_argument('--heads', type=int, default=4, help='attention heads (default: 4)')
    p.add_argument('--layers', type=int, default=4, help='encoder layers (default: 4)')
    p.add_argument('--d-ff', type=int, default=512, help='feed-forward width (default: 512)')
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--seq-len', type=int, default=64, help='tokens per sequence (default: 64)')
    p.add_argument('-b', '--batch-size', type=int, default=8, help='sequences per iteration (default: 8)')
    p.add_argument('--samples', type=int, default=256, help='synthetic training sequences (default: 256)')
    p.add_argument('--iters', type=int, default=12, help='training iterations to run (default: 12)')
    p.add_argument('--lr', type=float, default=3e-4, help='peak learning rate (default: 3e-4)')
    p.add_argument('--weight-decay', type=float, default=0.01)
    p.add_argument('--warmup', type=int, default=100, help='warm-up iterations (default: 100)')
    p.add_argument('--clip', type=float, default=1.0, help='gradient norm clipping (default: 1.0)')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    return args


class TransformerLM(nn.Module):
    def __init__(self, vocab, d_model, heads, d_ff, layers, max_len, dropout):
        super().__init__()
        self.d_model = d_model
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout, activation='gelu', batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        length = tokens.size(1)
        positions = torch.arange(length, device=tokens.device)
        x = self.drop(self.tokens(tokens) * math.sqrt(self.d_model) + self.positions(positions))
        # Each position attends to itself and the positions before it.
        causal = torch.triu(torch.full((length, length), float('-inf'), device=tokens.device), diagonal=1)
        x = self.encoder(x, mask=causal)
        return self.head(self.norm(x))


def synthetic_sequences(count, length, vocab, seed):
    """Token sequences one longer than the model's input (the targets are the input shifted by one),
    made once up front, so that a batch costs next to nothing to load."""
    generator = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randint(0, vocab, (count, length + 1), generator=generator))


def train(model, loader, optimizer, scheduler, args):
    """Runs args.iters iterations, over as many epochs as that takes. An iteration's time runs from
    the end of the previous one to the end of its optimizer step, so it includes fetching its batch."""
    model.train()
    done, epoch = 0, 0
    end = time.perf_counter()
    while done < args.iters:
        epoch += 1
        for (sequences,) in loader:
            inputs, targets = sequences[:, :-1], sequences[:, 1:]
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            scheduler.step()
            now = time.perf_counter()
            done += 1
            print(f'iter {done} time {now - end:.6f}', flush=True)
            end = now
            if done == args.iters:
                break
    print(f'epochs {epoch} loss {loss.item():.4f}')


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dataset = synthetic_sequences(args.samples, args.seq_len, args.vocab, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = TransformerLM(args.vocab, args.d_model, args.heads, args.d_ff, args.layers, args.seq_len,
                          args.dropout)
    # Weight decay on the matrices of the layers only, not on biases, norms and embeddings, as
    # GPT-style recipes do.
    def decays(name, parameter):
        return parameter.dim() >= 2 and not name.startswith(('tokens.', 'positions.'))

    named = list(model.named_parameters())
    decay = [p for n, p in named if decays(n, p)]
    no_decay = [p for n, p in named if not decays(n, p)]
    optimizer = torch.optim.AdamW([{'params': decay, 'weight_decay': args.weight_decay},
                                   {'params': no_decay, 'weight_decay': 0.0}], lr=args.lr, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / args.warmup))
    parameters = sum(p.numel() for p in model.parameters())
    print(f'transformer_lm: {parameters} parameters, batch {args.batch_size} x {args.seq_len} tokens')
    train(model, loader, optimizer, scheduler, args)


if __name__ == '__main__':
    main()
