"""Pre-trains BERT (masked language model and next-sentence prediction) on synthetic token
sequences, and prints each training iteration's wall time. The sizes default to BERT-Large
(24 layers of width 1024, 16 heads, a 4096-wide feed-forward, a 30,522-token vocabulary), post-norm
encoder layers with GELU, the output embedding tied to the input one, AdamW. The model stays on the
CPU here; with --amp its forward pass runs under CUDA autocast (FP16), which changes nothing on a
CPU and is what a dry run projects onto a GPU's tensor cores."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

IGNORED = -100  # the label of a position the masked-language-model loss skips


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--vocab', type=int, default=30522, help='vocabulary size (default: 30522)')
    p.add_argument('--hidden', type=int, default=1024, help='model width (default: 1024)')
    p.add_argument('--layers', type=int, default=24, help='encoder layers (default: 24)')
    p.add_argument('--heads', type=int, default=16, help='attention heads (default: 16)')
    p.add_argument('--intermediate', type=int, default=4096, help='feed-forward width (default: 4096)')
    p.add_argument('--max-positions', type=int, default=512, help='position embeddings (default: 512)')
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--seq-len', type=int, default=128, help='tokens per sequence (default: 128)')
    p.add_argument('--mask-fraction', type=float, default=0.15,
                   help='tokens the MLM predicts (default: 0.15)')
    p.add_argument('-b', '--batch-size', type=int, default=8, help='sequences per iteration (default: 8)')
    p.add_argument('--samples', type=int, default=64, help='synthetic training sequences (default: 64)')
    p.add_argument('--iters', type=int, default=6, help='training iterations to run (default: 6)')
    p.add_argument('--lr', type=float, default=1e-4, help='peak learning rate (default: 1e-4)')
    p.add_argument('--weight-decay', type=float, default=0.01)
    p.add_argument('--warmup', type=int, default=10000, help='warm-up iterations (default: 10000)')
    p.add_argument('--amp', action='store_true', help='forward pass under CUDA autocast (FP16)')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    if args.seq_len > args.max_positions:
        p.error('--seq-len must be at most --max-positions')
    return args


class Bert(nn.Module):
    """The encoder with BERT's embeddings and its two pre-training heads."""

    def __init__(self, args):
        super().__init__()
        self.words = nn.Embedding(args.vocab, args.hidden)
        self.positions = nn.Embedding(args.max_positions, args.hidden)
        self.segments = nn.Embedding(2, args.hidden)
        self.embedding_norm = nn.LayerNorm(args.hidden, eps=1e-12)
        self.drop = nn.Dropout(args.dropout)
        layer = nn.TransformerEncoderLayer(args.hidden, args.heads, args.intermediate, args.dropout,
                                           activation='gelu', layer_norm_eps=1e-12, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, args.layers)
        # Masked language model: a transform, then the vocabulary through the input embedding.
        self.transform = nn.Sequential(nn.Linear(args.hidden, args.hidden), nn.GELU(),
                                       nn.LayerNorm(args.hidden, eps=1e-12))
        self.vocab_bias = nn.Parameter(torch.zeros(args.vocab))
        # Next-sentence prediction, from the first token's pooled state.
        self.pooler = nn.Sequential(nn.Linear(args.hidden, args.hidden), nn.Tanh())
        self.next_sentence = nn.Linear(args.hidden, 2)

    def forward(self, tokens, segments):
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.words(tokens) + self.positions(positions) + self.segments(segments)
        x = self.encoder(self.drop(self.embedding_norm(x)))
        word_logits = F.linear(self.transform(x), self.words.weight, self.vocab_bias)
        return word_logits, self.next_sentence(self.pooler(x[:, 0]))


def synthetic_pairs(args):
    """Sentence pairs made once up front: tokens, segment ids (the second sentence from a random
    point), masked-LM labels (IGNORED except at the masked positions) and next-sentence labels."""
    generator = torch.Generator().manual_seed(args.seed)
    count, length = args.samples, args.seq_len
    tokens = torch.randint(0, args.vocab, (count, length), generator=generator)
    split = torch.randint(1, length, (count, 1), generator=generator)
    segments = (torch.arange(length).unsqueeze(0) >= split).long()
    masked = torch.rand(count, length, generator=generator) < args.mask_fraction
    labels = torch.where(masked, tokens, torch.full_like(tokens, IGNORED))
    next_labels = torch.randint(0, 2, (count,), generator=generator)
    return TensorDataset(tokens, segments, labels, next_labels)


def train(model, loader, optimizer, scheduler, args):
    """Runs args.iters iterations, over as many epochs as that takes. An iteration's time runs from
    the end of the previous one to the end of its optimizer step, so it includes fetching its batch."""
    model.train()
    done, epoch = 0, 0
    end = time.perf_counter()
    while done < args.iters:
        epoch += 1
        for tokens, segments, labels, next_labels in loader:
            with torch.autocast('cuda', dtype=torch.float16, enabled=args.amp):
                word_logits, next_logits = model(tokens, segments)
                loss = (F.cross_entropy(word_logits.reshape(-1, args.vocab), labels.reshape(-1),
                                        ignore_index=IGNORED)
                        + F.cross_entropy(next_logits, next_labels))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
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
    loader = DataLoader(synthetic_pairs(args), batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = Bert(args)
    # No weight decay on biases and normalisations, as BERT's recipe has it.
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{'params': decay, 'weight_decay': args.weight_decay},
                                   {'params': no_decay, 'weight_decay': 0.0}], lr=args.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / args.warmup))
    parameters = sum(p.numel() for p in model.parameters())
    print(f'bert: {parameters} parameters, batch {args.batch_size} x {args.seq_len} tokens')
    train(model, loader, optimizer, scheduler, args)


if __name__ == '__main__':
    main()
