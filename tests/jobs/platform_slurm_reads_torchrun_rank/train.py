import os

rank = int(os.environ["RANK"])
world_size = int(os.environ.get("WORLD_SIZE", "1"))
print("rank", rank, "of", world_size)
