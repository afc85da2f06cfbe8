"""Classifies the pictures of an ImageFolder tree (DATA/train and DATA/val, one folder per
class) with a torchvision architecture chosen by name. SGD whose step shrinks tenfold every 30
epochs, top-1/top-5 accuracy on val after every epoch, checkpoint.pth.tar written each epoch
and copied to model_best.pth.tar when top-1 improves, --resume and --evaluate. The options for
several processes are there too; with their defaults one process trains alone."""
import argparse
import os
import random
import shutil
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms

ARCHITECTURES = sorted(name for name in torchvision.models.list_models(module=torchvision.models))
# Colour statistics of ImageNet's training pictures, the usual choice for torchvision networks.
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def options():
    p = argparse.ArgumentParser(description="Train an image classifier on an ImageFolder tree")
    p.add_argument("data", help="folder with train/ and val/")
    p.add_argument("-a", "--arch", default="resnet18", choices=ARCHITECTURES, metavar="ARCH",
                   help="a torchvision.models name (default resnet18)")
    p.add_argument("-j", "--workers", type=int, default=4, help="DataLoader processes")
    p.add_argument("--epochs", type=int, default=90, help="last epoch (counted from 0)")
    p.add_argument("-b", "--batch-size", type=int, default=256, help="pictures per step over all GPUs")
    p.add_argument("--lr", type=float, default=0.1, help="step size of the first 30 epochs")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--wd", "--weight-decay", type=float, default=1e-4, dest="weight_decay")
    p.add_argument("-p", "--print-freq", type=int, default=10, help="steps between progress lines")
    p.add_argument("--crop-size", type=int, default=224, help="side of the training crop")
    p.add_argument("--resume", default="", help="a checkpoint.pth.tar to continue from")
    p.add_argument("-e", "--evaluate", action="store_true", help="only measure accuracy on val")
    p.add_argument("--checkpoint-dir", default=".", help="where the .pth.tar files go")
    p.add_argument("--seed", type=int, help="seed the generators (and make cuDNN deterministic)")
    p.add_argument("--gpu", type=int, help="train on this GPU only")
    p.add_argument("--world-size", type=int, default=-1, help="nodes taking part; -1: WORLD_SIZE under env://")
    p.add_argument("--rank", type=int, default=-1, help="this node's rank; -1: RANK under env://")
    p.add_argument("--dist-url", default="tcp://224.66.41.62:23456", help="rendezvous address, or env://")
    p.add_argument("--dist-backend", default="nccl")
    p.add_argument("--multiprocessing-distributed", action="store_true",
                   help="spawn one process per GPU of this node")
    return p.parse_args()


def picture_sets(args):
    norm = transforms.Normalize(MEAN, STD)
    train = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(args.crop_size), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), norm]))
    # Validation resizes to 8/7 of the crop first, as 256 is to 224.
    val = torchvision.datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(args.crop_size * 8 // 7), transforms.CenterCrop(args.crop_size),
        transforms.ToTensor(), norm]))
    return train, val


def hits_in_top(logits, labels, ks):
    """How many labels are among the k highest logits, for each k."""
    k_max = min(max(ks), logits.size(1))
    ranked = logits.topk(k_max, dim=1).indices
    found = ranked == labels.unsqueeze(1)
    return [found[:, :min(k, k_max)].any(dim=1).sum().item() for k in ks]


def run_epoch(net, loader, device, args, optimizer=None, title=""):
    """One pass over `loader`: trains when given an optimizer, else only measures. Returns the
    top-1 and top-5 accuracy in percent."""
    loss_fn = nn.CrossEntropyLoss()
    seen, top1, top5, loss_sum = 0, 0, 0, 0.0
    started = time.time()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = net(x)
        loss = loss_fn(logits, y)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        h1, h5 = hits_in_top(logits.detach(), y, (1, 5))
        seen, top1, top5 = seen + len(y), top1 + h1, top5 + h5
        loss_sum += loss.item() * len(y)
        if step % args.print_freq == 0:
            print(f"{title} {step + 1}/{len(loader)}  loss {loss_sum / seen:.4f}"
                  f"  top1 {100 * top1 / seen:.2f}%  {(time.time() - started) / (step + 1):.3f}s/step",
                  flush=True)
    return 100 * top1 / max(seen, 1), 100 * top5 / max(seen, 1)


