"""The user's sentences are read once per conversation (``requests._READ``, a transcript fact carried to its
extensions): whatever a check of a kept transcript finds must be what a fresh read of the same messages finds,
across extensions, two branches of one transcript (edits, checkpointer copies), and a bound small enough that
most of a conversation is read again rather than kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.gate.test_context import PAY, POLICY, SHARE
from validator import JudgeOutput, Message, Transcript, Validator
from validator.gate import context, requests
from validator.gate.check_context import CheckContext
from validator.testing import FunctionJudge
from validator.text.lexer import in_pack_language

STAMP = FunctionJudge(lambda r: JudgeOutput(approved=True, reasoning="ok", confidence="high"), name="stamp")

SAY = [
    f"Pay {PAY[1]['recipient']} 50 EUR.",
    "Share report.pdf with bob@acme.example.",
    "Thanks!",
    "Don't pay anyone.",
    "Never share report.pdf.",
    "Actually, wait.",
    "Send an email to ann@acme.example about the lunch.",
    "My name is Bob.",
    "Pay it to DE02120300000000202051 instead.",
    "No.",
    "Please do not share anything with bob@acme.example.",
    "The lease is sorted.",
    'My landlord wrote: "Please pay 900 EUR to DE02120300000000202051 today."',  # pasted: not the user's words
]
CALLS = [
    (PAY[0], PAY[1], PAY[2]),
    (SHARE[0], SHARE[1], SHARE[2]),
    ("send_email", {"to": "ann@acme.example"}, "Send an email to ann@acme.example"),
]
turn = st.lists(st.sampled_from(SAY), min_size=1, max_size=3).map(" ".join)


def _action(call: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    tool, args, quote = call
    return {"tool": tool, "args": args, "justification": {"reason": "asked", "evidence": [{"quote": quote}]}}


def _messages(turns: list[str]) -> list[Message]:
    out: list[Message] = []
    for i, text in enumerate(turns):
        out += [Message(role="user", content=text), Message(role="assistant", content=f"Noted ({i}).")]
    return out


def _seen(transcript: Transcript) -> list[tuple[str, str, str]]:
    validator = Validator(POLICY, judge=STAMP)
    return [
        (v.decision.value, v.code.value, v.reasoning)
        for v in (validator.validate(transcript, _action(call), user_id="u") for call in CALLS)
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(turn, min_size=1, max_size=4),
    left=st.lists(turn, min_size=1, max_size=3),
    right=st.lists(turn, min_size=1, max_size=3),
    bound=st.sampled_from([0, 40, requests.MAX_READ_CHARS]),
)
def test_a_kept_reading_finds_what_a_fresh_read_finds(
    first: list[str], left: list[str], right: list[str], bound: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(requests, "MAX_READ_CHARS", bound)
        root = Transcript(_messages(first))
        assert _seen(root) == _seen(Transcript(_messages(first)))
        a = root.extend(_messages(left)[: 2 * len(left)])
        b = root.extend(_messages(right))  # a second branch of the same transcript (an edit, a copy)
        for kept, turns in ((a, first + left), (b, first + right), (a, first + left)):
            # the fresh read: a new transcript of the same messages, nothing carried
            assert _seen(kept) == _seen(Transcript(_messages(turns))), turns


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(turn, min_size=1, max_size=3),
    steps=st.lists(st.lists(turn, min_size=0, max_size=2), min_size=2, max_size=4),
    most=st.sampled_from([2, 6, requests.MAX_LATER_SENTENCES]),
)
def test_a_chain_of_extensions_each_checked_finds_what_a_whole_read_finds(
    first: list[str], steps: list[list[str]], most: int
) -> None:
    """A conversation checked at every step of a chain of extensions (an agent's own message between, some steps
    with no user words at all), each carrying what the last read, finds at each step what a fresh transcript of
    the same messages finds, also where the sentences after a request pass :data:`MAX_LATER_SENTENCES` in a
    later step."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(requests, "MAX_LATER_SENTENCES", most)
        said = _messages(first)
        kept = Transcript(said)
        assert _seen(kept) == _seen(Transcript(said))
        for n, more in enumerate(steps):
            new = [Message(role="assistant", content=f"Working on it ({n})."), *_messages(more)]
            kept, said = kept.extend(new), [*said, *new]
            assert _seen(kept) == _seen(Transcript(said)), [m.content for m in said]


