"""Trains a small regression model and names the run after its tag."""
import argparse
import random


def parse_args():
    parser = argparse.ArgumentParser(description="Toy regression trainer")
    parser.add_argument("--tag", type=str, required=True, help="a label for this run, e.g. <baseline>")
    parser.add_argument("--epochs", type=int, default=10, help="number of passes over the data")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def make_data(n, rng):
    xs = [rng.uniform(-1.0, 1.0) for _ in range(n)]
    return [(x, 3.0 * x + 0.5 + rng.gauss(0.0, 0.1)) for x in xs]


def train_epoch(data, w, b, lr):
    total = 0.0
    for x, y in data:
        error = w * x + b - y
        w -= lr * error * x
        b -= lr * error
        total += error * error
    return w, b, total / len(data)


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    data = make_data(256, rng)
    w, b = 0.0, 0.0
    for epoch in range(args.epochs):
        w, b, loss = train_epoch(data, w, b, args.lr)
        print(f"[{args.tag}] epoch {epoch}: loss {loss:.4f}")
    print(f"[{args.tag}] w={w:.3f} b={b:.3f}")


if __name__ == "__main__":
    main()
