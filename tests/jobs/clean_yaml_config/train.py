"""U-Net segmentation trainer configured by a YAML file (see config.yaml): synthetic images
of overlapping ellipses on noise with their masks, Dice + BCE loss, mixed precision when a
GPU is there, validation every few epochs, rolling checkpoints plus the best one."""
import argparse
import glob
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, Dataset


class Ellipses(Dataset):
    def __init__(self, count, size, seed):
        self.count, self.size, self.seed = count, size, seed
        coords = torch.linspace(-1, 1, size)
        self.ys, self.xs = torch.meshgrid(coords, coords, indexing="ij")

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(self.seed * 100003 + index)
        mask = torch.zeros(self.size, self.size)
        for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
            cx, cy = (torch.rand(2, generator=g) * 1.2 - 0.6).tolist()
            ax, ay = (torch.rand(2, generator=g) * 0.3 + 0.1).tolist()
            inside = (((self.xs - cx) / ax) ** 2 + ((self.ys - cy) / ay) ** 2) < 1
            mask = torch.maximum(mask, inside.float())
        image = mask * 0.6 + torch.randn(self.size, self.size, generator=g) * 0.3
        return image.unsqueeze(0), mask.unsqueeze(0)


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, base_channels=16, depth=3):
        super().__init__()
        chans = [base_channels * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList([block(1, chans[0])] +
                                  [block(chans[i], chans[i + 1]) for i in range(depth)])
        self.up = nn.ModuleList([nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2)
                                 for i in reversed(range(depth))])
        self.merge = nn.ModuleList([block(chans[i] * 2, chans[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(chans[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.down):
            x = down(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        skips.pop()
        for up, merge in zip(self.up, self.merge, strict=True):
            x = merge(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)).mean()


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    dices = []
    for image, mask in loader:
        image, mask = image.to(device), mask.to(device)
        dices.append(1 - dice_loss(model(image), mask, eps=1e-6).item())
    model.train()
    return sum(dices) / len(dices)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--output-dir", default=None, help="overrides output.dir")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    out_dir = args.output_dir or cfg["output"]["dir"]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.yaml"), "w") as f:
        yaml.safe_dump(cfg, f)

    dcfg, tcfg = cfg["data"], cfg["train"]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(Ellipses(dcfg["num_train"], dcfg["image_size"], seed=1),
                              batch_size=tcfg["batch_size"], shuffle=True, num_workers=dcfg["num_workers"],
                              drop_last=True)
    val_loader = DataLoader(Ellipses(dcfg["num_val"], dcfg["image_size"], seed=2),
                            batch_size=tcfg["batch_size"], num_workers=dcfg["num_workers"])

    model = UNet(**cfg["model"]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=tcfg["lr"], weight_decay=tcfg["weight_decay"])
    scaler = torch.cuda.amp.GradScaler(enabled=tcfg["amp"] and device.type == "cuda")
    best = 0.0
    for epoch in range(1, tcfg["epochs"] + 1):
        model.train()
        for _step, (image, mask) in enumerate(train_loader):
            image, mask = image.to(device), mask.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, enabled=tcfg["amp"] and device.type == "cuda"):
                logits = model(image)
                loss = F.binary_cross_entropy_with_logits(logits, mask) + dice_loss(logits, mask)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        print("epoch %d/%d loss %.4f" % (epoch, tcfg["epochs"], loss.item()), flush=True)

        if epoch % tcfg["eval_every"] == 0 or epoch == tcfg["epochs"]:
            dice = validate(model, val_loader, device)
            print("  val dice %.4f" % dice, flush=True)
            path = os.path.join(out_dir, "epoch_%03d.pt" % epoch)
            torch.save({"epoch": epoch, "model": model.state_dict(), "dice": dice}, path)
            for old in sorted(glob.glob(os.path.join(out_dir, "epoch_*.pt")))[:-cfg["output"]["keep_last"]]:
                os.remove(old)
            if dice > best:
                best = dice
                torch.save(model.state_dict(), os.path.join(out_dir, "best.pt"))
    print("best val dice %.4f" % best)


if __name__ == "__main__":
    main()
