"""A tiny convolutional classifier on random images, to check the environment end to end."""
import argparse

import numpy as np
import torch
import yaml
from PIL import Image
from torch import nn
from torchvision import transforms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    config = yaml.safe_load("lr: 0.01\nbatch: 8\n")
    to_tensor = transforms.ToTensor()
    images = [to_tensor(Image.fromarray(np.random.randint(0, 255, (16, 16, 3), dtype=np.uint8)))
              for _ in range(32)]
    x, y = torch.stack(images), torch.randint(0, 2, (32,))
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 14 * 14, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for epoch in range(args.epochs):
        for start in range(0, 32, config["batch"]):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x[start:start + 8]), y[start:start + 8])
            loss.backward()
            optimizer.step()
        print("epoch", epoch, "loss", loss.item())


if __name__ == "__main__":
    main()
