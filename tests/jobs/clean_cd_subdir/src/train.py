"""Classify surnames by language with a character-level GRU. Run from src/: the data set is
../data/names/<Language>.txt, one name a line."""
import argparse
import glob
import os
import random
import string
import time

import torch
import torch.nn as nn

ALL_LETTERS = string.ascii_letters + " .,;'-"


def read_names(pattern):
    data = {}
    for path in sorted(glob.glob(pattern)):
        language = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            data[language] = [line.strip() for line in f if line.strip()]
    return data


def name_tensor(name):
    return torch.tensor([ALL_LETTERS.index(c) for c in name if c in ALL_LETTERS])


class NameGRU(nn.Module):
    def __init__(self, n_classes, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(len(ALL_LETTERS), 32)
        self.gru = nn.GRU(32, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, padded, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(padded), lengths, batch_first=True,
                                                   enforce_sorted=False)
        _, h = self.gru(packed)
        return self.out(h[-1])


def batches(pairs, batch_size, shuffle):
    order = list(range(len(pairs)))
    if shuffle:
        random.shuffle(order)
    for i in range(0, len(order), batch_size):
        chunk = [pairs[j] for j in order[i:i + batch_size]]
        tensors = [name_tensor(n) for n, _ in chunk]
        lengths = torch.tensor([len(t) for t in tensors])
        yield (nn.utils.rnn.pad_sequence(tensors, batch_first=True), lengths,
               torch.tensor([label for _, label in chunk]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../data/names/*.txt")
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", default="../runs")
    args = parser.parse_args()

    random.seed(0)
    torch.manual_seed(0)
    data = read_names(args.data)
    languages = sorted(data)
    pairs = [(name, languages.index(lang)) for lang in languages for name in data[lang]]
    random.shuffle(pairs)
    n_val = len(pairs) // 5
    val_pairs, train_pairs = pairs[:n_val], pairs[n_val:]
    print("%d names in %d languages" % (len(pairs), len(languages)))

    model = NameGRU(len(languages))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        model.train()
        for padded, lengths, labels in batches(train_pairs, args.batch_size, shuffle=True):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(padded, lengths), labels)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for padded, lengths, labels in batches(val_pairs, 256, shuffle=False):
                correct += (model(padded, lengths).argmax(1) == labels).sum().item()
        print("epoch %2d loss %.3f val acc %.3f (%.1fs)"
              % (epoch, loss.item(), correct / n_val, time.time() - t0), flush=True)

    os.makedirs(args.out, exist_ok=True)
    torch.save({"model": model.state_dict(), "languages": languages}, os.path.join(args.out, "names_gru.pt"))


if __name__ == "__main__":
    main()
