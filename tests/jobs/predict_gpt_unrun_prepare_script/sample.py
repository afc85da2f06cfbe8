"""Samples from a trained model with GPT-2's tokenizer: run by hand after training."""
import tiktoken
import torch

from model import GPT, GPTConfig

enc = tiktoken.get_encoding("gpt2")
checkpoint = torch.load("out/ckpt.pt", map_location="cpu")
model = GPT(GPTConfig(**{k: checkpoint["config"][k] for k in ("block_size", "n_layer", "n_head", "n_embd")}))
print(enc.decode(model(torch.zeros((1, 1), dtype=torch.long))[0].argmax(-1)[0].tolist()))
