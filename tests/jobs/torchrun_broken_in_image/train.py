"""One process per GPU started by torchrun, as PyTorch's DDP tutorials do."""
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2).cuda())
print("rank", dist.get_rank(), "of", dist.get_world_size())
dist.destroy_process_group()
