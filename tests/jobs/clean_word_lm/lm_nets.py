"""Next-word networks with one calling convention: net(tokens, state) takes a (steps, columns)
block of word ids and returns the log-probabilities of the following word at every position,
flattened to (steps * columns, vocabulary), and the state to pass with the next block. The
recurrent networks carry their hidden state from block to block; the Transformer keeps none and
returns None."""
import math

import torch
import torch.nn.functional as F
from torch import nn

RECURRENT_KINDS = {
    "LSTM": (nn.LSTM, {}),
    "GRU": (nn.GRU, {}),
    "RNN_TANH": (nn.RNN, {"nonlinearity": "tanh"}),
    "RNN_RELU": (nn.RNN, {"nonlinearity": "relu"}),
}


def small_uniform_init(embedding, readout, spread=0.1):
    nn.init.uniform_(embedding.weight, -spread, spread)
    nn.init.uniform_(readout.weight, -spread, spread)
    nn.init.zeros_(readout.bias)


def flat_log_probs(logits):
    return F.log_softmax(logits.reshape(-1, logits.size(-1)), dim=-1)


class RecurrentLM(nn.Module):
    def __init__(self, kind, vocabulary, emsize, nhid, nlayers, dropout=0.5, tied=False):
        super().__init__()
        if kind not in RECURRENT_KINDS:
            raise ValueError(f"no recurrent network called {kind!r} (one of {', '.join(RECURRENT_KINDS)})")
        layer_type, options = RECURRENT_KINDS[kind]
        self.embed = nn.Embedding(vocabulary, emsize)
        self.rnn = layer_type(emsize, nhid, nlayers, dropout=dropout, **options)
        self.drop = nn.Dropout(dropout)
        self.readout = nn.Linear(nhid, vocabulary)
        if tied:
            # One matrix to read and to write words (Press & Wolf; Inan et al., 2016): fewer
            # parameters and usually a lower perplexity, if both sides have the same width.
            if emsize != nhid:
                raise ValueError("--tied needs --emsize equal to --nhid")
            self.readout.weight = self.embed.weight
        small_uniform_init(self.embed, self.readout)

    def forward(self, tokens, state=None):
        # A None state is all zeros: the start of the stream.
        hidden, state = self.rnn(self.drop(self.embed(tokens)), state)
        return flat_log_probs(self.readout(self.drop(hidden))), state


def sinusoid_table(length, width):
    """The fixed position codes of Vaswani et al.: sines on even features, cosines on odd ones,
    with wavelengths in a geometric series from 2*pi to 10000*2*pi."""
    position = torch.arange(length, dtype=torch.float).unsqueeze(1)
    rate = torch.exp(torch.arange(0, width, 2, dtype=torch.float) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    return table


class CausalTransformerLM(nn.Module):
    def __init__(self, vocabulary, emsize, nhead, nhid, nlayers, dropout=0.5, longest=5000):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, emsize)
        self.embed_scale = math.sqrt(emsize)
        self.register_buffer("positions", sinusoid_table(longest, emsize).unsqueeze(1))
        self.drop = nn.Dropout(dropout)
        self.stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(emsize, nhead, nhid, dropout), nlayers)
        self.readout = nn.Linear(emsize, vocabulary)
        small_uniform_init(self.embed, self.readout)

    def forward(self, tokens, state=None):
        steps = len(tokens)
        # -inf above the diagonal: position t attends to positions up to t and never ahead.
        no_peeking = torch.full((steps, steps), float("-inf"), device=tokens.device).triu(1)
        x = self.drop(self.embed(tokens) * self.embed_scale + self.positions[:steps])
        return flat_log_probs(self.readout(self.stack(x, mask=no_peeking))), None
