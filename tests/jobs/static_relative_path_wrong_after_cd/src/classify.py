"""Nearest-centroid classifier over a small labelled table."""
import argparse
import csv

LABELS = "../datasets/labels.csv"


def read_rows(path):
    with open(path, newline="") as f:
        return [(float(a), float(b), row_label) for a, b, row_label in csv.reader(f)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    rows = read_rows(LABELS)
    centroids = {}
    for _ in range(args.epochs):
        for a, b, label in rows:
            cx, cy, n = centroids.get(label, (0.0, 0.0, 0))
            centroids[label] = (cx + a, cy + b, n + 1)
    print({label: (cx / n, cy / n) for label, (cx, cy, n) in centroids.items()})


if __name__ == "__main__":
    main()
