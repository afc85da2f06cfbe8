"""Trains a tiny character-level GPT on data/<dataset>/input.txt; the data/ folder's prepare.py
scripts are separate steps, run once by hand."""
import os
import time

import numpy as np
import torch

from model import GPT, GPTConfig

# -----------------------------------------------------------------------------
# default config values
out_dir = "out"
eval_interval = 10
log_interval = 5
eval_iters = 2
init_from = "scratch"  # or "gpt2"
wandb_log = False  # disabled by default
wandb_project = "tiny-gpt"
dataset = "tiny"
batch_size = 4
block_size = 32
n_layer = 2
n_head = 2
n_embd = 32
learning_rate = 1e-3
max_iters = 60
device = "cpu"
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, str))]
exec(open("configurator.py").read())  # overrides from the command line or a config file
config = {k: globals()[k] for k in config_keys}
# -----------------------------------------------------------------------------

ddp = int(os.environ.get("RANK", -1)) != -1  # a torchrun run?
if ddp:
    ddp_rank = int(os.environ["RANK"])
    master_process = ddp_rank == 0
else:
    master_process = True
if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337)

with open(os.path.join("data", dataset, "input.txt")) as f:
    text = f.read()
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
data = np.array([stoi[ch] for ch in text], dtype=np.int64)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]


def get_batch(split):
    source = train_data if split == "train" else val_data
    ix = torch.randint(len(source) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(source[i : i + block_size]) for i in ix.tolist()])
    y = torch.stack([torch.from_numpy(source[i + 1 : i + 1 + block_size]) for i in ix.tolist()])
    return x.to(device), y.to(device)


gptconf = GPTConfig(block_size=block_size, vocab_size=len(chars), n_layer=n_layer, n_head=n_head,
                    n_embd=n_embd)
model = GPT.from_pretrained(init_from) if init_from.startswith("gpt2") else GPT(gptconf)
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            losses[k] = model(X, Y)[1].item()
        out[split] = losses.mean().item()
    model.train()
    return out


if wandb_log and master_process:
    import wandb

    wandb.init(project=wandb_project, config=config)

X, Y = get_batch("train")
iter_num = 0
t0 = time.time()
while True:
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if wandb_log:
            wandb.log({"iter": iter_num, "train/loss": losses["train"], "val/loss": losses["val"]})
        if iter_num > 0:
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                          "iter_num": iter_num, "config": config}
            torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    logits, loss = model(X, Y)
    X, Y = get_batch("train")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if iter_num % log_interval == 0 and master_process:
        print(f"iter {iter_num}: loss {loss.item():.4f}, time {(time.time() - t0) * 1000:.0f}ms")
    iter_num += 1
    if iter_num > max_iters:
        break
