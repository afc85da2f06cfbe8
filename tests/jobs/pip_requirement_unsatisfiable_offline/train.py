"""Fits a line with torch.compile'd step (PyTorch 2.x)."""
import torch

model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 32).unsqueeze(1)
y = 3 * x + 1
for _step in range(20):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
