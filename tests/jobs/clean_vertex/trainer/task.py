"""Flower classification with a MobileNetV3 for Vertex AI custom training. Vertex passes
Cloud Storage locations as gs:// URIs in AIP_* variables; Cloud Storage FUSE shows every
bucket under /gcs/, so the script reads and writes the /gcs/ form of each URI."""
import argparse
import json
import os
import time

import torch
import torch.nn as nn
import torchvision
from torchvision import transforms


def gcs_fuse_path(uri):
    """gs://bucket/path -> /gcs/bucket/path, which Cloud Storage FUSE mounts."""
    if uri.startswith("gs://"):
        return "/gcs/" + uri[len("gs://"):]
    return uri


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--data-dir", default=os.environ.get("AIP_TRAINING_DATA_URI", "data"))
    parser.add_argument("--model-dir", default=os.environ.get("AIP_MODEL_DIR", "model"))
    parser.add_argument("--checkpoint-dir", default=os.environ.get("AIP_CHECKPOINT_DIR", "checkpoints"))
    return parser.parse_args()


def main():
    args = parse_args()
    data_dir = gcs_fuse_path(args.data_dir)
    model_dir = gcs_fuse_path(args.model_dir)
    ckpt_dir = gcs_fuse_path(args.checkpoint_dir)
    cluster = json.loads(os.environ.get("CLUSTER_SPEC", "{}"))
    task = cluster.get("task", {"type": "workerpool0", "index": 0})
    is_chief = task["type"] == "workerpool0" and task["index"] == 0
    print("job %s, task %s, data %s" % (os.environ.get("CLOUD_ML_JOB_ID", "local"), task, data_dir))

    tf = transforms.Compose([
        transforms.RandomResizedCrop(args.image_size, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    dataset = torchvision.datasets.ImageFolder(data_dir, transform=tf)
    n_val = max(1, len(dataset) // 5)
    train_set, val_set = torch.utils.data.random_split(dataset, [len(dataset) - n_val, n_val],
                                                       generator=torch.Generator().manual_seed(0))
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                               num_workers=2)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=args.batch_size, num_workers=2)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torchvision.models.mobilenet_v3_small(num_classes=len(dataset.classes)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    start_epoch = 0
    last = os.path.join(ckpt_dir, "last.pt")
    if os.path.exists(last):
        state = torch.load(last, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
        print("resumed at epoch", start_epoch)

    for epoch in range(start_epoch, args.epochs):
        started = time.time()
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
        print("epoch %d loss %.3f val acc %.3f (%.1fs)"
              % (epoch, loss.item(), correct / n_val, time.time() - started), flush=True)
        if is_chief:
            os.makedirs(ckpt_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                       last)

    if is_chief:
        os.makedirs(model_dir, exist_ok=True)
        model.eval()
        scripted = torch.jit.script(model.cpu())
        scripted.save(os.path.join(model_dir, "model.pt"))
        with open(os.path.join(model_dir, "classes.json"), "w") as f:
            json.dump(dataset.classes, f)
        print("model saved to", model_dir)


if __name__ == "__main__":
    main()
