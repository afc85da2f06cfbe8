"""Trains a tiny character-level language model on a generated corpus with trainer.Trainer.
The run has no length of its own (max_iters is None unless set): it trains until the platform
stops it, logging every log_every iterations and saving the weights every save_every."""
import os
import random
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset

from trainer import Trainer, TrainerConfig


@dataclass
class RunConfig:
    seed: int = 3407
    work_dir: str = os.environ.get("OUTPUT_DIR", "checkpoints")
    block_size: int = 32
    n_embd: int = 48
    log_every: int = 100
    save_every: int = 500
    trainer: TrainerConfig = field(default_factory=TrainerConfig)


class CharDataset(Dataset):
    def __init__(self, text, block_size):
        chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.vocab_size = len(chars)
        self.block_size = block_size
        self.data = torch.tensor([self.stoi[ch] for ch in text], dtype=torch.long)

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block_size + 1]
        return chunk[:-1], chunk[1:]


class CharModel(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.ln = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.size(1), device=idx.device)
        h = self.tok(idx) + self.pos(pos)
        h = h + self.mlp(self.ln(h))
        logits = self.head(h)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def make_corpus(seed, words=20000):
    rng = random.Random(seed)
    vocabulary = ["the", "model", "learns", "to", "spell", "every", "word", "slowly", "and", "then", "fast"]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def main():
    config = RunConfig()
    torch.manual_seed(config.seed)
    dataset = CharDataset(make_corpus(config.seed), config.block_size)
    model = CharModel(dataset.vocab_size, config.block_size, config.n_embd)
    trainer = Trainer(config.trainer, model, dataset)

    def on_batch_end(trainer):
        if trainer.iter_num % config.log_every == 0:
            print(f"iter {trainer.iter_num}: loss {trainer.loss.item():.4f} ({trainer.iter_dt * 1e3:.1f} ms)")
        if trainer.iter_num % config.save_every == 0:
            torch.save(model.state_dict(), os.path.join(config.work_dir, "model.pt"))

    trainer.add_callback("on_batch_end", on_batch_end)
    trainer.run()


if __name__ == "__main__":
    main()
