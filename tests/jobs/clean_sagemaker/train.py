"""Wine quality (low / medium / high) from eleven lab measurements, with a small MLP, written as
a SageMaker script-mode entry point. SageMaker passes the hyperparameters as --name value
arguments and describes the container in SM_* variables: the "training" channel's folder, the
model folder it uploads, the hosts of the job and their GPUs. model_fn is what the hosting
container calls to load the trained model."""
import argparse
import json
import logging
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger("wine")
log.addHandler(logging.StreamHandler(sys.stdout))
log.setLevel(logging.INFO)

FEATURES, GRADES = 11, 3


def wine_mlp(width=64):
    return nn.Sequential(nn.Linear(FEATURES, width), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(width, width), nn.ReLU(), nn.Linear(width, GRADES))


def read_table(path):
    """grade,feature1..feature11 rows -> (features, grades)."""
    rows = np.loadtxt(path, delimiter=",", dtype=np.float32)
    return torch.from_numpy(rows[:, 1:]), torch.from_numpy(rows[:, 0]).long()


def cli():
    p = argparse.ArgumentParser(description="SageMaker training entry point")
    # Hyperparameters, from the estimator's hyperparameters={...}.
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--test-batch-size", type=int, default=1000)
    p.add_argument("--learning-rate", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log-interval", type=int, default=5, help="steps between progress lines")
    p.add_argument("--backend", default=None, help="torch.distributed backend when there are several hosts")
    # The training container, as SageMaker describes it.
    env = os.environ
    p.add_argument("--hosts", type=json.loads, default=env["SM_HOSTS"], help="JSON list of host names")
    p.add_argument("--current-host", default=env["SM_CURRENT_HOST"])
    p.add_argument("--model-dir", default=env["SM_MODEL_DIR"])
    p.add_argument("--data-dir", default=env["SM_CHANNEL_TRAINING"])
    p.add_argument("--output-data-dir", default=env["SM_OUTPUT_DATA_DIR"])
    p.add_argument("--num-gpus", type=int, default=env["SM_NUM_GPUS"])
    return p.parse_args()


def join_hosts(args):
    """One process per host; every host joins the group when the job spans more than one."""
    if len(args.hosts) < 2 or args.backend is None:
        return False
    rank = args.hosts.index(args.current_host)
    dist.init_process_group(args.backend, rank=rank, world_size=len(args.hosts))
    log.info("host %s is rank %d of %d (%s)", args.current_host, rank, len(args.hosts), args.backend)
    return True


def accuracy(model, loader, device):
    model.eval()
    right, loss_sum = 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            scores = model(x.to(device))
            loss_sum += nn.functional.cross_entropy(scores, y.to(device), reduction="sum").item()
            right += (scores.argmax(1) == y.to(device)).sum().item()
    n = len(loader.dataset)
    return loss_sum / n, right / n


def main():
    args = cli()
    torch.manual_seed(args.seed)
    distributed = join_hosts(args)
    device = torch.device("cuda" if args.num_gpus > 0 else "cpu")
    extra = {"num_workers": 1, "pin_memory": True} if device.type == "cuda" else {}

    x, y = read_table(os.path.join(args.data_dir, "wine_train.csv"))
    # Standardise with the training split's statistics, which are saved with the model.
    mean, std = x.mean(0), x.std(0)
    train_set = TensorDataset((x - mean) / std, y)
    vx, vy = read_table(os.path.join(args.data_dir, "wine_val.csv"))
    val_loader = DataLoader(TensorDataset((vx - mean) / std, vy), batch_size=args.test_batch_size, **extra)
    sampler = DistributedSampler(train_set) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                              **extra)

    model = nn.DataParallel(wine_mlp()).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for step, (xb, yb) in enumerate(train_loader, 1):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xb.to(device)), yb.to(device))
            loss.backward()
            if distributed:
                # Plain processes, no DDP: average the gradients across hosts by hand.
                for param in model.parameters():
                    dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)
                    param.grad /= dist.get_world_size()
            optimizer.step()
            if step % args.log_interval == 0:
                log.info("epoch %d step %d/%d: loss %.4f", epoch, step, len(train_loader), loss.item())
        val_loss, val_acc = accuracy(model, val_loader, device)
        log.info("epoch %d: validation loss %.4f, accuracy %.3f", epoch, val_loss, val_acc)

    weights = {k: v.cpu() for k, v in model.state_dict().items()}
    torch.save({"state_dict": weights, "mean": mean, "std": std}, os.path.join(args.model_dir, "model.pth"))
    with open(os.path.join(args.output_data_dir, "hyperparameters_used.json"), "w") as f:
        json.dump({k: v for k, v in vars(args).items() if k != "hosts"}, f)


def model_fn(model_dir):
    """Hosting: rebuilds the network from model.pth (the keys carry DataParallel's prefix)."""
    with open(os.path.join(model_dir, "model.pth"), "rb") as f:
        saved = torch.load(f, map_location="cpu")
    model = nn.DataParallel(wine_mlp())
    model.load_state_dict(saved["state_dict"])
    return model.to(torch.device("cuda" if torch.cuda.is_available() else "cpu"))


if __name__ == "__main__":
    main()
