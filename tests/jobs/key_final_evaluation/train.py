"""Validation during training reports accuracy only; the final evaluation after training asks
for a metric that is never computed. Developers who stop at the first checkpoint never see it."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += model(x).argmax(1).eq(y).sum().item()
            total += len(y)
    return {"accuracy": correct / total}


def main():
    train_loader = DataLoader(TensorDataset(torch.randn(512, 8), torch.randint(0, 3, (512,))), batch_size=64)
    val_loader = DataLoader(TensorDataset(torch.randn(128, 8), torch.randint(0, 3, (128,))), batch_size=64)
    model = torch.nn.Linear(8, 3)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        model.train()
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        metrics = evaluate(model, val_loader)
        print("epoch", epoch, "accuracy", metrics["accuracy"])

    final = evaluate(model, val_loader)
    print("final top-5 accuracy", final["top5"])


if __name__ == "__main__":
    main()
