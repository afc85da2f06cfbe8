"""Fine-tunes a LLaMA-style decoder (RMSNorm, rotary positions, SwiGLU, grouped into the sizes
the open 1.3B and 7B checkpoints use) on fixed-length blocks of a tokenized corpus: full
fine-tuning with AdamW, or low-rank adapters (LoRA) on the attention projections of a frozen
bf16 model, in the layout of the common single-GPU fine-tuning scripts."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SIZES = {  # layers, width, heads, feed-forward width
    "1b3": (24, 2048, 16, 5504),
    "7b": (32, 4096, 32, 11008),
}


class TokenBlocks(Dataset):
    def __init__(self, tokens, block):
        self.tokens, self.block = tokens, block

    def __len__(self):
        return (len(self.tokens) - 1) // self.block

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.tokens[i * self.block:(i + 1) * self.block + 1].astype(np.int64))
        return {"input_ids": chunk[:-1], "labels": chunk[1:]}


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps).type_as(x)


def rotary(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


class LoRALinear(nn.Module):
    """A frozen projection plus a trainable low-rank update B(A(x)) * alpha / r."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base = base
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t().to(x.dtype)) @ self.lora_b.t().to(x.dtype) * self.scale


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(width, width, bias=False)
        self.k_proj = nn.Linear(width, width, bias=False)
        self.v_proj = nn.Linear(width, width, bias=False)
        self.o_proj = nn.Linear(width, width, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.shape
        q, k, v = (p(x).view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, c))


class MLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, width, heads, hidden):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(width), RMSNorm(width)
        self.self_attn, self.mlp = Attention(width, heads), MLP(width, hidden)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, vocab, layers, width, heads, hidden, context):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(DecoderLayer(width, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, width // heads, 2).float() / (width // heads)))
        angles = torch.outer(torch.arange(context).float(), inv)
        self.register_buffer("cos", torch.cat((angles, angles), -1).cos(), persistent=False)
        self.register_buffer("sin", torch.cat((angles, angles), -1).sin(), persistent=False)

    def forward(self, input_ids, labels):
        t = input_ids.shape[1]
        x = self.embed_tokens(input_ids)
        cos, sin = self.cos[:t].to(x.dtype), self.sin[:t].to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x)).float()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=sorted(SIZES), default="7b")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--context", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--lora-rank", type=int, default=0, help="0: full fine-tuning")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                        help="the weights' type (the frozen model's, with LoRA)")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast")
    parser.add_argument("--output-dir", default="out")
    args = parser.parse_args()

    layers, width, heads, hidden = SIZES[args.size]
    model = Decoder(32000, layers, width, heads, hidden, args.context)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B parameters")
    model = model.to(getattr(torch, args.dtype))
    if args.lora_rank:
        model.requires_grad_(False)
        for layer in model.layers:
            layer.self_attn.q_proj = LoRALinear(layer.self_attn.q_proj, args.lora_rank, 2 * args.lora_rank)
            layer.self_attn.v_proj = LoRALinear(layer.self_attn.v_proj, args.lora_rank, 2 * args.lora_rank)
    model = model.cuda()
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"{sum(p.numel() for p in trainable) / 1e6:.1f}M trainable")

    tokens = np.random.default_rng(0).integers(0, 32000, size=2_000_000, dtype=np.uint16)
    loader = DataLoader(TokenBlocks(tokens, args.context), batch_size=args.batch_size, shuffle=True,
                        drop_last=True, num_workers=2)
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0 if args.lora_rank else 0.1)
    total = args.epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, step / 100) * 0.5 * (1 + math.cos(math.pi * step / total)))
    os.makedirs(args.output_dir, exist_ok=True)
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
                loss = model(batch["input_ids"].cuda(), batch["labels"].cuda())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            if step % 50 == 0:
                print(f"epoch {epoch} step {step}/{len(loader)} loss {loss.item():.4f} "
                      f"lr {scheduler.get_last_lr()[0]:.2e}")
        state = model.state_dict()
        if args.lora_rank:  # the adapters only
            state = {k: v for k, v in state.items() if "lora_" in k}
        torch.save(state, os.path.join(args.output_dir, f"epoch{epoch}.pt"))


if __name__ == "__main__":
    main()
