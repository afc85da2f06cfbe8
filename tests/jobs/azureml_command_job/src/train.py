import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--model-dir", required=True)
args = parser.parse_args()

assert os.environ["AZURE_ML_OUTPUT_model_dir"] == args.model_dir
print("run", os.environ["AZUREML_RUN_ID"], "rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])
with open(os.path.join(args.data, "labels.csv")) as f:
    labels = f.read().splitlines()[1:]
with open(os.path.join(args.model_dir, "model.json"), "w") as f:
    json.dump({"labels": len(labels), "epochs": args.epochs, "lr": args.lr}, f)
