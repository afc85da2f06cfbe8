import json
import os

os.makedirs("outputs", exist_ok=True)
with open(os.path.join("outputs", "model.json"), "w") as f:
    json.dump({"weights": [0.5, 0.25]}, f)
