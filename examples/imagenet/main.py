"""Trains one of torchvision's classification networks, picked by name with -a, on ImageNet.

DATA/train and DATA/val hold one folder of images per class, the layout torchvision's ImageFolder
reads. With --dummy both splits are random images of ImageNet's sizes instead, enough to exercise
the job without the data set. Each epoch is a pass of SGD over the training split, then the top-1
and top-5 accuracy on the validation split; checkpoint.pth.tar in --checkpoint-dir is rewritten
after every epoch and copied to model_best.pth.tar whenever the top-1 accuracy is the best yet.
On GPUs the network runs under DataParallel, which splits every batch across the visible devices.
"""
import argparse
import itertools
import os
import shutil
import time

import torch
import torch.nn.functional as F
import torchvision
from torchvision import datasets, transforms

# ILSVRC-2012: images in each split, classes, and the per-channel statistics of its training set.
TRAIN_IMAGES, VAL_IMAGES, CLASSES = 1_281_167, 50_000, 1000
CHANNEL_MEAN, CHANNEL_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

# Only the classifiers: detection, segmentation and video networks live in sub-packages.
ARCHITECTURES = sorted(torchvision.models.list_models(module=torchvision.models))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('data', nargs='?', default='imagenet', metavar='DATA',
                   help='folder holding train/ and val/ (default: imagenet; unused with --dummy)')
    p.add_argument('-a', '--arch', default='resnet18', choices=ARCHITECTURES, metavar='NAME',
                   help='torchvision architecture, e.g. resnet50 or vit_b_16 (default: resnet18)')
    p.add_argument('--dummy', action='store_true', help='train on random images, not on DATA')
    p.add_argument('--image-size', type=int, default=224, metavar='PIXELS',
                   help='side of the square crops the network sees (default: 224)')
    p.add_argument('--epochs', type=int, default=90, metavar='N', help='passes over the training split')
    p.add_argument('-b', '--batch-size', type=int, default=256, metavar='N',
                   help='images per step over all GPUs together (default: 256)')
    p.add_argument('-j', '--workers', type=int, default=4, metavar='N',
                   help='DataLoader worker processes (default: 4)')
    p.add_argument('--lr', '--learning-rate', dest='lr', type=float, default=0.1, metavar='LR',
                   help='starting learning rate, divided by 10 every 30 epochs (default: 0.1)')
    p.add_argument('--momentum', type=float, default=0.9, help='SGD momentum (default: 0.9)')
    p.add_argument('--wd', '--weight-decay', dest='weight_decay', type=float, default=1e-4,
                   help='L2 penalty on the weights (default: 1e-4)')
    p.add_argument('-p', '--print-freq', type=int, default=10, metavar='N',
                   help='log every N batches (default: 10)')
    p.add_argument('--pretrained', action='store_true', help="start from torchvision's ImageNet weights")
    p.add_argument('--resume', default='', metavar='FILE', help='carry on from this checkpoint')
    p.add_argument('-e', '--evaluate', action='store_true',
                   help='only measure the accuracy on the validation split')
    p.add_argument('--gpu', type=int, default=None, metavar='INDEX',
                   help='use this one GPU instead of DataParallel over all of them')
    p.add_argument('--seed', type=int, default=None,
                   help='fix the random seed and make cuDNN deterministic')
    p.add_argument('--checkpoint-dir', default='.', metavar='DIR',
                   help='where checkpoint.pth.tar and model_best.pth.tar are written (default: .)')
    p.add_argument('--max-batches', type=int, default=None, metavar='N',
                   help='end every training and validation pass after N batches (default: no limit)')
    return p.parse_args()


