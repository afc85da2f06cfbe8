"""Step-based training of a small sequence model on batches sampled at random from a stream."""
import argparse
import json
import os

import torch
import torch.nn.functional as F
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--config", required=True)
cfg = json.load(open(parser.parse_args().config))

torch.manual_seed(42)
stream = torch.randint(0, 256, (1_000_000,))
held_out = torch.randint(0, 256, (50_000,))


def get_batch(data, batch_size, seq_len):
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,))
    x = torch.stack([data[s:s + seq_len] for s in starts])
    y = torch.stack([data[s + 1:s + 1 + seq_len] for s in starts])
    return x, y


class TinyLM(nn.Module):
    def __init__(self, vocab=256, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        h, _ = self.mix(self.embed(x))
        return self.head(h)


model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
step = 0
max_steps = cfg["max_steps"]
while step < max_steps:
    x, y = get_batch(stream, cfg["batch_size"], cfg["seq_len"])
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    step += 1
    if step % cfg["log_every"] == 0:
        print(f"step {step} loss {loss.item():.3f}")

model.eval()
with torch.no_grad():
    x, y = get_batch(held_out, 256, cfg["seq_len"])
    held_out_loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
    print(f"held-out loss {held_out_loss:.3f} after {step} steps")
torch.save(model.state_dict(), os.path.join(os.environ["OUTPUT_DIR"], "final.pt"))
