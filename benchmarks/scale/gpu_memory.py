"""The scale jobs' training step on a real GPU (docs/benchmarks.md "Scale"): the memory the
caching allocator reserved at its peak and the step's time, to set against what a dry run
predicts for the same step. Runs where PyTorch sees a CUDA GPU:

    python3 benchmarks/scale/gpu_memory.py OUT.json

Each model trains three steps on random data of the job's own shapes, in FP32 as the jobs do;
the peak is read over the third (the optimizer's state exists by then)."""
import importlib.util
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def job_module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name, "train.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resnet50():
    model = torchvision.models.resnet50(weights=None).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x, y = torch.rand(256, 3, 224, 224, device="cuda"), torch.randint(0, 1000, (256,), device="cuda")

    def step():
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def gpt2_small():
    gpt = job_module("gpt2_small")
    model = gpt.GPT().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    x = torch.randint(0, 50257, (12, 1024), device="cuda")

    def step():  # two micro-batches of the job's forty: the memory is one micro-batch's
        for _ in range(2):
            (model(x, x) / 40).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def bert_large():
    bert = job_module("bert_large")
    model = bert.Bert().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    ids = torch.randint(1000, bert.VOCAB, (32, 512), device="cuda")
    mask = torch.ones_like(ids)

    def step():
        logits = model(ids, mask)
        loss = F.cross_entropy(logits.view(-1, bert.VOCAB), ids.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def measure(make):
    torch.cuda.empty_cache()
    step = make()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    step()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    out = {"reserved_peak": torch.cuda.max_memory_reserved(),
           "allocated_peak": torch.cuda.max_memory_allocated(), "seconds": seconds}
    del step
    return out


def main():
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
               "tf32_cudnn": torch.backends.cudnn.allow_tf32}
    for name, make in (("resnet50", resnet50), ("gpt2_small", gpt2_small), ("bert_large", bert_large)):
        try:
            results[name] = measure(make)
        except Exception as exc:  # a model that does not fit says so
            results[name] = {"error": "%s: %s" % (type(exc).__name__, str(exc)[:300])}
        print(name, results[name], flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
