"""Word-level language model on a corpus folder written by make_corpus.py (or WikiText). The
token stream is laid out as side-by-side columns and read --bptt rows at a time by index, with
no DataLoader. Plain SGD with gradient clipping; after an epoch whose validation loss is no
better, the step size is divided by four. The best network is pickled whole to --save and read
back for the final test."""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import lm_nets
from vocab import read_corpus

EVAL_COLUMNS = 10  # validation and test are laid out the same way whatever --batch_size is


def parse_args():
    p = argparse.ArgumentParser(description="Train a word-level language model")
    p.add_argument("--data", default="./data/wikitext-2",
                   help="folder with train.txt, valid.txt and test.txt")
    p.add_argument("--model", default="LSTM", choices=sorted(lm_nets.RECURRENT_KINDS) + ["Transformer"],
                   help="kind of network")
    p.add_argument("--emsize", type=int, default=200, help="width of the word vectors")
    p.add_argument("--nhid", type=int, default=200,
                   help="width of the recurrent state (Transformer: of its feed-forward layers)")
    p.add_argument("--nlayers", type=int, default=2, help="stacked layers")
    p.add_argument("--lr", type=float, default=20, help="SGD step size at the start")
    p.add_argument("--clip", type=float, default=0.25, help="largest gradient norm a step may use")
    p.add_argument("--epochs", type=int, default=40, help="most passes over train.txt")
    p.add_argument("--batch_size", type=int, default=20, help="token columns trained side by side")
    p.add_argument("--bptt", type=int, default=35, help="rows per block: how far back gradients flow")
    p.add_argument("--dropout", type=float, default=0.2, help="dropout probability (0: none)")
    p.add_argument("--tied", action="store_true", help="one matrix for input and output words")
    p.add_argument("--seed", type=int, default=1111, help="seed of torch's generator")
    p.add_argument("--cuda", action="store_true", help="train on the GPU")
    p.add_argument("--log-interval", type=int, default=200, help="blocks between progress lines")
    p.add_argument("--save", default="model.pt", help="file for the best network")
    p.add_argument("--nhead", type=int, default=2, help="attention heads (Transformer only)")
    p.add_argument("--world-size", type=int, default=-1,
                   help="processes in all; -1 reads WORLD_SIZE when --dist-url is env://")
    p.add_argument("--rank", type=int, default=-1,
                   help="this process; -1 reads RANK when --dist-url is env://")
    p.add_argument("--dist-url", default="tcp://127.0.0.1:23456", help="where the processes meet")
    p.add_argument("--dist-backend", default="nccl", help="torch.distributed backend")
    return p.parse_args()


def join_processes(args):
    """Fills in world size and rank from a launcher's variables when asked to (env://), joins the
    process group when there is more than one process, and says whether this process writes."""
    if args.world_size == -1 and args.dist_url == "env://":
        args.world_size = int(os.environ["WORLD_SIZE"])
    if args.world_size <= 1:
        return True
    if args.rank == -1 and args.dist_url == "env://":
        args.rank = int(os.environ["RANK"])
    dist.init_process_group(args.dist_backend, init_method=args.dist_url, world_size=args.world_size,
                            rank=args.rank)
    return args.rank == 0


def as_columns(stream, columns, args, device):
    """The stream cut into `columns` equal runs placed side by side (row t holds the t-th token
    of every run), the leftover tail dropped. Rows are time, so the network sees every run in
    order while training on all of them at once; the runs are independent of each other. With
    several processes each keeps its own share of the runs."""
    rows = len(stream) // columns
    grid = stream[:rows * columns].view(columns, rows).t()
    if args.world_size > 1:
        grid = grid.chunk(args.world_size, dim=1)[args.rank]
    return grid.contiguous().to(device)


def block(grid, row, bptt):
    """Up to bptt rows from `row` as input, and the same rows shifted one step down, flattened,
    as the words to predict."""
    end = min(row + bptt, len(grid) - 1)
    return grid[row:end], grid[row + 1:end + 1].reshape(-1)


