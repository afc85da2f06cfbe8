"""Trains a word-level language model (an LSTM unless --model says otherwise) on a text corpus.

--data is a folder with train.txt, valid.txt and test.txt, WikiText-2's layout (corpus.py reads
it). Each split becomes one long stream of word ids laid out in side-by-side columns, and the
model reads it a window of --bptt rows at a time, taking the windows by their row index rather
than through a DataLoader. An epoch is one pass of plain SGD over the training columns, followed by
the validation loss: when it is the best so far the weights are saved to --save, otherwise the
learning rate is divided by 4. The saved weights are then scored on the test split.
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F

import corpus
import networks

# Columns of the validation and test streams: their loss does not depend on it, only the speed.
EVAL_COLUMNS = 10


def parse_args():
    p = argparse.ArgumentParser(description='Train a word-level language model.')
    p.add_argument('--data', default='./data', metavar='DIR',
                   help='folder with train.txt, valid.txt and test.txt (default: ./data)')
    p.add_argument('--model', default='LSTM', choices=networks.KINDS, help='network type (default: LSTM)')
    p.add_argument('--emsize', type=int, default=200, help='word vector size (default: 200)')
    p.add_argument('--nhid', type=int, default=200,
                   help='units per recurrent layer, or the Transformer feed-forward size (default: 200)')
    p.add_argument('--nlayers', type=int, default=2, help='stacked layers (default: 2)')
    p.add_argument('--nhead', type=int, default=2, help='attention heads of the Transformer (default: 2)')
    p.add_argument('--dropout', type=float, default=0.2, help='dropout probability (default: 0.2)')
    p.add_argument('--tied', action='store_true', help='share one matrix between input and output words')
    p.add_argument('--lr', type=float, default=20.0, help='starting SGD step size (default: 20)')
    p.add_argument('--clip', type=float, default=0.25, help='largest gradient norm (default: 0.25)')
    p.add_argument('--epochs', type=int, default=40, help='most epochs to train (default: 40)')
    p.add_argument('--batch-size', type=int, default=20, metavar='N',
                   help='columns the training stream is cut into (default: 20)')
    p.add_argument('--bptt', type=int, default=35, help='rows per window (default: 35)')
    p.add_argument('--seed', type=int, default=1111, help='random seed (default: 1111)')
    p.add_argument('--cuda', action='store_true', help='train on the GPU')
    p.add_argument('--log-interval', type=int, default=200, metavar='N',
                   help='print the training loss every N windows (default: 200)')
    p.add_argument('--save', default='model.pt', metavar='FILE',
                   help='where the best weights are kept (default: model.pt)')
    p.add_argument('--max-batches', type=int, default=None, metavar='N',
                   help='end every pass over a split after N windows (default: no limit)')
    return p.parse_args()


def as_columns(stream, columns, device):
    """The stream cut into `columns` equal pieces standing side by side, one row per time step;
    the last few words, too few for a full row, are dropped. The columns are read in parallel and
    independently: no state or gradient crosses from one to the next."""
    rows = stream.numel() // columns
    return stream[:rows * columns].view(columns, rows).t().contiguous().to(device)


def window_starts(text, bptt, limit):
    """The first row of each window; only the first `limit` windows when a limit is given."""
    starts = range(0, text.size(0) - 1, bptt)
    return starts if limit is None else starts[:limit]


def window(text, start, bptt):
    """Up to bptt rows from `start` as the input, and the rows one word later as the targets."""
    stop = min(start + bptt, text.size(0) - 1)
    return text[start:stop], text[start + 1:stop + 1].flatten()


def perplexity(loss):
    # A diverged run (RNN_RELU at the default step size, say) would overflow math.exp.
    return math.exp(loss) if loss < 700 else math.inf


def detached(state):
    # The values carry over into the next window, the graph does not: backpropagation through
    # time stops at the window's first row.
    if isinstance(state, tuple):
        return tuple(part.detach() for part in state)
    return None if state is None else state.detach()


def train_epoch(model, text, optimiser, epoch, args):
    model.train()
    state = model.initial_state(text.size(1))
    windows = len(range(0, text.size(0) - 1, args.bptt))
    loss_sum, since = 0.0, time.time()
    for n, start in enumerate(window_starts(text, args.bptt, args.max_batches), 1):
        inputs, targets = window(text, start, args.bptt)
        logits, state = model(inputs, detached(state))
        loss = F.cross_entropy(logits, targets)
        optimiser.zero_grad()
        loss.backward()
        # A recurrent network's gradient can grow by orders of magnitude in a single step.
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimiser.step()
        loss_sum += loss.item()
        if n % args.log_interval == 0:
            mean, took = loss_sum / args.log_interval, (time.time() - since) / args.log_interval
            print(f'| epoch {epoch:3d} | window {n:5d}/{windows} | lr {optimiser.param_groups[0]["lr"]:.3g} '
                  f'| loss {mean:.2f} | perplexity {perplexity(mean):.2f} | {took * 1000:.1f} ms a window')
            loss_sum, since = 0.0, time.time()


@torch.no_grad()
def loss_per_word(model, text, args):
    """Mean cross-entropy of the model's next-word guesses over the windows of `text` it read."""
    model.eval()
    state = model.initial_state(text.size(1))
    loss_sum, words = 0.0, 0
    for start in window_starts(text, args.bptt, args.max_batches):
        inputs, targets = window(text, start, args.bptt)
        logits, state = model(inputs, state)
        loss_sum += F.cross_entropy(logits, targets, reduction='sum').item()
        words += targets.numel()
    return loss_sum / words


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = torch.device('cuda' if args.cuda else 'cpu')

    vocabulary, streams = corpus.read_corpus(args.data)
    train_text = as_columns(streams['train'], args.batch_size, device)
    valid_text = as_columns(streams['valid'], EVAL_COLUMNS, device)
    test_text = as_columns(streams['test'], EVAL_COLUMNS, device)

    model = networks.build(args.model, len(vocabulary), args).to(device)
    weights = sum(p.numel() for p in model.parameters())
    print(f'{args.model}, {weights} weights; {len(vocabulary)} words in the vocabulary, '
          f'{streams["train"].numel()} in the training text')
    optimiser = torch.optim.SGD(model.parameters(), lr=args.lr)

    best = math.inf
    for epoch in range(1, args.epochs + 1):
        began = time.time()
        train_epoch(model, train_text, optimiser, epoch, args)
        loss = loss_per_word(model, valid_text, args)
        print(f'| end of epoch {epoch:3d} | {time.time() - began:.2f} s | validation loss {loss:.2f} '
              f'| perplexity {perplexity(loss):.2f}')
        if loss < best:
            best = loss
            torch.save(model.state_dict(), args.save)
        else:
            # No progress on held-out text: smaller steps rather than more of the same.
            for group in optimiser.param_groups:
                group['lr'] /= 4

    # The test scores the weights that validated best, which need not be the last ones.
    model.load_state_dict(torch.load(args.save, map_location=device))
    loss = loss_per_word(model, test_text, args)
    print(f'| End of training | test loss {loss:.2f} | perplexity {perplexity(loss):.2f}')


if __name__ == '__main__':
    main()