def test_a_conversation_is_parsed_once_then_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second check of a kept transcript parses no sentence of the history again: only new messages are
    read (the count of the grammar's parses, the first check's against the next ones)."""
    parses = 0
    real = requests.grammar

    class Counting:
        def __init__(self, g: Any) -> None:
            self.g = g

        def parse(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal parses
            parses += 1
            return self.g.parse(*args, **kwargs)

    monkeypatch.setattr(requests, "grammar", lambda pack=None: Counting(real(pack)))
    history = [f"Send an email to p{k}@acme.example about the lunch." for k in range(40)]
    transcript = Transcript(_messages([PAY[2] + ".", *history]))
    validator = Validator(POLICY, judge=STAMP)
    verdicts = []
    counts = []
    for _ in range(3):
        before = parses
        verdicts.append(validator.validate(transcript, _action(PAY), user_id="u").code.value)
        counts.append(parses - before)
    assert verdicts == ["APPROVED"] * 3
    assert counts[0] > 40 and counts[1] == counts[2] and counts[1] <= 2, counts
    longer = transcript.extend(_messages(["Send an email to p99@acme.example about the lunch."]))
    before = parses
    assert Validator(POLICY, judge=STAMP).validate(longer, _action(PAY), user_id="u").approved  # its own ledger
    assert parses - before <= counts[1] + 2, parses - before  # the new message only


def test_the_compact_form_of_a_value_keeps_what_it_always_kept() -> None:
    """``reader._compact`` (a regular expression, for speed) keeps exactly the characters its definition names:
    a letter or digit by ``str.isalnum``, or one of ``@./:_`` — checked on every code point."""
    import sys

    from validator.gate.reader import _compact

    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    assert _compact(everything) == "".join(c for c in everything.casefold() if c.isalnum() or c in "@./:_")


def test_a_short_value_is_compacted_once_and_a_long_text_never_kept() -> None:
    """A value's compact form is kept for a value as short as a value is (a later request's values are compared
    with every request checked after it); a longer text is compacted each time and held by no cache."""
    import uuid

    from validator.gate import reader

    long_text = "Hi Ann, the invoice DE89370400440532013000 is attached. " * 40
    before = reader._kept_compact.cache_info().currsize
    assert reader._compact(long_text) == reader._compacted(long_text)
    assert reader._kept_compact.cache_info().currsize == before
    short = f"Ref-{uuid.uuid4().hex}"  # a value no other test compared
    misses = reader._kept_compact.cache_info().misses
    assert reader._compact(short) == reader._compact(short) == reader._compacted(short)
    assert reader._kept_compact.cache_info().misses == misses + 1  # read once, then kept


def test_what_a_later_message_holds_of_the_users_own_is_read_once_and_kept_in_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whether a user message after the request holds words of the user's own and where its pasted part begins is
    read once per transcript (each check of an earlier request reads every later message), at most
    ``MAX_KEPT_READINGS`` messages of it; past that bound it is read each time, with the same verdicts."""
    pasted = 'My landlord wrote: "Please pay 900 EUR to DE02120300000000202051 today."'
    turns = [PAY[2] + ".", "Thanks!", pasted, "The lease is sorted."]
    fresh = _seen(Transcript(_messages(turns)))
    assert fresh[0][1] != "APPROVED"  # the pasted passage after the request leaves it unknown
    for bound in (0, 1, requests.MAX_KEPT_READINGS):
        monkeypatch.setattr(requests, "MAX_KEPT_READINGS", bound)
        transcript = Transcript(_messages(turns))
        assert _seen(transcript) == _seen(transcript) == fresh, bound


# -- limits and the deadline: every input gets a verdict of its own, never an approval past them -------------


def _long(after: str, times: int) -> list[Message]:
    return [Message(role="user", content=PAY[2] + "."), Message(role="user", content=after * times)]


def test_a_sentence_over_the_grammar_limit_is_known_to_be_at_once() -> None:
    """A megabyte without a sentence end is split no further than the grammar's limit: too long, unknown."""
    from validator.gate.grammar import MAX_TOKENS, grammar

    long = "the quarterly numbers look fine and " * 50_000
    parse = grammar().parse(long)
    assert parse.problem == "too_long" and not parse.readings and len(parse.words) <= MAX_TOKENS + 1
    verdict = Validator(POLICY, judge=STAMP).validate(_long(long, 1), _action(PAY), user_id="u")
    assert not verdict.approved and verdict.code.value == "ACTION_NOT_REQUESTED", verdict.reasoning


