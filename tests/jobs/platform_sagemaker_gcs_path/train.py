import os

model_dir = os.environ["SM_MODEL_DIR"]
with open("/gcs/my-bucket/train.csv") as f:
    rows = f.read().splitlines()
print(len(rows), "rows to", model_dir)
