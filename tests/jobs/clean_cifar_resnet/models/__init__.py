from .resnet import resnet20, resnet32, resnet44, resnet56

__all__ = ["resnet20", "resnet32", "resnet44", "resnet56"]