def image_sets(args):
    """The training and validation datasets."""
    side = args.image_size
    if args.dummy:
        print('=> random images stand in for', args.data)
        shape, to_tensor = (3, side, side), transforms.ToTensor()
        train = datasets.FakeData(size=TRAIN_IMAGES, image_size=shape, num_classes=CLASSES,
                                  transform=to_tensor)
        # Seeded past the training images, so that validation never sees one of them again.
        val = datasets.FakeData(size=VAL_IMAGES, image_size=shape, num_classes=CLASSES,
                                transform=to_tensor, random_offset=TRAIN_IMAGES)
        return train, val
    normalise = transforms.Normalize(CHANNEL_MEAN, CHANNEL_STD)
    augmented = transforms.Compose([transforms.RandomResizedCrop(side), transforms.RandomHorizontalFlip(),
                                    transforms.ToTensor(), normalise])
    # Validation keeps the classic 256-pixel resize around a 224-pixel centre crop, scaled to `side`.
    centred = transforms.Compose([transforms.Resize(side * 8 // 7), transforms.CenterCrop(side),
                                  transforms.ToTensor(), normalise])
    return (datasets.ImageFolder(os.path.join(args.data, 'train'), augmented),
            datasets.ImageFolder(os.path.join(args.data, 'val'), centred))


def on_devices(net, gpu):
    """The network placed for training, and the device its input batches go to."""
    if not torch.cuda.is_available():
        print('=> no GPU: running on the CPU')
        return net, torch.device('cpu')
    if gpu is not None:
        device = torch.device('cuda', gpu)
        return net.to(device), device
    device = torch.device('cuda')
    return torch.nn.DataParallel(net).to(device), device


def batches(loader, limit):
    return loader if limit is None else itertools.islice(loader, limit)


def top_k_accuracy(logits, labels, ks=(1, 5)):
    """Percent of the batch whose label is among the network's k best guesses, for each k."""
    best = logits.topk(min(max(ks), logits.size(1)), dim=1).indices
    hit = best == labels.unsqueeze(1)
    return [100.0 * hit[:, :k].any(dim=1).float().mean().item() for k in ks]


class EpochTotals:
    """Per-image averages of what a pass measured, weighted by batch size."""

    def __init__(self):
        self.images = 0
        self.sums = {}

    def add(self, images, **values):
        self.images += images
        for name, value in values.items():
            self.sums[name] = self.sums.get(name, 0.0) + value * images

    def __getitem__(self, name):
        return self.sums.get(name, 0.0) / max(self.images, 1)


def train_epoch(net, loader, optimiser, device, epoch, args):
    net.train()
    totals = EpochTotals()
    waited = 0.0
    started = ready = time.perf_counter()
    for n, (images, labels) in enumerate(batches(loader, args.max_batches), 1):
        waited += time.perf_counter() - ready
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        logits = net(images)
        loss = F.cross_entropy(logits, labels)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        top1, top5 = top_k_accuracy(logits.detach(), labels)
        totals.add(labels.size(0), loss=loss.item(), top1=top1, top5=top5)
        if (n - 1) % args.print_freq == 0:
            per_batch = (time.perf_counter() - started) / n
            print(f'Epoch: {epoch} [{n}/{len(loader)}] loss {totals["loss"]:.4f} top-1 {totals["top1"]:.2f}% '
                  f'top-5 {totals["top5"]:.2f}% | {per_batch:.3f} s/batch, {waited / n:.3f} s of it loading')
        ready = time.perf_counter()


@torch.no_grad()
def validate(net, loader, device, args):
    """Mean top-1 accuracy over the validation split."""
    net.eval()
    totals = EpochTotals()
    for n, (images, labels) in enumerate(batches(loader, args.max_batches), 1):
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        logits = net(images)
        top1, top5 = top_k_accuracy(logits, labels)
        totals.add(labels.size(0), loss=F.cross_entropy(logits, labels).item(), top1=top1, top5=top5)
        if (n - 1) % args.print_freq == 0:
            print(f'Test: [{n}/{len(loader)}] loss {totals["loss"]:.4f} top-1 {totals["top1"]:.2f}% '
                  f'top-5 {totals["top5"]:.2f}%')
    print(f' * validation: top-1 {totals["top1"]:.3f}% top-5 {totals["top5"]:.3f}% loss {totals["loss"]:.4f}')
    return totals['top1']


def write_checkpoint(state, best, folder):
    latest = os.path.join(folder, 'checkpoint.pth.tar')
    torch.save(state, latest)
    if best:
        shutil.copyfile(latest, os.path.join(folder, 'model_best.pth.tar'))


def main():
    args = parse_args()
    if args.seed is not None:
        torch.manual_seed(args.seed)
        torch.backends.cudnn.deterministic = True
    else:
        # Every batch has the same shape, so cuDNN's search for the fastest kernels pays off.
        torch.backends.cudnn.benchmark = True

    print(f"=> {'pretrained' if args.pretrained else 'new'} {args.arch}")
    bare = torchvision.models.get_model(args.arch, weights='DEFAULT' if args.pretrained else None)
    # Placed before any optimiser state is loaded, so that the loaded buffers follow the parameters.
    net, device = on_devices(bare, args.gpu)
    optimiser = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    schedule = torch.optim.lr_scheduler.StepLR(optimiser, step_size=30, gamma=0.1)
    first_epoch, best_top1 = 0, 0.0
    if args.resume:
        saved = torch.load(args.resume, map_location=device)
        bare.load_state_dict(saved['state_dict'])
        optimiser.load_state_dict(saved['optimizer'])
        schedule.load_state_dict(saved['scheduler'])
        first_epoch, best_top1 = saved['epoch'], saved['best_acc1']
        print(f'=> resumed from {args.resume} after epoch {first_epoch}')

    train_set, val_set = image_sets(args)
    loader_options = dict(batch_size=args.batch_size, num_workers=args.workers,
                          pin_memory=device.type == 'cuda')
    train_loader = torch.utils.data.DataLoader(train_set, shuffle=True, **loader_options)
    val_loader = torch.utils.data.DataLoader(val_set, shuffle=False, **loader_options)

    if args.evaluate:
        validate(net, val_loader, device, args)
        return
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    for epoch in range(first_epoch, args.epochs):
        train_epoch(net, train_loader, optimiser, device, epoch, args)
        top1 = validate(net, val_loader, device, args)
        schedule.step()
        improved = top1 > best_top1
        best_top1 = max(best_top1, top1)
        # The bare network's weights, so that the file loads whether or not DataParallel is used.
        write_checkpoint({'epoch': epoch + 1, 'arch': args.arch, 'state_dict': bare.state_dict(),
                          'best_acc1': best_top1, 'optimizer': optimiser.state_dict(),
                          'scheduler': schedule.state_dict()}, improved, args.checkpoint_dir)


if __name__ == '__main__':
    main()
