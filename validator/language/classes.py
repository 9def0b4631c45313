"""The word classes code reads: a closed set, each name once.

The lexer (:mod:`validator.text.lexer`) gives each token its classes: those of the pack's ``[classes]`` table,
those the lexer makes itself (a verb form, a noun, a number, a value, a name, a time, a sentence's end, a word no
table knows) and, for a word the grammar names in quotation marks, the name Lark gives that literal ("you" is
``YOU``, "," is ``COMMA``). Every module that compares a token's classes names them by these constants, never by a
string of its own: a test holds each constant to a class the English grammar declares, the pack's tables name or
the lexer makes, and no module of the gate or the text package to a class name written as a string
(``tests/test_layout.py``). A class no lexer gives would be a comparison silently never true.

A pack of another language gives the classes its grammar declares: the lexer's own and its tables' it gives
alike; the English grammar's literals (the last group) it gives only where its grammar names the same words.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALL", "ENGLISH_LITERALS", "LEXER_MADE", "PACK_TABLES"]

# -- made by the lexer -------------------------------------------------------------------------------------------

VB: Final = "VB"
"""A verb's base form (a form of the verb table that is its own lemma, or a word read as a verb)."""
VBG: Final = "VBG"
"""A gerund ("paying")."""
VBN: Final = "VBN"
"""A participle ("paid")."""
VBZ: Final = "VBZ"
"""A present form ("pays")."""
NN: Final = "NN"
"""A noun of the pack's tables, singular."""
NNS: Final = "NNS"
"""A noun of the pack's tables, plural."""
NAME: Final = "NAME"
"""A capitalised word no table knows: a name."""
VALUE: Final = "VALUE"
"""An address, an IBAN, a phone or account number, a path, a file name, an id, a handle, a hashtag."""
QUOTED: Final = "QUOTED"
"""A passage in quotation marks, one token."""
TEXT: Final = "TEXT"
"""Any token after a free-text marker ("saying …", "that …")."""
NUM: Final = "NUM"
"""A number as written."""
NUMW: Final = "NUMW"
"""A number word ("twenty")."""
CUR: Final = "CUR"
"""A currency of the table (a code, a sign, a word)."""
MAG: Final = "MAG"
"""A word that multiplies the number before it ("k", "million")."""
END: Final = "END"
"""A sentence's end ("." or "!")."""
OPEN: Final = "OPEN"
"""A word no table knows: it stands only in carried positions."""
OPENV: Final = "OPENV"
"""A word the tables know only as a verb form, standing where a noun would."""
POSS: Final = "POSS"
"""The possessive "'s" split off a word (where the grammar names no literal for it)."""

LEXER_MADE: Final = frozenset(
    {VB, VBG, VBN, VBZ, NN, NNS, NAME, VALUE, QUOTED, TEXT, NUM, NUMW, CUR, MAG, END, OPEN, OPENV, POSS}
)
"""The classes the lexer gives whatever the pack's tables hold."""

# -- the pack's tables ([classes] of english.toml) ---------------------------------------------------------------

ADJ: Final = "ADJ"
ADV: Final = "ADV"
ANSWER: Final = "ANSWER"
ASK: Final = "ASK"
DASH: Final = "DASH"
DEADLINE: Final = "DEADLINE"
DET: Final = "DET"
DOING: Final = "DOING"
EMOJI: Final = "EMOJI"
FILLER: Final = "FILLER"
GREET: Final = "GREET"
INTERJ: Final = "INTERJ"
KNOW: Final = "KNOW"
LINK: Final = "LINK"
MARKER: Final = "MARKER"
MODAL: Final = "MODAL"
MONTH: Final = "MONTH"
NOT: Final = "NOT"
NOW: Final = "NOW"
ORD: Final = "ORD"
PLEASE: Final = "PLEASE"
PREP: Final = "PREP"
PRIV: Final = "PRIV"
PRON: Final = "PRON"
PRT: Final = "PRT"
REPORTING: Final = "REPORTING"
SAY: Final = "SAY"
SAYING: Final = "SAYING"
SEQ: Final = "SEQ"
TIMEX: Final = "TIMEX"
UNIT: Final = "UNIT"
UNTIL: Final = "UNTIL"
WANT: Final = "WANT"

PACK_TABLES: Final = frozenset(
    {
        ADJ, ADV, ANSWER, ASK, DASH, DEADLINE, DET, DOING, EMOJI, FILLER, GREET, INTERJ, KNOW, LINK, MARKER, MODAL,
        MONTH, NOT, NOW, ORD, PLEASE, PREP, PRIV, PRON, PRT, REPORTING, SAY, SAYING, SEQ, TIMEX, UNIT, UNTIL, WANT,
    }
)  # fmt: skip
"""The classes code reads that the pack's ``[classes]`` table names (each pack's words for them)."""

# -- the English grammar's literals, by the names Lark gives them --------------------------------------------------

AHEAD: Final = "AHEAD"
AND: Final = "AND"
CHEERS: Final = "CHEERS"
COMMA: Final = "COMMA"
GO: Final = "GO"
I: Final = "I"  # noqa: E741 - the literal "i", named by Lark
LIKE: Final = "LIKE"
NEED: Final = "NEED"
PROCEED: Final = "PROCEED"
QMARK: Final = "QMARK"
THANK: Final = "THANK"
THANKS: Final = "THANKS"
TO: Final = "TO"
YOU: Final = "YOU"

ENGLISH_LITERALS: Final = frozenset(
    {AHEAD, AND, CHEERS, COMMA, GO, I, LIKE, NEED, PROCEED, QMARK, THANK, THANKS, TO, YOU}
)
"""Words ``english.lark`` names in quotation marks that code reads by their terminal's name (a request frame's
"you", "go ahead and", a thanks): another pack's grammar gives them only where it names the same words."""

ALL: Final = LEXER_MADE | PACK_TABLES | ENGLISH_LITERALS
"""Every class code reads."""
