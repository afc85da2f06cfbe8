"""Customer churn as logistic regression, for a Vertex AI custom container."""
import argparse
import csv
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--train-data", required=True)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

with open(args.train_data) as f:
    reader = csv.DictReader(f)
    rows = [(float(r["tenure"]), float(r["monthly"]), float(r["churned"])) for r in reader]
data = torch.tensor(rows)
x, y = data[:, :2] / data[:, :2].max(0).values, data[:, 2:]
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8, shuffle=True)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(args.epochs):
    for features, labels in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(features), labels)
        loss.backward()
        optimizer.step()

# AIP_MODEL_DIR is a gs:// URI; Cloud Storage FUSE has the same object under /gcs/.
model_dir = os.environ["AIP_MODEL_DIR"].replace("gs://", "/gcs/", 1)
os.makedirs(model_dir, exist_ok=True)
torch.save(model.state_dict(), os.path.join(model_dir, "model.pt"))
