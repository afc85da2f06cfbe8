"""Logs to a tracking service whose client is installed on the laptop but not in the image."""
import argparse

import tensorboardX_is_not_in_the_image as tracker


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    tracker.log({"lr": args.lr})


if __name__ == "__main__":
    main()
