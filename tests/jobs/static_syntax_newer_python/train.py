import torch

try:
    state = torch.load("last.pt")
except FileNotFoundError, EOFError:
    state = None

model = torch.nn.Linear(4, 2)
if state is not None:
    model.load_state_dict(state)
print(model(torch.ones(1, 4)))
