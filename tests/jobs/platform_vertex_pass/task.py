import json
import os

def local(uri):
    """gs://bucket/path as Cloud Storage FUSE shows it."""
    return "/gcs/" + uri[len("gs://"):] if uri.startswith("gs://") else uri

cluster = json.loads(os.environ["CLUSTER_SPEC"])
assert cluster["task"]["type"] == "workerpool0"
with open(os.path.join(local(os.environ["AIP_TRAINING_DATA_URI"]), "train.txt")) as f:
    lines = f.read().splitlines()
model_dir = local(os.environ["AIP_MODEL_DIR"])
os.makedirs(model_dir, exist_ok=True)
with open(os.path.join(model_dir, "model.json"), "w") as f:
    json.dump({"lines": len(lines), "job": os.environ["CLOUD_ML_JOB_ID"]}, f)
