import numpy
import torch

print(torch.__version__, numpy.__version__)
