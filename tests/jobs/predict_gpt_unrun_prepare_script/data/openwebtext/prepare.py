"""Downloads OpenWebText and writes train.bin and val.bin with GPT-2's tokenizer: a separate
step, run once by hand before training on it, never by the training job."""
import os

import numpy as np
import tiktoken
from datasets import load_dataset
from tqdm import tqdm

num_proc = 8
enc = tiktoken.get_encoding("gpt2")

if __name__ == "__main__":
    dataset = load_dataset("openwebtext", num_proc=num_proc)
    split = dataset["train"].train_test_split(test_size=0.0005, seed=2357, shuffle=True)
    for name, dset in split.items():
        ids = [enc.encode_ordinary(example["text"]) for example in tqdm(dset)]
        arr = np.memmap(os.path.join(os.path.dirname(__file__), f"{name}.bin"), dtype=np.uint16, mode="w+",
                        shape=(sum(len(i) for i in ids),))
        arr[:] = np.concatenate(ids)
        arr.flush()
