"""The BLAS an image's PyTorch multiplies matrices with, and what it costs on one thread: a
1024x1024x1024 product and ten Linear(1024, 1024) calls at batch 256, the best of 5 after one
warm-up. Prints one JSON line (benchmarks/images.sh)."""
import json
import os
import re
import time

import torch


def best(fn, runs=5):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    torch.set_num_threads(1)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    layers = [torch.nn.Linear(1024, 1024) for _ in range(10)]
    x = torch.randn(256, 1024)

    def linear():
        with torch.no_grad():
            y = x
            for layer in layers:
                y = layer(y)

    info = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    print("BLAS " + json.dumps({
        "torch": torch.__version__,
        "blas_info": info.group(1) if info else None,
        "libblas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
        "matmul_s": best(lambda: a @ b),
        "linear_s": best(linear),
    }), flush=True)


if __name__ == "__main__":
    main()
