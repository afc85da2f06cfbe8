"""Next-word predictors for main.py. Both read a (time, batch) tensor of word ids and return
(time * batch, vocabulary) logits with a state to pass to the next window: the recurrent one
carries its hidden state across windows, the Transformer has none and attends only within one."""
import math

import torch
import torch.nn as nn

RECURRENT = {
    'LSTM': (nn.LSTM, {}),
    'GRU': (nn.GRU, {}),
    'RNN_TANH': (nn.RNN, {'nonlinearity': 'tanh'}),
    'RNN_RELU': (nn.RNN, {'nonlinearity': 'relu'}),
}
KINDS = sorted(RECURRENT) + ['Transformer']


def small_uniform_(*weights):
    # The usual recipe for these models (Zaremba et al., 2014) starts weights in [-0.1, 0.1]; PyTorch
    # would draw embeddings from N(0, 1).
    for weight in weights:
        nn.init.uniform_(weight, -0.1, 0.1)


class RecurrentLM(nn.Module):
    """Embedding -> stacked LSTM/GRU/RNN -> linear layer over the vocabulary, dropout between."""

    def __init__(self, kind, vocabulary, embedding, hidden, layers, dropout, tie=False):
        super().__init__()
        cell, options = RECURRENT[kind]
        self.layers, self.hidden, self.lstm = layers, hidden, cell is nn.LSTM
        self.embed = nn.Embedding(vocabulary, embedding)
        self.rnn = cell(embedding, hidden, layers, dropout=dropout, **options)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, vocabulary)
        if tie:
            # One matrix both reads and writes words (Press & Wolf; Inan et al., 2016): fewer
            # parameters and usually a lower perplexity, but the two sizes must agree.
            if hidden != embedding:
                raise ValueError('--tied needs --nhid equal to --emsize')
            self.out.weight = self.embed.weight
        small_uniform_(self.embed.weight, self.out.weight)
        nn.init.zeros_(self.out.bias)

    def initial_state(self, batch):
        zeros = next(self.parameters()).new_zeros(self.layers, batch, self.hidden)
        return (zeros, zeros.clone()) if self.lstm else zeros

    def forward(self, words, state):
        features, state = self.rnn(self.drop(self.embed(words)), state)
        return self.out(self.drop(features)).flatten(0, 1), state


def sinusoids(length, width):
    """The fixed position code of "Attention Is All You Need": for each position, sines and
    cosines of it at geometrically spaced frequencies, interleaved."""
    frequencies = torch.exp(torch.arange(0, width, 2, dtype=torch.float) * (-math.log(10000.0) / width))
    angles = torch.arange(length, dtype=torch.float).unsqueeze(1) * frequencies
    return torch.stack([angles.sin(), angles.cos()], dim=2).flatten(1)[:, :width]


class TransformerLM(nn.Module):
    """Embedding plus position code -> Transformer encoder layers under a causal mask -> linear layer."""

    def __init__(self, vocabulary, embedding, heads, feedforward, layers, dropout, longest=5000):
        super().__init__()
        self.scale = math.sqrt(embedding)
        self.embed = nn.Embedding(vocabulary, embedding)
        self.register_buffer('positions', sinusoids(longest, embedding).unsqueeze(1))
        self.drop = nn.Dropout(dropout)
        block = nn.TransformerEncoderLayer(embedding, heads, feedforward, dropout)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.out = nn.Linear(embedding, vocabulary)
        small_uniform_(self.embed.weight, self.out.weight)
        nn.init.zeros_(self.out.bias)

    def initial_state(self, batch):
        return None

    def forward(self, words, state=None):
        steps = words.size(0)
        # True above the diagonal: no position may look at a later one, the word it must predict.
        later = torch.ones(steps, steps, dtype=torch.bool, device=words.device).triu(1)
        x = self.drop(self.embed(words) * self.scale + self.positions[:steps])
        return self.out(self.blocks(x, mask=later)).flatten(0, 1), state


def build(kind, vocabulary, args):
    if kind == 'Transformer':
        return TransformerLM(vocabulary, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout)
    return RecurrentLM(kind, vocabulary, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
