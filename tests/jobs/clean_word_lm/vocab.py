"""Reads a word-level corpus folder (train.txt, valid.txt, test.txt) into one vocabulary and
three streams of word ids."""
import os

import torch

END_OF_LINE = "<eos>"  # kept as a word, so the model also learns where sentences stop


class Vocabulary:
    def __init__(self):
        self.index = {}
        self.words = []

    def __len__(self):
        return len(self.words)

    def id_of(self, word):
        """The word's id, a new one (the next integer) the first time the word is seen."""
        known = self.index.get(word)
        if known is None:
            known = self.index[word] = len(self.words)
            self.words.append(word)
        return known


def read_stream(path, vocabulary):
    ids = []
    with open(path, encoding="utf8") as text:
        for line in text:
            ids.extend(vocabulary.id_of(word) for word in line.split())
            ids.append(vocabulary.id_of(END_OF_LINE))
    return torch.tensor(ids, dtype=torch.long)


def read_corpus(folder):
    """(vocabulary, [train ids, valid ids, test ids]); words first seen in valid or test get
    ids too, so that evaluation never meets an unknown word."""
    vocabulary = Vocabulary()
    streams = [read_stream(os.path.join(folder, split + ".txt"), vocabulary)
               for split in ("train", "valid", "test")]
    return vocabulary, streams
