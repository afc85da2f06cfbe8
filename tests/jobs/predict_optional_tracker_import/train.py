# Experiment tracking only when asked for, as many training scripts offer it.
import argparse
import math

parser = argparse.ArgumentParser()
parser.add_argument("--wandb", action="store_true", help="log to Weights & Biases")
parser.add_argument("--epochs", type=int, default=50)
args = parser.parse_args()

if args.wandb:
    import wandb
    wandb.init(project="curve-fit", config=vars(args))

w = 0.0
for _epoch in range(args.epochs):
    grad = sum(2 * (w * x - math.sin(x)) * x for x in [i / 10 for i in range(20)])
    w -= 0.001 * grad
    if args.wandb:
        wandb.log({"w": w})
print("w =", round(w, 4))
