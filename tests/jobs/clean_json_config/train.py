"""Intent classification with a fastText-style model (mean of word and hashed bigram
embeddings), driven by a JSON configuration: the architecture, data loader, optimizer,
scheduler and trainer settings all come from the config file; a few entries can be
overridden on the command line."""
import argparse
import collections
import json
import os
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class IntentDataset(Dataset):
    def __init__(self, path, vocab=None, labels=None):
        with open(path) as f:
            records = [json.loads(line) for line in f if line.strip()]
        self.texts = [r["text"].lower().split() for r in records]
        if vocab is None:
            counts = collections.Counter(w for t in self.texts for w in t)
            vocab = {"<unk>": 0}
            for word, _ in counts.most_common():
                vocab[word] = len(vocab)
        if labels is None:
            labels = sorted({r["label"] for r in records})
        self.vocab, self.labels = vocab, labels
        self.targets = [labels.index(r["label"]) for r in records]

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return [self.vocab.get(w, 0) for w in self.texts[i]], self.texts[i], self.targets[i]


class FastTextClassifier(nn.Module):
    def __init__(self, vocab_size, num_classes, embed_dim=64, ngrams=2, buckets=20000):
        super().__init__()
        self.ngrams, self.buckets, self.vocab_size = ngrams, buckets, vocab_size
        self.embedding = nn.EmbeddingBag(vocab_size + buckets, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_classes)

    def bigram_ids(self, words):
        return [self.vocab_size + zlib.crc32((a + " " + b).encode()) % self.buckets
                for a, b in zip(words, words[1:], strict=False)]

    def forward(self, ids, offsets):
        return self.fc(self.embedding(ids, offsets))


def make_collate(model):
    def collate(batch):
        ids, offsets, targets = [], [], []
        for word_ids, words, target in batch:
            offsets.append(len(ids))
            ids += word_ids + (model.bigram_ids(words) if model.ngrams > 1 else [])
            targets.append(target)
        return torch.tensor(ids), torch.tensor(offsets), torch.tensor(targets)
    return collate


def evaluate(model, loader, device):
    model.eval()
    correct, total, loss = 0, 0, 0.0
    with torch.no_grad():
        for ids, offsets, targets in loader:
            ids, offsets, targets = ids.to(device), offsets.to(device), targets.to(device)
            logits = model(ids, offsets)
            loss += F.cross_entropy(logits, targets, reduction="sum").item()
            correct += (logits.argmax(1) == targets).sum().item()
            total += len(targets)
    return {"val_loss": loss / total, "val_accuracy": correct / total}


def main():
    parser = argparse.ArgumentParser(description="config-driven trainer")
    parser.add_argument("-c", "--config", required=True, help="config file path")
    parser.add_argument("-r", "--resume", default=None, help="path to a checkpoint to resume from")
    parser.add_argument("--data-dir", default=None, help="overrides data_loader.data_dir")
    parser.add_argument("--save-dir", default=None, help="overrides trainer.save_dir")
    parser.add_argument("--lr", type=float, default=None, help="overrides optimizer.args.lr")
    args = parser.parse_args()

    with open(args.config) as f:
        config = json.load(f)
    if args.data_dir:
        config["data_loader"]["data_dir"] = args.data_dir
    if args.save_dir:
        config["trainer"]["save_dir"] = args.save_dir
    if args.lr:
        config["optimizer"]["args"]["lr"] = args.lr
    torch.manual_seed(config["seed"])

    dl_cfg, tr_cfg = config["data_loader"], config["trainer"]
    train_set = IntentDataset(os.path.join(dl_cfg["data_dir"], dl_cfg["train_file"]))
    valid_set = IntentDataset(os.path.join(dl_cfg["data_dir"], dl_cfg["valid_file"]),
                              vocab=train_set.vocab, labels=train_set.labels)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = FastTextClassifier(len(train_set.vocab), len(train_set.labels),
                               **config["arch"]["args"]).to(device)
    collate = make_collate(model)
    train_loader = DataLoader(train_set, batch_size=dl_cfg["batch_size"], shuffle=dl_cfg["shuffle"],
                              num_workers=dl_cfg["num_workers"], collate_fn=collate)
    valid_loader = DataLoader(valid_set, batch_size=dl_cfg["batch_size"], collate_fn=collate)

    optimizer = getattr(torch.optim, config["optimizer"]["type"])(model.parameters(),
                                                                  **config["optimizer"]["args"])
    scheduler = getattr(torch.optim.lr_scheduler, config["lr_scheduler"]["type"])(
        optimizer, **config["lr_scheduler"]["args"])

    mode, metric = tr_cfg["monitor"].split()
    best = float("-inf") if mode == "max" else float("inf")
    start_epoch, not_improved = 1, 0
    save_dir = os.path.join(tr_cfg["save_dir"], config["name"])
    os.makedirs(save_dir, exist_ok=True)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch, best = checkpoint["epoch"] + 1, checkpoint["monitor_best"]
        print("resumed from epoch", checkpoint["epoch"])

    for epoch in range(start_epoch, tr_cfg["epochs"] + 1):
        model.train()
        total = 0.0
        for ids, offsets, targets in train_loader:
            ids, offsets, targets = ids.to(device), offsets.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids, offsets), targets)
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step()
        log = {"epoch": epoch, "loss": total / len(train_loader)}
        log.update(evaluate(model, valid_loader, device))
        print("    ".join("%s: %.4f" % (k, v) if isinstance(v, float) else "%s: %s" % (k, v)
                          for k, v in log.items()), flush=True)

        improved = log[metric] > best if mode == "max" else log[metric] < best
        state = {"arch": config["arch"]["type"], "epoch": epoch, "state_dict": model.state_dict(),
                 "optimizer": optimizer.state_dict(),
                 "monitor_best": max(best, log[metric]) if improved else best,
                 "config": config, "vocab": train_set.vocab, "labels": train_set.labels}
        if improved:
            best, not_improved = log[metric], 0
            torch.save(state, os.path.join(save_dir, "model_best.pth"))
            print("Saving current best: model_best.pth ...")
        else:
            not_improved += 1
        if epoch % tr_cfg["save_period"] == 0:
            torch.save(state, os.path.join(save_dir, "checkpoint-epoch{}.pth".format(epoch)))
        if not_improved > tr_cfg["early_stop"]:
            print("Validation performance didn't improve for {} epochs. "
                  "Training stops.".format(tr_cfg["early_stop"]))
            break


if __name__ == "__main__":
    main()
