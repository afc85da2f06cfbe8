"""Sub-pixel super-resolution network (Shi et al., 2016). Every convolution runs at the low
resolution; the last one emits factor**2 values per pixel, and PixelShuffle lays them out as an
image `factor` times larger, which is far cheaper than convolving an upsampled image."""
from torch import nn


class SubPixelNet(nn.Module):
    def __init__(self, factor, width=64):
        super().__init__()
        narrow = width // 2
        self.features = nn.Sequential(
            nn.Conv2d(1, width, kernel_size=5, padding=2), nn.ReLU(),
            nn.Conv2d(width, width, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(width, narrow, kernel_size=3, padding=1), nn.ReLU(),
        )
        self.to_subpixels = nn.Conv2d(narrow, factor * factor, kernel_size=3, padding=1)
        self.shuffle = nn.PixelShuffle(factor)
        self.reset_parameters()

    def reset_parameters(self):
        # Orthogonal weights scaled for ReLU keep the activations' spread from layer to layer,
        # which lets Adam start at a fairly large step.
        gain = nn.init.calculate_gain("relu")
        for layer in self.features:
            if isinstance(layer, nn.Conv2d):
                nn.init.orthogonal_(layer.weight, gain)
        nn.init.orthogonal_(self.to_subpixels.weight)

    def forward(self, luma):
        return self.shuffle(self.to_subpixels(self.features(luma)))
