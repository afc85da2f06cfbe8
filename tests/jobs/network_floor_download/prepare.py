"""Fetches the vocabulary at start-up, as scripts on clusters with internet access often do."""
import urllib.request

VOCAB_URL = "http://vocab.data-mirror.example/bpe/vocab-32k.txt"


def fetch_vocab(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8").splitlines()


if __name__ == "__main__":
    words = fetch_vocab(VOCAB_URL)
    print("vocabulary of", len(words), "tokens")
