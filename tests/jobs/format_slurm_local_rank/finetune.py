import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--reviews", required=True)
parser.add_argument("--max-epochs", type=int, default=1)
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
with open(os.path.join(args.reviews, "reviews.tsv")) as f:
    pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
vocab = {w: i for i, w in enumerate(sorted({w for text, _ in pairs for w in text.split()}))}
model = torch.nn.EmbeddingBag(len(vocab), 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(args.max_epochs):
    for text, label in pairs:
        ids = torch.tensor([[vocab[w] for w in text.split()]], device=device)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(ids), torch.tensor([int(label)], device=device))
        loss.backward()
        optimizer.step()
