"""Fine-tunes a ViT-Large-sized image classifier (304M parameters) on a folder of labelled
crops; the best weights are saved next to the script, where the author kept them."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Crops(Dataset):
    """Stands in for the lab's crop folder: 224 x 224 RGB, 37 classes."""

    def __len__(self):
        return 4096

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, 224, 224, generator=g), int(torch.randint(0, 37, (1,), generator=g))


class ViT(nn.Module):
    def __init__(self, classes, width=1024, depth=24, heads=16, patch=16, size=224):
        super().__init__()
        self.patches = nn.Conv2d(3, width, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.position = nn.Parameter(torch.zeros(1, (size // patch) ** 2 + 1, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, classes))

    def forward(self, images):
        x = self.patches(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], 1) + self.position
        return self.head(self.encoder(x)[:, 0])


model = ViT(classes=37).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.05)
loader = DataLoader(Crops(), batch_size=16, shuffle=True, num_workers=2)
best = 0.0
for epoch in range(10):
    correct = seen = 0
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
        logits = model(images)
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        correct += (logits.argmax(1) == labels).sum().item()
        seen += len(labels)
    accuracy = correct / seen
    print(f"epoch {epoch}: loss {loss.item():.3f} accuracy {accuracy:.3f}")
    if accuracy >= best:
        best = accuracy
        torch.save(model.state_dict(), "vit_large_best.pt")
