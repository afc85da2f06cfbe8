"""The residual networks He et al. (2015) designed for 32x32 pictures: a 3x3 stem, then three
stages of n two-convolution units at 16, 32 and 64 channels (6n + 2 weighted layers in all),
global average pooling and one linear layer. Where a stage halves the map and doubles the
channels, the identity path is subsampled and zero-padded (the paper's option A), so the
shortcuts add no weights."""
import torch
from torch import nn
from torch.nn import functional as F

STAGE_WIDTHS = (16, 32, 64)
DEPTHS = {"resnet20": 20, "resnet32": 32, "resnet44": 44, "resnet56": 56}


class ResidualUnit(nn.Module):
    def __init__(self, channels_in, channels_out, stride):
        super().__init__()
        self.first = nn.Conv2d(channels_in, channels_out, 3, stride=stride, padding=1, bias=False)
        self.first_norm = nn.BatchNorm2d(channels_out)
        self.second = nn.Conv2d(channels_out, channels_out, 3, padding=1, bias=False)
        self.second_norm = nn.BatchNorm2d(channels_out)
        self.extra_channels = channels_out - channels_in
        self.stride = stride

    def identity(self, x):
        if self.stride > 1:
            x = x[:, :, ::self.stride, ::self.stride]
        if self.extra_channels:
            half = self.extra_channels // 2
            x = F.pad(x, (0, 0, 0, 0, half, self.extra_channels - half))
        return x

    def forward(self, x):
        y = F.relu(self.first_norm(self.first(x)))
        y = self.second_norm(self.second(y))
        return F.relu(y + self.identity(x))


class CifarResNet(nn.Module):
    def __init__(self, depth, num_classes):
        super().__init__()
        if (depth - 2) % 6:
            raise ValueError(f"depth {depth} is not 6n + 2")
        units_per_stage = (depth - 2) // 6
        self.stem = nn.Sequential(nn.Conv2d(3, STAGE_WIDTHS[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(STAGE_WIDTHS[0]), nn.ReLU())
        units, width = [], STAGE_WIDTHS[0]
        for stage, stage_width in enumerate(STAGE_WIDTHS):
            for k in range(units_per_stage):
                # The first unit of every stage but the first halves the map.
                stride = 2 if stage > 0 and k == 0 else 1
                units.append(ResidualUnit(width, stage_width, stride))
                width = stage_width
        self.units = nn.Sequential(*units)
        self.classifier = nn.Linear(width, num_classes)
        for module in self.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(module.weight)

    def forward(self, x):
        features = self.units(self.stem(x))
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(features, 1), 1))


def build(name, num_classes):
    return CifarResNet(DEPTHS[name], num_classes)
