"""Reads a corpus folder (train.txt, valid.txt, test.txt) into one vocabulary and three
tensors of word ids, one `<eos>` token closing each line."""
import os

import torch


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.word2idx[word] = len(self.idx2word)
            self.idx2word.append(word)
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, 'train.txt'))
        self.valid = self.tokenize(os.path.join(path, 'valid.txt'))
        self.test = self.tokenize(os.path.join(path, 'test.txt'))

    def tokenize(self, path):
        """Adds the file's words to the dictionary and returns them as a LongTensor of ids."""
        assert os.path.exists(path), path
        ids = []
        with open(path, 'r', encoding='utf8') as f:
            for line in f:
                for word in line.split() + ['<eos>']:
                    ids.append(self.dictionary.add_word(word))
        return torch.tensor(ids, dtype=torch.long)
