"""A small, model-agnostic trainer: it draws batches for ever from a sampler with replacement,
takes a step on each, and tells its callbacks after every iteration. It stops only at
config.max_iters, which no one sets by default: the run goes on until it is stopped."""
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Optional

import torch
from torch.utils.data import DataLoader
from torch.utils.data.sampler import RandomSampler


@dataclass
class TrainerConfig:
    batch_size: int = 16
    learning_rate: float = 5e-4
    weight_decay: float = 0.1
    grad_norm_clip: float = 1.0
    num_workers: int = 0
    max_iters: Optional[int] = None


class Trainer:
    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.train_dataset = train_dataset
        self.callbacks = defaultdict(list)
        self.iter_num = 0
        self.loss = None
        self.iter_dt = 0.0

    def add_callback(self, event, callback):
        self.callbacks[event].append(callback)

    def trigger_callbacks(self, event):
        for callback in self.callbacks.get(event, []):
            callback(self)

    def make_optimizer(self):
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": self.config.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=self.config.learning_rate, betas=(0.9, 0.95))

    def train_step(self, batch):
        x, y = batch
        _, self.loss = self.model(x, y)
        self.model.zero_grad(set_to_none=True)
        self.loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
        self.optimizer.step()

    def run(self):
        config = self.config
        self.optimizer = self.make_optimizer()
        sampler = RandomSampler(self.train_dataset, replacement=True, num_samples=int(1e10))
        loader = DataLoader(self.train_dataset, sampler=sampler, shuffle=False, pin_memory=True,
                            batch_size=config.batch_size, num_workers=config.num_workers)
        self.model.train()
        last = time.time()
        data_iter = iter(loader)
        while True:
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(loader)
                batch = next(data_iter)
            self.train_step(batch)
            self.iter_num += 1
            now = time.time()
            self.iter_dt, last = now - last, now
            self.trigger_callbacks("on_batch_end")
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break
