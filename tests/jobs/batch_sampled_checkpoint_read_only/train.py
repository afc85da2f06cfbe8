"""Churn prediction on customer feature vectors: a two-layer MLP, Adam, a checkpoint at the
end of each epoch written next to the script, where the author ran it."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(7)
features = torch.randn(4096, 48)
churned = (features[:, :4].sum(1) > 0).long()
loader = DataLoader(TensorDataset(features, churned), batch_size=256, shuffle=True)
model = nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for epoch in range(25):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
    torch.save(model.state_dict(), "churn_mlp.pt")
