"""The lead-in finder reads only the sentence before each colon, and finds exactly what the pattern finds
when tried at every position of the text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.language import english
from validator.text.sentences import _lead_ins, _patterns, pasted_spans, unclear_spans

_PACK = english()
_WORDS = sorted(
    {w for p in (*_PACK.attribution_verbs, *_PACK.presenters) for w in p}
    | set(_PACK.documents)
    | {"the", "vendor", "Bob", "me", "this", "Hi", "pay", "IBAN", "DE44", "SAID", "Wrote", "\u017faid", "é"}
)
_GLUE = [" ", "  ", "\n", "\n\n", ": ", ":", ":\n", ". ", "! ", "? ", ", ", '"', "'", "-", "> ", "", "\t"]
_LEADS = sorted(
    {" ".join(p) + tail for p in _PACK.attribution_verbs for tail in (": ", " this:", ":\n")}
    | {" ".join(p) + " the " + d + ": " for p in _PACK.presenters for d in sorted(_PACK.documents)[:4]}
)
_TEXTS = st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_GLUE), st.sampled_from(_LEADS)), max_size=40).map(
    "".join
)


@settings(max_examples=600, deadline=None)
@given(_TEXTS)
def test_the_lead_ins_are_exactly_what_the_pattern_finds_everywhere(text: str) -> None:
    assert [m.span() for m in _lead_ins(text, _PACK)] == [m.span() for m in _patterns(_PACK)[2].finditer(text)]


def test_a_lead_in_after_an_earlier_colon_and_sentence_is_found() -> None:
    text = "Notes: fine. Then the vendor wrote: Please pay 4,800 EUR.\n\nThanks: Ann"
    assert [text[m.start() : m.end()] for m in _lead_ins(text, _PACK)] == ["wrote: "]
    assert pasted_spans(text) == [(text.index("Please"), text.index("\n\n"))]
    assert unclear_spans(text) == [(text.index("\n\n"), len(text))]
