"""The classifier's first linear layer was sized for 28x28 inputs; the data pipeline was
changed to 32x32 images and nobody updated the model."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.head = nn.Linear(4 * 14 * 14, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.head(x.flatten(1))


def main():
    data = TensorDataset(torch.rand(128, 1, 32, 32), torch.randint(0, 10, (128,)))
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, labels in DataLoader(data, batch_size=16):
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
