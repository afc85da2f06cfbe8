"""Feature extraction with a cache: reuse the author's cached features when present."""
import json
import os

CACHE = "/home/ana/.cache/features.json"


def features(n):
    if os.path.exists(CACHE):
        with open(CACHE) as f:
            return json.load(f)
    return [[i * 0.5, i * 0.25] for i in range(n)]


if __name__ == "__main__":
    rows = features(100)
    print("rows:", len(rows))
