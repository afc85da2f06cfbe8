"""Writes the small English-like corpus in data/ (train.txt, valid.txt, test.txt) that stands in
for WikiText-2 in the dry run: sentences from a little grammar, one paragraph a line. Run once;
its output is committed, so the job never runs it.

    python make_corpus.py [--out data] [--seed 7]
"""
import argparse
import os
import random

DETERMINERS = "the a this that every some one no each another".split()
ADJECTIVES = ("old young small large quiet busy early late bright dark warm cold green red "
              "narrow wide famous local northern southern ancient modern heavy light simple "
              "strange gentle proud").split()
NOUNS = ("river town village king queen soldier farmer teacher student church bridge road "
         "ship harbour castle forest mountain valley station market garden army city council "
         "library house song album team season match player writer painter island railway "
         "mill school tower lake war book film letter company family").split()
PLURALS = {"city": "cities", "company": "companies", "family": "families", "library": "libraries",
           "army": "armies", "church": "churches", "match": "matches"}
VERBS = ("built crossed visited opened closed followed described painted defended carried "
         "joined left found watched reached praised replaced recorded won lost sold bought "
         "named wrote").split()
INTRANSITIVE = "arrived grew fell rose waited returned settled failed began ended remained".split()
ADVERBS = "quickly slowly later soon again finally quietly often rarely never".split()
PREPOSITIONS = "in near across through under over beside behind along towards".split()
CONJUNCTIONS = "and but while because although".split()
YEARS = [str(y) for y in range(1780, 1990, 7)]
NAMES = ("Anna Thomas Maria John Elena Peter Clara Henry Sofia William Arthur Lucy Victor "
         "Rosa").split()


def plural(noun):
    return PLURALS.get(noun, noun + "s")


def noun_phrase(rng):
    if rng.random() < 0.15:
        return [rng.choice(NAMES)]
    words = [rng.choice(DETERMINERS)]
    if rng.random() < 0.5:
        words.append(rng.choice(ADJECTIVES))
    noun = rng.choice(NOUNS)
    words.append(plural(noun) if words[0] in ("some", "no") and rng.random() < 0.5 else noun)
    if rng.random() < 0.25:
        words += ["of", "the", rng.choice(NOUNS)]
    return words


def clause(rng):
    words = noun_phrase(rng)
    if rng.random() < 0.6:
        words += [rng.choice(VERBS)] + noun_phrase(rng)
    else:
        words.append(rng.choice(INTRANSITIVE))
    if rng.random() < 0.4:
        words += [rng.choice(PREPOSITIONS)] + noun_phrase(rng)
    if rng.random() < 0.2:
        words.append(rng.choice(ADVERBS))
    if rng.random() < 0.2:
        words += ["in", rng.choice(YEARS)]
    return words


def sentence(rng):
    words = clause(rng)
    if rng.random() < 0.3:
        words += [",", rng.choice(CONJUNCTIONS)] + clause(rng)
    words[0] = words[0].capitalize()
    return words + ["."]


def write_split(path, rng, size):
    with open(path, "w") as out:
        written = 0
        while written < size:
            line = " " + " ".join(w for _ in range(rng.randint(2, 5)) for w in sentence(rng)) + " \n"
            out.write(line)
            written += len(line)


def main():
    parser = argparse.ArgumentParser(description="Write a small English-like corpus")
    parser.add_argument("--out", default="data")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    for split, size in (("train", 40000), ("valid", 6000), ("test", 6000)):
        write_split(os.path.join(args.out, split + ".txt"), rng, size)


if __name__ == "__main__":
    main()
