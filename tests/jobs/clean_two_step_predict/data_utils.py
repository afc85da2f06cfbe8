from os import listdir
from os.path import join

import torch.utils.data as data
from PIL import Image
from torchvision.transforms import CenterCrop, Compose, Resize, ToTensor


def is_image_file(filename):
    return any(filename.endswith(extension) for extension in [".png", ".jpg", ".jpeg"])


def load_img(filepath):
    img = Image.open(filepath).convert("YCbCr")
    y, _, _ = img.split()
    return y


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


def input_transform(crop_size, upscale_factor):
    return Compose([CenterCrop(crop_size), Resize(crop_size // upscale_factor), ToTensor()])


def target_transform(crop_size):
    return Compose([CenterCrop(crop_size), ToTensor()])


class DatasetFromFolder(data.Dataset):
    def __init__(self, image_dir, crop_size, upscale_factor):
        super(DatasetFromFolder, self).__init__()
        self.image_filenames = sorted(join(image_dir, x) for x in listdir(image_dir) if is_image_file(x))
        crop_size = calculate_valid_crop_size(crop_size, upscale_factor)
        self.input_transform = input_transform(crop_size, upscale_factor)
        self.target_transform = target_transform(crop_size)

    def __getitem__(self, index):
        image = load_img(self.image_filenames[index])
        return self.input_transform(image), self.target_transform(image.copy())

    def __len__(self):
        return len(self.image_filenames)
