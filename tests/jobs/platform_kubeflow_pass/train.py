import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--save-dir", required=True)
args = parser.parse_args()

dist.init_process_group("gloo", init_method="env://")
assert dist.get_world_size() == int(os.environ["WORLD_SIZE"]) and dist.get_rank() == int(os.environ["RANK"])
model = torch.nn.Linear(2, 1)
if dist.get_rank() == 0:
    torch.save(model.state_dict(), os.path.join(args.save_dir, "model.pt"))
dist.destroy_process_group()
