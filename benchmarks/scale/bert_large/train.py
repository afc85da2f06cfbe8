"""Masked-language-model pre-training of a BERT-Large-sized encoder (24 layers, 1,024 wide, 16
heads, 340M parameters) at 32 sequences of 512 tokens, with LAMB-like AdamW and a linear
warm-up, written with torch.nn's own transformer layers as course and reference scripts do."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

VOCAB, MASK = 30522, 103


class MaskedBlocks(Dataset):
    def __init__(self, count, length):
        self.count, self.length = count, length

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        tokens = torch.randint(1000, VOCAB, (self.length,), generator=g)
        chosen = torch.rand(self.length, generator=g) < 0.15
        labels = torch.where(chosen, tokens, torch.full_like(tokens, -100))
        inputs = torch.where(chosen, torch.full_like(tokens, MASK), tokens)
        return {"input_ids": inputs, "labels": labels, "attention_mask": torch.ones_like(tokens)}


class Bert(nn.Module):
    def __init__(self, layers=24, width=1024, heads=16, length=512):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(VOCAB, width), nn.Embedding(length, width)
        self.norm = nn.LayerNorm(width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, VOCAB)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        x = self.norm(self.tokens(input_ids) + self.positions(positions))
        x = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-steps", type=int, default=1_000_000)
    parser.add_argument("--save-every", type=int, default=10_000)
    parser.add_argument("--out", default="out")
    args = parser.parse_args()

    loader = DataLoader(MaskedBlocks(10_000_000, 512), batch_size=args.batch_size, shuffle=True,
                        num_workers=4, drop_last=True)
    model = Bert().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10_000))
    step = 0
    while step < args.max_steps:
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            logits = model(batch["input_ids"], batch["attention_mask"])
            loss = F.cross_entropy(logits.view(-1, VOCAB), batch["labels"].view(-1), ignore_index=-100)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            if step % args.save_every == 0:
                torch.save(model.state_dict(), os.path.join(args.out, f"bert-{step}.pt"))
            if step >= args.max_steps:
                break


if __name__ == "__main__":
    main()
