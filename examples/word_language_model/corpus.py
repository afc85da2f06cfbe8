"""A text corpus as word ids: train.txt, valid.txt and test.txt of one folder share a vocabulary
that grows as the files are read. Words are whatever whitespace separates; the end of each line
is a word of its own, <eos>, so that the model learns where sentences stop."""
import os

import torch

END_OF_LINE = '<eos>'
SPLITS = ('train', 'valid', 'test')


class Vocabulary:
    def __init__(self):
        self.index = {}
        self.words = []

    def __len__(self):
        return len(self.words)

    def id_of(self, word):
        """The word's id, a new one (the next free number) if the word is new."""
        if word not in self.index:
            self.index[word] = len(self.words)
            self.words.append(word)
        return self.index[word]


def read_split(path, vocabulary):
    with open(path, encoding='utf-8') as text:
        ids = [vocabulary.id_of(word) for line in text for word in line.split() + [END_OF_LINE]]
    return torch.tensor(ids, dtype=torch.long)


def read_corpus(folder):
    """The vocabulary and a 1-d tensor of word ids for each split, by name."""
    vocabulary = Vocabulary()
    streams = {name: read_split(os.path.join(folder, name + '.txt'), vocabulary) for name in SPLITS}
    return vocabulary, streams
