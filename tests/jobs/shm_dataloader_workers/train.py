"""Large image batches loaded by DataLoader workers: each batch travels through /dev/shm,
which is Docker's default 64 MB on the platform, so the workers die with a bus error."""
import torch
from torch.utils.data import DataLoader, Dataset


class HighResolutionImages(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, index):
        return torch.rand(3, 512, 512), index % 10


def main():
    loader = DataLoader(HighResolutionImages(), batch_size=64, num_workers=2)
    model = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(8), torch.nn.Flatten(), torch.nn.Linear(192, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
