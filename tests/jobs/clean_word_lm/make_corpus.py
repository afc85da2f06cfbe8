"""Writes a synthetic stand-in for a word-level corpus (train.txt, valid.txt, test.txt, one
sentence a line) where the real job would download WikiText: words drawn from a Zipf-like
distribution over a fixed vocabulary, with a little sentence structure so that a language
model has something to learn."""
import argparse
import itertools
import os
import random


def make_vocabulary(rng, size):
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words = set()
    while len(words) < size:
        length = rng.randint(1, 4)
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(length)))
    return sorted(words)


def write_split(path, rng, nouns, verbs, cum_n, cum_v, tokens):
    written = 0
    with open(path, "w") as f:
        while written < tokens:
            parts = []
            for _ in range(rng.randint(1, 3)):
                parts += ["the"] + rng.choices(nouns, cum_weights=cum_n, k=rng.randint(1, 3))
                parts += rng.choices(verbs, cum_weights=cum_v, k=1)
                parts += [rng.choice(["of", "in", "to", "and", "with"])]
            parts[-1] = "."
            f.write(" " + " ".join(parts) + " \n")
            written += len(parts) + 1  # the <eos> the reader adds
    return written


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--tokens", type=int, default=2000000, help="tokens in train.txt")
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    words = make_vocabulary(rng, args.vocab)
    nouns, verbs = words[: len(words) * 3 // 4], words[len(words) * 3 // 4:]
    # Zipf-like frequencies; cumulative once, not at every draw
    cum_n = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(nouns))))
    cum_v = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(verbs))))
    os.makedirs(args.out, exist_ok=True)
    for name, share in (("train.txt", 1.0), ("valid.txt", 0.1), ("test.txt", 0.1)):
        count = write_split(os.path.join(args.out, name), rng, nouns, verbs, cum_n, cum_v,
                            int(args.tokens * share))
        print("%s: %d tokens" % (name, count))


if __name__ == "__main__":
    main()
