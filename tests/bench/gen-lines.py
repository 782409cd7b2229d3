#!/usr/bin/python3
"""Print the scrolling benchmark's input: N varied lines of printable ASCII.

    gen-lines.py [--lines N] [--seed S]

Every line has 40-79 characters made of words of 1-12 letters, digits or
punctuation, so consecutive lines differ in most cells: a renderer that
redraws only changed cells (fbcon, consoled's damage tracking) gets no help
from the input, as it would from `seq` or a repeated line.  The output depends
only on N and the seed (Python's random.Random is stable for a given seed),
so every run and every card scrolls the same bytes.
"""

import argparse
import random
import string
import sys

DEFAULT_LINES = 20000
DEFAULT_SEED = 20240601

WORD_CHARS = string.ascii_letters + string.digits
PUNCT = ".,;:!?-+=/()[]{}<>#$%&*@^_~|'\"`"


def word(rng):
    n = rng.choice((1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 12))
    w = "".join(rng.choice(WORD_CHARS) for _ in range(n))
    if rng.random() < 0.15:
        w += rng.choice(PUNCT)
    return w


def line(rng):
    length = rng.randint(40, 79)
    text = word(rng)
    while len(text) < length:
        text += " " + word(rng)
    text = text[:length]
    # A line must not end in a space (it would be shorter on screen than in bytes).
    if text.endswith(" "):
        text = text[:-1] + rng.choice(WORD_CHARS)
    return text


def generate(n, seed=DEFAULT_SEED):
    rng = random.Random(seed)
    return "".join(line(rng) + "\n" for _ in range(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=DEFAULT_LINES)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("n", nargs="?", type=int, help="number of lines (same as --lines)")
    args = ap.parse_args()
    n = args.n if args.n is not None else args.lines
    sys.stdout.write(generate(n, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
