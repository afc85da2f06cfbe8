import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--config", required=True)
parser.add_argument("--data", required=True)
args = parser.parse_args()
print(args.config, args.data)
