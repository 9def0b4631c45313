"""Build the English verb table (``validator/language/english_verbs.txt``) from ``lemminflect``'s dictionary.

The reader needs one fact about a word: the verb lemmas it is a form of (``paid`` -> ``pay``). Loading
``lemminflect`` for it at run time cost a one-shot check about 0.4 s (numpy, an 80,000-line table
parsed line by line), so the table is built here, once, and shipped as data; run
``python -m validator.devtools.verbs > validator/language/english_verbs.txt`` (``make verbs``) after upgrading
``lemminflect``, and a test holds the shipped table to what this prints. ``lemminflect`` is a
development dependency only.

One line per word that is a form of a verb: the word alone when it is its own only lemma, else the
word and its lemmas, separated by single spaces, in ``lemminflect``'s order. The dictionary's few
spaced entries ("off set") are left out: the reader's tokens are single words.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

__all__ = ["lines"]


def lines() -> Iterator[str]:
    """The table's lines, header first, sorted by word."""
    from importlib.metadata import version

    from lemminflect import getAllLemmas
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer = Lemmatizer()
    words = {w.lower() for w in (*lemmatizer._getLemmaDict(), *lemmatizer._getOverridesDict()) if " " not in w}
    built = f"lemminflect {version('lemminflect')} (MIT)"
    yield f"# verb forms and their lemmas, from {built}: python -m validator.devtools.verbs"
    for word in sorted(words):
        found = tuple(getAllLemmas(word, upos="VERB").get("VERB", ()))
        if found:
            yield word if found == (word,) else " ".join((word, *found))


if __name__ == "__main__":
    sys.stdout.writelines(f"{line}\n" for line in lines())