def place(net, gpu, args, gpus_here):
    """Puts the network where this process trains it; returns it and its device."""
    if not torch.cuda.is_available():
        print("no GPU: training on the CPU")
        return net, torch.device("cpu")
    if gpu is not None:
        torch.cuda.set_device(gpu)
        net = net.cuda(gpu)
        if args.distributed:
            # One GPU per process: each takes its share of the batch and of the loader workers.
            args.batch_size //= gpus_here
            args.workers = (args.workers + gpus_here - 1) // gpus_here
            net = nn.parallel.DistributedDataParallel(net, device_ids=[gpu])
        return net, torch.device("cuda", gpu)
    net = net.cuda()
    wrap = nn.parallel.DistributedDataParallel if args.distributed else nn.DataParallel
    return wrap(net), torch.device("cuda")


def worker(gpu, gpus_here, args):
    if gpu is not None:
        print("training on GPU", gpu)
    if args.distributed:
        if args.rank == -1 and args.dist_url == "env://":
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            args.rank = args.rank * gpus_here + gpu
        dist.init_process_group(args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    writes = not args.multiprocessing_distributed or args.rank % gpus_here == 0

    classes = len(os.listdir(os.path.join(args.data, "train")))
    print(f"building {args.arch} for {classes} classes")
    net, device = place(torchvision.models.get_model(args.arch, num_classes=classes), gpu, args, gpus_here)
    optimizer = torch.optim.SGD(net.parameters(), args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    first_epoch, best = 0, 0.0
    if args.resume:
        saved = torch.load(args.resume, map_location=device)
        for part, holder in (("state_dict", net), ("optimizer", optimizer), ("scheduler", schedule)):
            holder.load_state_dict(saved[part])
        first_epoch, best = saved["epoch"], saved["best_acc1"]
        print(f"resumed from {args.resume} at epoch {first_epoch}")
    torch.backends.cudnn.benchmark = args.seed is None

    train_set, val_set = picture_sets(args)
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True) if args.distributed else None
    train_loader = DataLoader(train_set, args.batch_size, shuffle=train_sampler is None,
                              sampler=train_sampler, num_workers=args.workers, pin_memory=True)
    val_loader = DataLoader(val_set, args.batch_size, sampler=val_sampler, num_workers=args.workers,
                            pin_memory=True)

    def measure():
        net.eval()
        with torch.no_grad():
            top1, top5 = run_epoch(net, val_loader, device, args, title="val")
        print(f"val: top1 {top1:.3f}%  top5 {top5:.3f}%", flush=True)
        return top1

    if args.evaluate:
        measure()
        return
    for epoch in range(first_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        net.train()
        run_epoch(net, train_loader, device, args, optimizer, title=f"epoch {epoch}")
        top1 = measure()
        schedule.step()
        improved, best = top1 > best, max(top1, best)
        if writes:
            state = {"epoch": epoch + 1, "arch": args.arch, "state_dict": net.state_dict(), "best_acc1": best,
                     "optimizer": optimizer.state_dict(), "scheduler": schedule.state_dict()}
            latest = os.path.join(args.checkpoint_dir, "checkpoint.pth.tar")
            torch.save(state, latest)
            if improved:
                shutil.copyfile(latest, os.path.join(args.checkpoint_dir, "model_best.pth.tar"))


def main():
    args = options()
    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        torch.backends.cudnn.deterministic = True
        print("seeded: cuDNN is deterministic, which is slower")
    if args.world_size == -1 and args.dist_url == "env://":
        args.world_size = int(os.environ["WORLD_SIZE"])
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    gpus_here = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size *= gpus_here
        mp.spawn(worker, nprocs=gpus_here, args=(gpus_here, args))
    else:
        worker(args.gpu, gpus_here, args)


if __name__ == "__main__":
    main()
