"""Wine quality classification (low / medium / high) with an MLP, as a SageMaker script-mode
entry point: hyperparameters arrive as command-line arguments, the data channel and the
model folder come from the SM_* variables, and model_fn loads the model for hosting."""
import argparse
import json
import logging
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data

logger = logging.getLogger(__name__)
logger.setLevel(logging.DEBUG)
logger.addHandler(logging.StreamHandler(sys.stdout))


class WineNet(nn.Module):
    def __init__(self, n_features=11, n_classes=3, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, x):
        return self.net(x)


def load_csv(path):
    table = np.loadtxt(path, delimiter=",", dtype=np.float32)
    return torch.from_numpy(table[:, 1:]), torch.from_numpy(table[:, 0].astype(np.int64))


def _get_train_data_loader(batch_size, training_dir, is_distributed, **kwargs):
    logger.info("Get train data loader")
    x, y = load_csv(os.path.join(training_dir, "wine_train.csv"))
    mean, std = x.mean(0), x.std(0)
    dataset = torch.utils.data.TensorDataset((x - mean) / std, y)
    train_sampler = torch.utils.data.distributed.DistributedSampler(dataset) if is_distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=train_sampler is None,
                                         sampler=train_sampler, **kwargs)
    return loader, train_sampler, (mean, std)


def _get_test_data_loader(test_batch_size, training_dir, stats, **kwargs):
    logger.info("Get test data loader")
    x, y = load_csv(os.path.join(training_dir, "wine_val.csv"))
    dataset = torch.utils.data.TensorDataset((x - stats[0]) / stats[1], y)
    return torch.utils.data.DataLoader(dataset, batch_size=test_batch_size, shuffle=False, **kwargs)


def _average_gradients(model):
    # Gradient averaging.
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


def train(args):
    is_distributed = len(args.hosts) > 1 and args.backend is not None
    logger.debug("Distributed training - {}".format(is_distributed))
    use_cuda = args.num_gpus > 0
    logger.debug("Number of gpus available - {}".format(args.num_gpus))
    kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
    device = torch.device("cuda" if use_cuda else "cpu")

    if is_distributed:
        # Initialize the distributed environment.
        world_size = len(args.hosts)
        os.environ["WORLD_SIZE"] = str(world_size)
        host_rank = args.hosts.index(args.current_host)
        os.environ["RANK"] = str(host_rank)
        dist.init_process_group(backend=args.backend, rank=host_rank, world_size=world_size)
        logger.info("Initialized the distributed environment: '{}' backend on {} nodes. ".format(
            args.backend, dist.get_world_size()) + "Current host rank is {}. Number of gpus: {}".format(
            dist.get_rank(), args.num_gpus))

    torch.manual_seed(args.seed)
    train_loader, train_sampler, stats = _get_train_data_loader(args.batch_size, args.data_dir,
                                                                is_distributed, **kwargs)
    test_loader = _get_test_data_loader(args.test_batch_size, args.data_dir, stats, **kwargs)

    model = WineNet().to(device)
    if is_distributed and use_cuda:
        model = torch.nn.parallel.DistributedDataParallel(model)
    elif use_cuda:
        model = torch.nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=args.momentum)

    for epoch in range(1, args.epochs + 1):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader, 1):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(data), target)
            loss.backward()
            if is_distributed and not use_cuda:
                # average gradients manually for multi-machine cpu case only
                _average_gradients(model)
            optimizer.step()
            if batch_idx % args.log_interval == 0:
                logger.info("Train Epoch: {} [{}/{}]\tLoss: {:.6f}".format(
                    epoch, batch_idx * len(data), len(train_loader.sampler), loss.item()))
        test(model, test_loader, device)
    save_model(model, args.model_dir, stats)
    with open(os.path.join(args.output_data_dir, "hyperparameters_used.json"), "w") as f:
        json.dump({k: v for k, v in vars(args).items() if k != "hosts"}, f)


def test(model, test_loader, device):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += nn.functional.cross_entropy(output, target, reduction="sum").item()
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    logger.info("Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
        test_loss, correct, len(test_loader.dataset), 100.0 * correct / len(test_loader.dataset)))


def model_fn(model_dir):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.DataParallel(WineNet())
    with open(os.path.join(model_dir, "model.pth"), "rb") as f:
        model.load_state_dict(torch.load(f)["state_dict"])
    return model.to(device)


def save_model(model, model_dir, stats):
    logger.info("Saving the model.")
    path = os.path.join(model_dir, "model.pth")
    # recommended way from http://pytorch.org/docs/master/notes/serialization.html
    state = model.cpu().state_dict()
    if not any(k.startswith("module.") for k in state):
        state = {"module." + k: v for k, v in state.items()}
    torch.save({"state_dict": state, "mean": stats[0], "std": stats[1]}, path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()

    # Data and model checkpoints directories
    parser.add_argument("--batch-size", type=int, default=64, metavar="N",
                        help="input batch size for training (default: 64)")
    parser.add_argument("--test-batch-size", type=int, default=1000, metavar="N",
                        help="input batch size for testing (default: 1000)")
    parser.add_argument("--epochs", type=int, default=10, metavar="N",
                        help="number of epochs to train (default: 10)")
    parser.add_argument("--learning-rate", type=float, default=0.01, metavar="LR",
                        help="learning rate (default: 0.01)")
    parser.add_argument("--momentum", type=float, default=0.5, metavar="M",
                        help="SGD momentum (default: 0.5)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    parser.add_argument("--log-interval", type=int, default=5, metavar="N",
                        help="how many batches to wait before logging training status")
    parser.add_argument("--backend", type=str, default=None,
                        help="backend for distributed training (tcp, gloo on cpu and gloo, nccl on gpu)")

    # Container environment
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ["SM_HOSTS"]))
    parser.add_argument("--current-host", type=str, default=os.environ["SM_CURRENT_HOST"])
    parser.add_argument("--model-dir", type=str, default=os.environ["SM_MODEL_DIR"])
    parser.add_argument("--data-dir", type=str, default=os.environ["SM_CHANNEL_TRAINING"])
    parser.add_argument("--output-data-dir", type=str, default=os.environ["SM_OUTPUT_DATA_DIR"])
    parser.add_argument("--num-gpus", type=int, default=os.environ["SM_NUM_GPUS"])

    train(parser.parse_args())