def cut_history(state):
    # Same values, no graph: the next backward stops at the start of its own block.
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(part.detach() for part in state)
    return state.detach()


def train_epoch(net, grid, args, lr, epoch):
    net.train()
    starts = range(0, len(grid) - 1, args.bptt)
    state, recent, clock = None, 0.0, time.time()
    for count, row in enumerate(starts, 1):
        inputs, targets = block(grid, row, args.bptt)
        state = cut_history(state)
        net.zero_grad()
        log_probs, state = net(inputs, state)
        loss = F.nll_loss(log_probs, targets)
        loss.backward()
        # Recurrent gradients can explode over a long block; a bounded norm keeps the step sane.
        nn.utils.clip_grad_norm_(net.parameters(), args.clip)
        for weight in net.parameters():
            weight.data -= lr * weight.grad
        recent += loss.item()
        if count % args.log_interval == 0:
            mean = recent / args.log_interval
            per_block = (time.time() - clock) * 1000 / args.log_interval
            print(f"epoch {epoch:3d} block {count:5d}/{len(starts)} lr {lr:.2f} {per_block:6.1f} ms/block "
                  f"loss {mean:.2f} ppl {math.exp(mean):.1f}", flush=True)
            recent, clock = 0.0, time.time()


def mean_loss(net, grid, bptt):
    """Negative log-likelihood per token over the whole grid."""
    net.eval()
    total, state = 0.0, None
    with torch.no_grad():
        for row in range(0, len(grid) - 1, bptt):
            inputs, targets = block(grid, row, bptt)
            log_probs, state = net(inputs, state)
            total += F.nll_loss(log_probs, targets, reduction="sum").item()
    return total / ((len(grid) - 1) * grid.size(1))


def main():
    args = parse_args()
    writes = join_processes(args)
    torch.manual_seed(args.seed)
    if torch.cuda.is_available() and not args.cuda:
        print("note: a GPU is visible; --cuda would train on it")
    device = torch.device("cuda" if args.cuda else "cpu")

    vocabulary, (train_ids, valid_ids, test_ids) = read_corpus(args.data)
    train_grid = as_columns(train_ids, args.batch_size, args, device)
    valid_grid = as_columns(valid_ids, EVAL_COLUMNS, args, device)
    test_grid = as_columns(test_ids, EVAL_COLUMNS, args, device)
    print(f"corpus: {len(train_ids)} training tokens, {len(vocabulary)} distinct words")

    if args.model == "Transformer":
        net = lm_nets.CausalTransformerLM(len(vocabulary), args.emsize, args.nhead, args.nhid, args.nlayers,
                                          args.dropout)
    else:
        net = lm_nets.RecurrentLM(args.model, len(vocabulary), args.emsize, args.nhid, args.nlayers,
                                  args.dropout, args.tied)
    net = net.to(device)
    if args.world_size > 1:
        net = nn.parallel.DistributedDataParallel(net)

    lr, best = args.lr, math.inf
    try:
        for epoch in range(1, args.epochs + 1):
            clock = time.time()
            train_epoch(net, train_grid, args, lr, epoch)
            loss = mean_loss(net, valid_grid, args.bptt)
            print(f"end of epoch {epoch}: {time.time() - clock:.1f}s, valid loss {loss:.2f}, "
                  f"ppl {math.exp(loss):.1f}", flush=True)
            if loss < best:
                best = loss
                if writes:
                    torch.save(net, args.save)
            else:
                lr /= 4  # no progress at this step size: take smaller steps
    except KeyboardInterrupt:
        print("interrupted: testing the best network so far")

    net = torch.load(args.save)
    if isinstance(net, lm_nets.RecurrentLM):
        # Unpickled recurrent weights are separate tensors; cuDNN wants them in one block again.
        net.rnn.flatten_parameters()
    loss = mean_loss(net, test_grid, args.bptt)
    print(f"end of training: test loss {loss:.2f}, ppl {math.exp(loss):.1f}")


if __name__ == "__main__":
    main()
