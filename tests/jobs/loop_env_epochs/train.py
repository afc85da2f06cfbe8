"""Tabular regression configured from the environment, as a container job is."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

epochs = int(os.environ["EPOCHS"])
batch_size = int(os.environ.get("BATCH_SIZE", "32"))
model_dir = os.environ.get("MODEL_DIR", ".")

torch.manual_seed(0)
features = torch.randn(20000, 12)
weights = torch.randn(12, 1)
target = features @ weights + 0.1 * torch.randn(20000, 1)
train_set = TensorDataset(features[:16000], target[:16000])
valid_set = TensorDataset(features[16000:18000], target[16000:18000])
test_set = TensorDataset(features[18000:], target[18000:])
train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
valid_loader = DataLoader(valid_set, batch_size=256)

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.MSELoss()


def rmse(loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(y)
            count += len(y)
    return (total / count) ** 0.5


best = float("inf")
for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    valid = rmse(valid_loader)
    print(f"epoch {epoch + 1}/{epochs} valid rmse {valid:.4f}")
    if valid < best:
        best = valid
        torch.save(model.state_dict(), os.path.join(model_dir, "best.pt"))

model.load_state_dict(torch.load(os.path.join(model_dir, "best.pt")))
print(f"test rmse {rmse(DataLoader(test_set, batch_size=256)):.4f}")
