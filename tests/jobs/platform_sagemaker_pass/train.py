import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--learning-rate", type=float, required=True)
parser.add_argument("--optimizer", required=True)
args = parser.parse_args()

assert args.epochs == 2 and args.learning_rate == 0.01 and args.optimizer == "adam", args
assert os.environ["SM_HP_OPTIMIZER"] == "adam" and os.environ["SM_HP_EPOCHS"] == "2"
# A hyphenated name is not a shell identifier; it reaches the job all the same.
assert os.environ["SM_HP_LEARNING-RATE"] == "0.01", sorted(os.environ)
assert json.loads(os.environ["SM_HPS"]) == {"epochs": 2, "learning-rate": 0.01, "optimizer": "adam"}
with open("/opt/ml/input/config/hyperparameters.json") as f:
    assert json.load(f) == {"epochs": "2", "learning-rate": "0.01", "optimizer": '"adam"'}
with open("/opt/ml/input/config/resourceconfig.json") as f:
    assert json.load(f)["current_host"] == os.environ["SM_CURRENT_HOST"] == "algo-1"
with open("/opt/ml/input/config/inputdataconfig.json") as f:
    assert json.load(f)["train"]["TrainingInputMode"] == "File"
assert os.getuid() == 0

with open(os.path.join(os.environ["SM_CHANNEL_TRAIN"], "train.csv")) as f:
    rows = f.read().splitlines()[1:]
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.json"), "w") as f:
    json.dump({"rows": len(rows)}, f)
print("trained on", len(rows), "rows")
