# Distributed set-up as ImageNet-style scripts write it: the world size comes from the
# environment only when the job asks for env:// initialisation.
import argparse
import os

parser = argparse.ArgumentParser(description="classifier")
parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456", type=str)
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--rank", default=-1, type=int)
parser.add_argument("--epochs", default=90, type=int)


def main():
    args = parser.parse_args()
    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])
    distributed = args.world_size > 1
    print("distributed:", distributed, "world size:", args.world_size)
    for epoch in range(args.epochs):
        print("epoch", epoch)


if __name__ == "__main__":
    main()
