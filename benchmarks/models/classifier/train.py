"""Trains a torchvision image classifier on synthetic images, as its ImageNet recipe does (the
architecture, optimizer, schedule and loss are arguments), and prints each training iteration's
wall time. The model stays on the CPU here; with --amp its forward pass runs under CUDA autocast
(FP16), which changes nothing on a CPU and is what a dry run projects onto a GPU's tensor cores."""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset

ARCHITECTURES = ('resnet18', 'resnet50', 'mobilenet_v2', 'squeezenet1_1', 'shufflenet_v2_x1_0', 'densenet121',
                 'efficientnet_b0', 'vgg11', 'alexnet')


def schedule(text):
    """--schedule: `step:EPOCHS:GAMMA` (the rate times GAMMA every EPOCHS epochs),
    `exp:GAMMA` (times GAMMA every epoch) or `linear:EPOCHS` (down to zero at EPOCHS)."""
    kind, _, rest = text.partition(':')
    values = rest.split(':') if rest else []
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r}: the values after the kind must be numbers') from None
    if (kind, len(numbers)) not in (('step', 2), ('exp', 1), ('linear', 1)):
        raise argparse.ArgumentTypeError(f'{text!r}: give step:EPOCHS:GAMMA, exp:GAMMA or linear:EPOCHS')
    return kind, numbers


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--arch', required=True, choices=ARCHITECTURES, help='the torchvision model')
    p.add_argument('--cifar-head', action='store_true',
                   help="VGG only: global average pooling and 512-unit layers instead of ImageNet's 4096")
    p.add_argument('-b', '--batch-size', type=int, default=16, help='images per iteration (default: 16)')
    p.add_argument('--image-size', type=int, default=112, help='side of the square images (default: 112)')
    p.add_argument('--classes', type=int, default=100, help='classes of the synthetic labels (default: 100)')
    p.add_argument('--samples', type=int, default=256, help='synthetic training images (default: 256)')
    p.add_argument('--iters', type=int, default=12, help='training iterations to run (default: 12)')
    p.add_argument('--optimizer', choices=('sgd', 'rmsprop'), default='sgd')
    p.add_argument('--lr', type=float, default=0.1, help='initial learning rate (default: 0.1)')
    p.add_argument('--momentum', type=float, default=0.9)
    p.add_argument('--nesterov', action='store_true')
    p.add_argument('--wd', '--weight-decay', dest='weight_decay', type=float, default=1e-4)
    p.add_argument('--schedule', type=schedule, default='step:30:0.1',
                   help='learning-rate schedule by epoch: step:EPOCHS:GAMMA, exp:GAMMA or linear:EPOCHS '
                        '(default: step:30:0.1)')
    p.add_argument('--label-smoothing', type=float, default=0.0)
    p.add_argument('--amp', action='store_true', help='forward pass under CUDA autocast (FP16)')
    p.add_argument('-j', '--workers', type=int, default=0, help='DataLoader worker processes (default: 0)')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    if args.samples < args.batch_size:
        p.error('--samples must be at least --batch-size, so that an epoch has a batch')
    if args.cifar_head and not args.arch.startswith('vgg'):
        p.error('--cifar-head is for VGG models')
    return args


def build_model(args):
    model = getattr(torchvision.models, args.arch)(num_classes=args.classes)
    if args.cifar_head:
        model.avgpool = nn.AdaptiveAvgPool2d(1)
        model.classifier = nn.Sequential(
            nn.Dropout(), nn.Linear(512, 512), nn.ReLU(True),
            nn.Dropout(), nn.Linear(512, 512), nn.ReLU(True),
            nn.Linear(512, args.classes),
        )
    return model


def build_optimizer(args, model):
    if args.optimizer == 'rmsprop':
        # EfficientNet's and MobileNet's TensorFlow recipes: decay 0.9, epsilon 0.001.
        return torch.optim.RMSprop(model.parameters(), args.lr, alpha=0.9, eps=0.001, momentum=args.momentum,
                                   weight_decay=args.weight_decay)
    return torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, nesterov=args.nesterov,
                           weight_decay=args.weight_decay)


def build_scheduler(args, optimizer):
    kind, numbers = args.schedule
    if kind == 'step':
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=int(numbers[0]), gamma=numbers[1])
    if kind == 'exp':
        return torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=numbers[0])
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: max(0.0, 1 - epoch / numbers[0]))


def synthetic_images(count, side, classes, seed):
    """Random images and labels made once up front, so that a batch costs next to nothing to load."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(count, 3, side, side, generator=generator)
    labels = torch.randint(0, classes, (count,), generator=generator)
    return TensorDataset(images, labels)


def train(model, loader, criterion, optimizer, scheduler, args):
    """Runs args.iters iterations, over as many epochs as that takes. An iteration's time runs from
    the end of the previous one to the end of its optimizer step, so it includes fetching its batch."""
    model.train()
    done, epoch = 0, 0
    end = time.perf_counter()
    while done < args.iters:
        epoch += 1
        for images, target in loader:
            with torch.autocast('cuda', dtype=torch.float16, enabled=args.amp):
                output = model(images)
                loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            now = time.perf_counter()
            done += 1
            print(f'iter {done} time {now - end:.6f}', flush=True)
            end = now
            if done == args.iters:
                break
        scheduler.step()
    print(f'epochs {epoch} loss {loss.item():.4f}')


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dataset = synthetic_images(args.samples, args.image_size, args.classes, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        drop_last=True)
    model = build_model(args)
    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = build_optimizer(args, model)
    scheduler = build_scheduler(args, optimizer)
    parameters = sum(p.numel() for p in model.parameters())
    print(f'{args.arch}: {parameters} parameters, batch {args.batch_size}, {args.image_size}px')
    train(model, loader, criterion, optimizer, scheduler, args)


if __name__ == '__main__':
    main()
