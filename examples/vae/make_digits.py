"""Writes a tiny MNIST look-alike in torchvision's layout, data/MNIST/raw/{train,t10k}-*-ubyte
(the uncompressed IDX files torchvision.datasets.MNIST reads): 28x28 grey digits drawn as
seven-segment strokes with random thickness, slant, position and intensity. It stands in for
the real download, which the platform's network would not allow. Run once; its output is
committed, so the job never runs it.

    python make_digits.py [--out data] [--train 64] [--test 32] [--seed 3]
"""
import argparse
import os
import random
import struct

# Segments as line strokes on a 0..1 box (x right, y down): a top, b top right, c bottom right,
# d bottom, e bottom left, f top left, g middle.
SEGMENTS = {
    'a': ((0, 0), (1, 0)), 'b': ((1, 0), (1, 0.5)), 'c': ((1, 0.5), (1, 1)),
    'd': ((0, 1), (1, 1)), 'e': ((0, 0.5), (0, 1)), 'f': ((0, 0), (0, 0.5)),
    'g': ((0, 0.5), (1, 0.5)),
}
DIGITS = ['abcdef', 'bc', 'abged', 'abgcd', 'fgbc', 'afgcd', 'afgedc', 'abc', 'abcdefg', 'abfgcd']
SIDE = 28


def distance_to_segment(px, py, x0, y0, x1, y1):
    dx, dy = x1 - x0, y1 - y0
    t = max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / (dx * dx + dy * dy)))
    return ((px - x0 - t * dx) ** 2 + (py - y0 - t * dy) ** 2) ** 0.5


def draw(digit, rng):
    width, height = rng.uniform(8, 12), rng.uniform(14, 19)
    left, top = rng.uniform(4, SIDE - 4 - width), rng.uniform(3, SIDE - 3 - height)
    slant, thickness, ink = rng.uniform(-0.25, 0.25), rng.uniform(1.2, 2.2), rng.uniform(0.75, 1.0)
    strokes = []
    for name in DIGITS[digit]:
        (ax, ay), (bx, by) = SEGMENTS[name]
        strokes.append(tuple(v for x, y in ((ax, ay), (bx, by)) for v in (
            left + x * width + slant * (1 - y) * height, top + y * height)))
    pixels = bytearray()
    for row in range(SIDE):
        for col in range(SIDE):
            d = min(distance_to_segment(col + 0.5, row + 0.5, *s) for s in strokes)
            # Full ink inside the stroke, a one-pixel soft edge around it.
            level = ink * max(0.0, min(1.0, thickness - d + 0.5))
            pixels.append(int(round(255 * level)))
    return bytes(pixels)


def write_split(raw, prefix, count, rng):
    labels = [rng.randrange(10) for _ in range(count)]
    with open(os.path.join(raw, prefix + '-images-idx3-ubyte'), 'wb') as f:
        f.write(struct.pack('>IIII', 0x803, count, SIDE, SIDE))
        for label in labels:
            f.write(draw(label, rng))
    with open(os.path.join(raw, prefix + '-labels-idx1-ubyte'), 'wb') as f:
        f.write(struct.pack('>II', 0x801, count))
        f.write(bytes(labels))


def main():
    parser = argparse.ArgumentParser(description='Write a tiny MNIST look-alike')
    parser.add_argument('--out', default='data')
    parser.add_argument('--train', type=int, default=64)
    parser.add_argument('--test', type=int, default=32)
    parser.add_argument('--seed', type=int, default=3)
    args = parser.parse_args()
    raw = os.path.join(args.out, 'MNIST', 'raw')
    os.makedirs(raw, exist_ok=True)
    rng = random.Random(args.seed)
    write_split(raw, 'train', args.train, rng)
    write_split(raw, 't10k', args.test, rng)


if __name__ == '__main__':
    main()
