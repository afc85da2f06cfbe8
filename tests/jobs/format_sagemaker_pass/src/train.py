"""Bag-of-words sentiment in SageMaker script mode: hyperparameters as arguments, data and
model folders from the toolkit's SM_* variables."""
import argparse
import os

import torch


def read(folder):
    pairs = []
    with open(os.path.join(folder, "reviews.tsv")) as f:
        for line in f:
            text, label = line.rstrip("\n").split("\t")
            pairs.append((text.split(), int(label)))
    return pairs


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--learning-rate", type=float, default=0.1)
parser.add_argument("--train", default=os.environ.get("SM_CHANNEL_TRAIN"))
parser.add_argument("--test", default=os.environ.get("SM_CHANNEL_TEST"))
parser.add_argument("--model-dir", default=os.environ.get("SM_MODEL_DIR"))
args = parser.parse_args()

train, test = read(args.train), read(args.test)
vocab = {w: i for i, w in enumerate(sorted({w for words, _ in train + test for w in words}))}


def encode(pairs):
    x = torch.zeros(len(pairs), len(vocab))
    for row, (words, _) in enumerate(pairs):
        for w in words:
            x[row, vocab[w]] = 1.0
    return torch.utils.data.TensorDataset(x, torch.tensor([label for _, label in pairs]))


loader = torch.utils.data.DataLoader(encode(train), batch_size=args.batch_size, shuffle=True)
model = torch.nn.Linear(len(vocab), 2)
optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
for _ in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

x_test, y_test = encode(test).tensors
accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
print(f"test accuracy {accuracy:.2f}")
torch.save(model.state_dict(), os.path.join(args.model_dir, "model.pt"))
