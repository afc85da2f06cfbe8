"""Three training steps of a known model on synthetic batches, for benchmarks/memory.sh. With
--truth (run without the harness, under LD_PRELOAD=libpeak.so) it prints what malloc really
held at the peak of the second step, over what it held before the model was built: the same
window the harness measures, between the returns of the first and the second step()."""
import argparse
import ctypes

import torch
import torch.nn as nn
import torch.nn.functional as F


class LanguageModel(nn.Module):
    """The word language model's medium LSTM: 650 units, two layers, tied weights."""

    def __init__(self, vocabulary=10000, size=650):
        super().__init__()
        self.encoder = nn.Embedding(vocabulary, size)
        self.rnn = nn.LSTM(size, size, 2, dropout=0.5)
        self.decoder = nn.Linear(size, vocabulary)
        self.decoder.weight = self.encoder.weight

    def forward(self, words):
        output, _ = self.rnn(self.encoder(words))
        return self.decoder(output)


class Encoder(nn.Module):
    """A BERT-small-like encoder: 6 layers of width 512, 8 heads, a classifier on the mean."""

    def __init__(self, vocabulary=8000, width=512):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        layer = nn.TransformerEncoderLayer(width, 8, 2048, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 6)
        self.classify = nn.Linear(width, 2)

    def forward(self, tokens):
        return self.classify(self.encoder(self.embed(tokens)).mean(1))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 10))


def setup(name, batch):
    """(model, optimizer, batch maker, loss) of each known model."""
    if name == "mlp":
        model = mlp()
        return model, torch.optim.Adam(model.parameters()), \
            lambda: (torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))), F.cross_entropy
    if name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(num_classes=1000)
        return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), \
            lambda: (torch.randn(batch, 3, 224, 224), torch.randint(0, 1000, (batch,))), F.cross_entropy
    if name == "lstm":
        model = LanguageModel()
        return model, torch.optim.SGD(model.parameters(), lr=20), \
            lambda: (torch.randint(0, 10000, (35, batch)), torch.randint(0, 10000, (35, batch))), \
            lambda out, target: F.cross_entropy(out.view(-1, out.size(-1)), target.view(-1))
    if name == "transformer":
        model = Encoder()
        return model, torch.optim.AdamW(model.parameters()), \
            lambda: (torch.randint(0, 8000, (batch, 128)), torch.randint(0, 2, (batch,))), F.cross_entropy
    raise SystemExit("unknown model " + name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    counter = ctypes.CDLL(None) if args.truth else None
    if counter is not None:
        counter.preflight_current_bytes.restype = counter.preflight_peak_bytes.restype = ctypes.c_longlong
        baseline = counter.preflight_current_bytes()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, optimizer, make_batch, loss_of = setup(args.model, args.batch_size)
    model.to(device).train()
    for step in range(3):
        x, y = make_batch()
        loss = loss_of(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if counter is not None and step == 0:
            counter.preflight_reset_peak()
        if counter is not None and step == 1:
            print("truth bytes", counter.preflight_peak_bytes() - baseline)


if __name__ == "__main__":
    main()
