"""Train a CIFAR-style ResNet with PyTorch on an ImageFolder copy of the data set."""
import argparse
import os
import time

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms

import models

parser = argparse.ArgumentParser(description="PyTorch CIFAR Training")
parser.add_argument("--lr", default=0.1, type=float, help="learning rate")
parser.add_argument("--arch", default="resnet20", choices=models.__all__)
parser.add_argument("--epochs", default=200, type=int)
parser.add_argument("--batch-size", default=128, type=int)
parser.add_argument("--data-dir", default="./data/cifar10")
parser.add_argument("--ckpt-dir", default="./checkpoint")
parser.add_argument("--resume", "-r", action="store_true", help="resume from checkpoint")
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
best_acc = 0  # best test accuracy
start_epoch = 0  # start from epoch 0 or last checkpoint epoch

# Data
print("==> Preparing data..")
transform_train = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])
transform_test = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])

trainset = torchvision.datasets.ImageFolder(os.path.join(args.data_dir, "train"), transform=transform_train)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=args.batch_size, shuffle=True, num_workers=2)
testset = torchvision.datasets.ImageFolder(os.path.join(args.data_dir, "test"), transform=transform_test)
testloader = torch.utils.data.DataLoader(testset, batch_size=100, shuffle=False, num_workers=2)
classes = trainset.classes

# Model
print("==> Building model..")
net = models.__dict__[args.arch](num_classes=len(classes))
net = net.to(device)
if device == "cuda":
    net = torch.nn.DataParallel(net)
    cudnn.benchmark = True

if args.resume:
    print("==> Resuming from checkpoint..")
    assert os.path.isdir(args.ckpt_dir), "Error: no checkpoint directory found!"
    checkpoint = torch.load(os.path.join(args.ckpt_dir, "ckpt.pth"))
    net.load_state_dict(checkpoint["net"])
    best_acc = checkpoint["acc"]
    start_epoch = checkpoint["epoch"] + 1

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)


def train(epoch):
    print("\nEpoch: %d" % epoch)
    net.train()
    train_loss = 0
    correct = 0
    total = 0
    started = time.time()
    for batch_idx, (inputs, targets) in enumerate(trainloader):  # noqa: B007 (read after the loop)
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()

        train_loss += loss.item()
        _, predicted = outputs.max(1)
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()
    print("train | loss %.3f | acc %.3f%% (%d/%d) | %.1fs" % (
        train_loss / (batch_idx + 1), 100. * correct / total, correct, total, time.time() - started))


def test(epoch):
    global best_acc
    net.eval()
    test_loss = 0
    correct = 0
    total = 0
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(testloader):  # noqa: B007 (read after the loop)
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = net(inputs)
            loss = criterion(outputs, targets)

            test_loss += loss.item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    print("test  | loss %.3f | acc %.3f%% (%d/%d)" % (
        test_loss / (batch_idx + 1), 100. * correct / total, correct, total))

    # Save checkpoint.
    acc = 100. * correct / total
    if acc > best_acc:
        print("Saving..")
        state = {
            "net": net.state_dict(),
            "acc": acc,
            "epoch": epoch,
        }
        if not os.path.isdir(args.ckpt_dir):
            os.mkdir(args.ckpt_dir)
        torch.save(state, os.path.join(args.ckpt_dir, "ckpt.pth"))
        best_acc = acc


for epoch in range(start_epoch, start_epoch + args.epochs):
    train(epoch)
    test(epoch)
    scheduler.step()
