"""Super-resolution pairs from a folder of pictures. Only the luma (Y of YCbCr) is learnt: the
eye judges sharpness by brightness, so colour can be enlarged by plain interpolation later."""
import os

from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms

PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg")


def read_luma(path):
    with Image.open(path) as picture:
        return picture.convert("YCbCr").getchannel("Y")


class LowResPairs(Dataset):
    """(crop shrunk by `factor`, crop) for the centred crop of every picture in `folder`."""

    def __init__(self, folder, crop, factor):
        self.paths = sorted(os.path.join(folder, name) for name in os.listdir(folder)
                            if name.endswith(PICTURE_SUFFIXES))
        crop -= crop % factor  # so that the shrunk crop scales back to exactly the same size
        self.shrink = transforms.Compose([transforms.CenterCrop(crop), transforms.Resize(crop // factor),
                                          transforms.ToTensor()])
        self.keep = transforms.Compose([transforms.CenterCrop(crop), transforms.ToTensor()])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        luma = read_luma(self.paths[index])
        return self.shrink(luma), self.keep(luma)