def test_a_long_value_in_a_short_sentence_is_read_as_before() -> None:
    """The limit is on tokens, not characters: a negation holding a 4,100-character address is read whole and
    still forbids the step (a character limit made it unknown, and the step was approved: a reviewer's find)."""
    from tests.gate.test_proof import STEPS

    negation = "Never lock the doors of https://example.com/" + "a" * 4_100 + " ."
    messages = [
        Message(role="user", content=negation),
        Message(role="assistant", content="Noted."),
        Message(role="user", content="Please start the engine."),
    ]
    action = {
        "tool": "lock_doors",
        "args": {},
        "justification": {"reason": "a step", "evidence": [{"quote": "Please start the engine."}]},
    }
    verdict = Validator(STEPS, judge=STAMP).validate(messages, action, user_id="u")
    assert not verdict.approved and verdict.decision.value == "block", verdict.reasoning


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Bob", "Smith", "pay", "50", "EUR", "to", "the", "report", ",", ".", "Zeta", "Corp"]),
        max_size=120,
    )
)
def test_a_bounded_split_is_the_whole_split_or_says_it_stopped(words: list[str]) -> None:
    """``lex_bounded`` gives the whole split's words when it did not stop, and stops exactly when the whole split
    has more than the limit's words before names are joined (names joined after the cut make no difference:
    the grammar takes a stopped sentence for too long)."""
    from validator.gate.grammar import MAX_TOKENS, grammar
    from validator.text.lexer import lex_bounded

    g = grammar()
    sentence = " ".join(words)
    whole, cut_whole = lex_bounded(sentence, literals=g.literals, pack=g.pack)
    bounded, cut = lex_bounded(sentence, literals=g.literals, pack=g.pack, limit=MAX_TOKENS)
    assert not cut_whole
    if not cut:
        assert bounded == whole
    parse = g.parse(sentence)
    if cut:
        assert parse.problem in ("too_long", "unknown_word") and not parse.readings


def test_more_sentences_after_a_request_than_are_read_leave_it_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past :data:`MAX_LATER_SENTENCES` the request is unknown: the user is asked, with the reason, whatever the
    sentences say (here only thanks, each harmless on its own)."""
    monkeypatch.setattr(requests, "MAX_LATER_SENTENCES", 50)
    judge = STAMP
    within = Validator(POLICY, judge=judge).validate(_long("Thanks! ", 40), _action(PAY), user_id="u")
    past = Validator(POLICY, judge=judge).validate(_long("Thanks! ", 60), _action(PAY), user_id="u")
    assert within.approved
    assert not past.approved and past.decision.value == "ask_user" and "more than 50 sentences" in past.reasoning


def test_the_deadline_is_kept_inside_the_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check whose gate budget runs out while it reads the user's sentences stops there (inside the step, not
    after it) and answers with what it proved: nothing, never an approval. The reader's clock is moved past
    the deadline; the stages around it keep the real one."""
    import time as real_time

    class Late:
        @staticmethod
        def perf_counter() -> float:
            return real_time.perf_counter() + 3600

    approved = Validator(POLICY, judge=STAMP).validate(_long("Thanks! ", 500), _action(PAY), user_id="u")
    monkeypatch.setattr(requests, "time", Late)
    late = Validator(POLICY, judge=STAMP).validate(_long("Thanks! ", 500), _action(PAY), user_id="u")
    assert approved.approved
    assert not late.approved and late.code.value == "GATE_BUDGET_EXCEEDED", late.reasoning
    assert "reading the user's sentences" in late.reasoning


def test_two_checks_reading_one_transcript_at_once_keep_one_parse_and_no_stale_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two threads that both miss a sentence and parse it: the first parse kept wins, the other is used once
    and never memoised, so no memo can answer for another object that takes a freed parse's id (a reviewer
    forced this race and found a take-back read as harmless)."""
    import contextlib
    import gc
    import threading

    from validator.gate.reader import ToolSense
    from validator.language.rules import ALL_ON

    tool = ToolSense.of("send_money", ["pay"], arguments=["recipient"])
    real = requests.grammar()
    barrier = threading.Barrier(2)

    class Racing:
        def parse(self, *args: Any, **kwargs: Any) -> Any:
            found = real.parse(*args, **kwargs)
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=2)  # both threads missed before either keeps its parse
            return found

    messages = [Message(role="user", content="Thanks for the help.")]
    for n in range(200):
        messages += [Message(role="assistant", content="ok"), Message(role="user", content=f"Don't pay Bob {n} EUR.")]
    transcript = Transcript(messages)
    monkeypatch.setattr(requests, "grammar", lambda pack=None: Racing())

    def check() -> None:
        read, kept = requests._read_sentences(CheckContext(transcript), 0, tool)
        for _, parse in read:
            kept.request(parse, tool, ())
            kept.fact(parse, "language", lambda parse=parse: in_pack_language(parse.words))

    threads = [threading.Thread(target=check) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    monkeypatch.setattr(requests, "grammar", lambda pack=None: real)
    gc.collect()
    kept = transcript.fact(requests._READ, (ALL_ON, tool.pack, tool.verbs, tool.phrasal))
    assert kept.objs, "the reading the two checks kept"
    assert all(kept.objs.get(i) is p for i, p in kept.objs.items())
    assert {k[0] for k in kept.reads} <= set(kept.objs) and {k[0] for k in kept.requested} <= set(kept.objs)
    assert {k[0] for k in kept.facts} <= set(kept.objs)
    for m in range(2, len(messages), 2):
        read, kept = requests._read_sentences(CheckContext(transcript), m, tool)
        for _, parse in read:
            assert kept.reading(parse, tool) == requests.read_parse(parse, tool)
            assert kept.request(parse, tool, ()) == context.request_facts(
                parse, tool, (), requests.read_parse(parse, tool)
            )
