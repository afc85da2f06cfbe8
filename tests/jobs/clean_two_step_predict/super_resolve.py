"""Step two of the job: enlarges one picture with a network pickled by main.py. The network
enlarges the luma; the chroma channels get bicubic interpolation, which the eye forgives."""
import argparse

import torch
from PIL import Image
from torchvision.transforms.functional import to_tensor


def parse_args():
    p = argparse.ArgumentParser(description="Enlarge a picture with a trained super-resolution network")
    p.add_argument("--input_image", required=True, help="the picture to enlarge")
    p.add_argument("--model", required=True, help="a model_epoch_N.pth written by main.py")
    p.add_argument("--output_filename", help="where the enlarged picture goes")
    p.add_argument("--cuda", action="store_true", help="run the network on the GPU")
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda" if args.cuda else "cpu")
    net = torch.load(args.model).to(device).eval()
    with Image.open(args.input_image) as picture:
        luma, blue, red = picture.convert("YCbCr").split()
    with torch.no_grad():
        enlarged = net(to_tensor(luma).unsqueeze(0).to(device)).squeeze()
    # The network may stray a little outside [0, 1]; clip before quantising to 8 bits.
    luma = Image.fromarray(enlarged.clamp(0, 1).mul(255).round().byte().cpu().numpy(), mode="L")
    blue, red = (channel.resize(luma.size, Image.BICUBIC) for channel in (blue, red))
    Image.merge("YCbCr", (luma, blue, red)).convert("RGB").save(args.output_filename)
    print("wrote", args.output_filename)


if __name__ == "__main__":
    main()
