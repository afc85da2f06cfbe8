"""A placeholder training script; the command never gets to run it."""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
print("training for", parser.parse_args().epochs, "epochs")
