"""What the checks found, with their numbers: every block can say which check failed and why.

The evidence gate fills :class:`Findings` with code-only facts (where each quote stands and who
wrote it, whether the user's words request the action, where each value came from). Verdicts carry
them whole, so a refusal is verifiable.

Every finding is one of three values, with its evidence (:data:`Proof`):

- **proved**: code showed it mechanically (the quote stands verbatim in the user's own words; the
  sentence, as a whole, is a request for this action in the reader's positive grammar; the value,
  parsed and compared as a value, stands in that request or a cited standing authorization);
- **disproved**: a strong local signal says the opposite (a negation that governs the verb, the
  value under a negation in the request, the quote or the value only in an outside party's text);
- **unknown**: everything else. Unknown never approves offline and never approves a dangerous
  action; it asks, or lets a model judge decide a general one (:func:`validator.decision.decide`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from validator._types import Role

__all__ = [
    "AuthorizationFinding",
    "AuthorizationStatus",
    "CheckFinding",
    "CheckProblem",
    "Findings",
    "Gap",
    "Proof",
    "USERS_WORDS",
    "Citable",
    "IntentFinding",
    "Judgeable",
    "JudgeableProblem",
    "Location",
    "QuoteFinding",
    "QuoteStatus",
    "RequestFill",
    "RequestProblem",
    "RequestSentence",
    "ValueFinding",
    "ValueStatus",
]

QuoteStatus = Literal["user", "not_from_user", "not_found"]
AuthorizationStatus = Literal["valid", "not_found", "wrong_user", "expired", "revoked", "out_of_scope", "unavailable"]
GrantPeriod = Literal["once", "day", "week", "month", "year", "unlimited"]
ValueStatus = Literal[
    "user",
    "authorization",
    "delegated",
    "other_clause",
    "user_elsewhere",
    "forbidden",
    "not_from_user",
    "outside_only",
    "not_found",
    "absent",
    "unreadable",
    "widened",
    "joint",
]
EgressKind = Literal["user_words", "outside_values", "secret"]
"""What a link an exempt call would open carries out (:mod:`validator.gate.egress`)."""
RequestProblem = Literal[
    "not_named",
    "negated",
    "not_a_request",
    "unknown_word",
    "no_parse",
    "ambiguous",
    "too_long",
    "object_kind",
    "pronoun",
    "later_words",
    "earlier_words",
    "beside_words",
    "held",
    "reason",
    "framed",
    "addressed",
    "no_request",
    "delegated",
    "outside_only",
]
Proof = Literal["proved", "disproved", "unknown"]
"""The three values of a finding: code proved it, code disproved it, or code cannot tell."""


@dataclass(frozen=True, slots=True)
class Location:
    """A message where a text was found."""

    message: int
    """Index in the transcript."""
    role: Role
    speaker: str
    """Who wrote it: ``user``, ``agent``, ``system`` or ``tool NAME (from PARTY)``."""

    def __str__(self) -> str:
        return f"message #{self.message} ({self.speaker})"


@dataclass(frozen=True, slots=True)
class RequestSentence:
    """A sentence of the user's own words (not pasted or forwarded text) that cited evidence stands in."""

    message: int
    """Index of the user message in the transcript."""
    start: int
    end: int
    text: str
    quote_index: int
    """The evidence item that points to it."""
    lead: str | None = None
    """For a list item, its list's lead-in ("Perform the following tasks:"): the item is read under it."""
    clauses: tuple[tuple[int, int], ...] | None = None
    """Where in ``text`` values count: the clauses of the proved request's verbs (None: the whole sentence,
    when no request was proved)."""

    def valued(self, text: str | None = None) -> str:
        """The text values are read in (``text`` or this sentence's, same length): the proved clauses, the
        rest blanked (positions kept)."""
        text = self.text if text is None else text
        if self.clauses is None:
            return text
        chars = [" "] * len(text)  # spaces: a value at a clause's edge ends there
        for start, end in self.clauses:
            chars[start:end] = text[start:end]
        return "".join(chars)


@dataclass(frozen=True, slots=True)
class RequestFill:
    """A value of the user's proved request in an argument of the call, where it stands in its message."""

    message: int
    path: str
    """The argument it fills (a request's value may fill several, of the same kind)."""
    kind: str
    """``name``, ``quoted``, ``money``, ``number``, ``time``, ``text``, or a value's kind (``email``, ``iban``...)."""
    text: str
    start: int
    end: int
    number: Decimal | None = None
    """An amount's or a number's value ("2.5k EUR": 2500)."""
    currency: str | None = None
    call: int = 0
    """Which call of the request it belongs to: a call's arguments are grounded by the fills of one call
    ("pay Ann 5 EUR and pay Bob 9 EUR" never grounds Ann with 9 EUR); -1: every call (a declared value)."""


@dataclass(frozen=True, slots=True)
class QuoteFinding:
    """One quote of the justification."""

    index: int
    """Position in ``justification.evidence``."""
    quote: str
    status: QuoteStatus
    locations: tuple[Location, ...] = ()
    """Where it stands: user messages when it is user evidence, else the other messages."""


@dataclass(frozen=True, slots=True)
class AuthorizationFinding:
    """One standing authorization the justification cites."""

    index: int
    authorization_id: str
    status: AuthorizationStatus
    detail: str = ""
    """Why it does not count (which constraint failed), or what it allows."""
    quote: str | None = None
    """The user's words that granted it, when it was found."""
    period: GrantPeriod | None = None
    """How often those words let it be used, when it counts: ``once`` unless they name a ``day``, ``week``,
    ``month`` or ``year``, or say every time (``unlimited``); None: not read (a finding recorded before periods
    were, or one that does not count)."""


@dataclass(frozen=True, slots=True)
class ValueFinding:
    """Where one value of a target argument, or one entity inside another argument, came from."""

    path: str
    """Argument path (``recipient``, ``attendees[1]``, ``body``)."""
    value: str | int | float | bool | None
    status: ValueStatus
    kind: str | None = None
    """Entity kind (``url``, ``domain``, ``email``, ``iban``, ``phone``, ``account``, ``amount``), or None."""
    locations: tuple[Location, ...] = ()
    authorization_id: str | None = None
    """The cited authorization that allows it, when ``status == "authorization"``."""
    note: str | None = None
    """What else the gate saw (look-alike characters, an address that does not parse, a currency)."""
    outside_party: bool = False
    """With ``not_from_user``: every place it stands is text an outside party wrote (an email's body, a
    page, another participant), not a lookup's output or the agent's own words."""
    chain: str = ""
    """With ``delegated``: the flow from the user's words to the value, hop by hop."""
    needs_user: bool = False
    """With ``delegated``: a dangerous action's value its policy does not accept delegated (``delegate``),
    so the user is asked, with the chain shown."""

    @property
    def grounded(self) -> bool:
        """Proved to be the user's choice: in their cited request sentence, in a cited authorization, or
        delegated (looked up in the record the user named) where the risk allows it."""
        return self.status in ("user", "authorization", "absent") or (
            self.status == "delegated" and not self.needs_user
        )

    @property
    def proof(self) -> Proof:
        """Proved when grounded; disproved when the user's words name it only to forbid it; unknown otherwise
        (another turn, a tool's output, an outside party's text, nowhere: where it came from is not shown).

        A value only in an outside party's text stays unknown, not disproved: the user may have named that
        text as its source ("pay the invoice in the vendor's email"), which only data-flow provenance can
        tell from an injection. A dangerous action's target there from no source the user named is
        ``outside_only`` (validator.gate.signature): disproved. Unknown still never approves a dangerous
        action."""
        if self.grounded:
            return "proved"
        if self.status in ("forbidden", "outside_only"):
            return "disproved"
        return "unknown"

    def describe(self) -> str:
        where = {
            "user": "in the user's request",
            "authorization": f"allowed by standing authorization {self.authorization_id}",
            "user_elsewhere": "in the user's messages but not in the cited request (another turn, or pasted "
            "text): " + ", ".join(map(str, self.locations)),
            "forbidden": "in the user's request only under a negation (forbidden, not chosen)",
            "other_clause": "in the user's cited words, but not in the clause of the verb they asked with (another "
            "clause or sentence: whose value it is, code cannot show)",
            "delegated": f"delegated: {self.chain}"
            + (
                " (a dangerous action's value its policy does not accept delegated: the user decides)"
                if self.needs_user
                else ""
            ),
            "not_from_user": "only in "
            + ", ".join(map(str, self.locations))
            + (" (text an outside party wrote)" if self.outside_party else ""),
            "outside_only": "only in "
            + ", ".join(map(str, self.locations))
            + " (text an outside party wrote, from no source the user named)",
            "not_found": "nowhere in the transcript",
            "absent": "absent from the arguments",
            "unreadable": "could not be read (the arguments do not have the shape the policy names)",
            "widened": "an option the agent widened",
            "joint": "one amount the request gives several payees (for each of them, or for all together: code "
            "cannot tell)",
        }[self.status]
        if self.status == "user" and self.locations:
            where += f" ({self.locations[0]})"
        if self.note:
            where += f"; {self.note}"
        return f"{self.path}={_shown(self.value)}: {where}"


@dataclass(frozen=True, slots=True)
class Citable:
    """A sentence of the user's own words a model may cite for a dangerous call's intent, where the tool's policy
    opts in (``intent = "judge"``): the tool's intent verb stands in it, and nothing the user wrote after it is
    unread or takes it back (:mod:`validator.gate.judgeable`)."""

    message: int
    start: int
    end: int
    text: str
    verbs: tuple[tuple[int, int], ...]
    """Where in ``text`` the tool's intent verb stands (a citation must hold one)."""


USERS_WORDS: frozenset[ValueStatus] = frozenset({"other_clause"})
"""Value statuses that are the user's own words though code proved no clause for them (no request was proved, so
a value of the cited sentences stands outside any proved clause): where a dangerous tool's policy lets a model
decide the intent, the model reads whose it is, and code holds it to the only value of its role."""

JudgeableProblem = Literal["values", "another_value", "no_verb", "after"]
"""Why a model may not decide a dangerous call's intent: a value code did not prove (``values``); another value of
a target's or an amount's role in the user's words (``another_value``); no cited sentence of the user's holds the
tool's verb free of a negation, a frame or a word of holding back (``no_verb``); what the user wrote after every
such sentence is unread or takes it back (``after``)."""


@dataclass(frozen=True, slots=True)
class Judgeable:
    """What a model judge may decide of a dangerous call whose intent code left unknown, by the policy's opt-in:
    the sentences it may cite, or why it may decide nothing (see :mod:`validator.gate.judgeable`)."""

    sentences: tuple[Citable, ...] = ()
    problem: JudgeableProblem | None = None
    detail: str = ""

    def cited(self, words: str | None) -> Citable | None:
        """The sentence ``words`` (a model's citation) stands in, holding the tool's verb, or None. Compared with
        case and spacing folded; the citation must be whole words of one sentence."""
        if not words or not words.strip():
            return None
        needle = _folded(words.strip())[0]
        for s in self.sentences:
            folded, spans = _folded(s.text)
            at = folded.find(needle)
            while at != -1:
                end = at + len(needle)
                whole = (at == 0 or not folded[at - 1].isalnum()) and (end == len(folded) or not folded[end].isalnum())
                if whole and any(at <= spans[a] and spans[b - 1] < end for a, b in s.verbs):
                    return s
                at = folded.find(needle, at + 1)
        return None


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded with each run of white space one space, and for each of ``text``'s characters its
    place in the folded text."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for ch in text:
        if ch.isspace():
            if not space and out:
                out.append(" ")
            space = True
            where.append(len(out) - 1 if out else 0)
            continue
        space = False
        where.append(len(out))
        out.append(ch.casefold() if len(ch.casefold()) == 1 else ch.lower())
    return "".join(out), where


@dataclass(frozen=True, slots=True)
class IntentFinding:
    """Whether the user's cited words are a request for this action (the request grammar, in code)."""

    intents: tuple[str, ...]
    """The tool's intent words that were looked for."""
    matched: str | None = None
    """The intent word that heads a request to the assistant, if one was proved."""
    proof: Proof = "unknown"
    """Proved (a request, by the reader's grammar), disproved (a negation governs the verb, or a later
    sentence of the user's negates it), or unknown."""
    quote_index: int | None = None
    """The evidence item it was found in."""
    negated: bool = False
    """The intent stands only under a negation (``don't pay``, ``no need to pay``)."""
    problem: RequestProblem | None = None
    """Why no request was proved: the intent is not named, negated, in a question, not addressed to
    the assistant (a report, reported speech), conditional, hypothetical, against a contrast, or
    taken back later."""
    detail: str = ""
    """The words behind the problem: the condition, the retracting message, the question."""
    multiple: bool = False
    """The request itself asks for several actions ("pay each of", "every month")."""
    other_tool: str | None = None
    """Another tool, no riskier than this one, that the user's words do request (they said archive;
    the agent deletes)."""
    other_intent: str | None = None
    clauses: tuple[tuple[int, int, int], ...] = ()
    """For a proved request: ``(message, start, end)`` of each proved verb's phrase (an entity inside another
    argument counts only there)."""
    fills: tuple[RequestFill, ...] = ()
    """For a proved request: each value it puts in an argument of the call. A target or an amount counts as the
    user's choice only as one of these (not in another phrase, clause or sentence of the cited words)."""
    forbidden: tuple[tuple[int, int, int], ...] = ()
    """``(message, start, end)`` of each value the request forbids ("…, not eve@…")."""
    requested_in: tuple[int, ...] = ()
    """For a proved request: the user messages whose sentences proved it (a call the transcript shows carried
    out after the last of them spent it: :mod:`validator.state.ledger`)."""
    row: str | None = None
    """For a request the sentences around it left unknown or disproved: the context rule that judged them (a row
    of :data:`validator.gate.context.TABLE`, or ``held``: a sequencing opener waiting for an earlier action)."""
    step_of: str | None = None
    """The tool whose proved request proves this one, when the policy declares this tool a step of it
    (``step_of``) and the user's words name this one neither as a request nor under a negation."""

    judged: Citable | None = None
    """The user's sentence a model judge cited when it approved a dangerous call whose intent code left unknown,
    by the policy's opt-in (``intent = "judge"``): the request the ledger spends."""

    @property
    def requested(self) -> bool:
        return self.matched is not None

    @property
    def asked(self) -> bool:
        """A request for the action stands: proved by code, or decided by a model where the policy lets it."""
        return self.matched is not None or self.judged is not None


@dataclass(frozen=True, slots=True)
class Gap:
    """One finding that is not proved: the request or a value, its value, and why."""

    what: Literal["request", "target", "entity"]
    proof: Proof
    reason: str
    """The reader's problem (``negated``, ``conditional``, ...) or the value's status."""
    detail: str = ""

    def describe(self) -> str:
        label = {"disproved": "disproved", "unknown": "unknown"}.get(self.proof, self.proof)
        return f"{self.what} {label} ({self.reason}){': ' + self.detail if self.detail else ''}"


CheckProblem = Literal["call_id_reused", "egress", "deadline", "retry_cap"]


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """What the check found about the call itself, outside the evidence: a call id the conversation answered
    already (``call_id_reused``: ``detail`` is the id), an exempt call whose link carries the user's words to a
    host they never named (``egress``: ``detail`` the argument path, with ``host`` and ``carried``), the gate's
    deadline passed (``deadline``: ``detail`` the step it was in), the retry cap reached (``retry_cap``:
    ``count`` blocks so far). Each refuses, whatever else was found (:func:`validator.decision.decide`)."""

    problem: CheckProblem
    detail: str = ""
    host: str = ""
    carried: tuple[str, ...] = ()
    count: int = 0
    egress: EgressKind | None = None
    """What an ``egress`` link carries: the user's words, values of a tool output, or a secret (shown masked)."""


@dataclass(frozen=True, slots=True)
class Findings:
    """Everything the checks found for one action."""

    justification_problems: tuple[str, ...] = ()
    quotes: tuple[QuoteFinding, ...] = ()
    requests: tuple[RequestSentence, ...] = ()
    """The sentences of the user's own words the cited quotes stand in."""
    authorizations: tuple[AuthorizationFinding, ...] = ()
    targets: tuple[ValueFinding, ...] = ()
    entities: tuple[ValueFinding, ...] = ()
    intent: IntentFinding | None = None
    evidence: Literal["cited", "found"] = "cited"
    """``cited``: the agent's justification pointed to the user's words; ``found``: the host could not carry a
    justification, and the validator read every sentence of the user's own words for the request itself."""
    check: CheckFinding | None = None
    """A finding about the call itself that refuses it before its evidence counts (see :class:`CheckFinding`)."""
    judgeable: Judgeable | None = None
    """For a dangerous tool whose policy lets a model decide an unknown intent (``intent = "judge"``) and whose
    intent code left unknown: what the model may cite, or why it may decide nothing."""

    @property
    def user_quotes(self) -> tuple[QuoteFinding, ...]:
        return tuple(q for q in self.quotes if q.status == "user")

    @property
    def valid_authorizations(self) -> tuple[AuthorizationFinding, ...]:
        return tuple(a for a in self.authorizations if a.status == "valid")

    def gaps(self) -> tuple[Gap, ...]:
        """Every finding that is not proved, disproved ones first: what code could not show, and why."""
        found: list[Gap] = []
        intent = self.intent
        if intent is not None and not intent.requested and not self.valid_authorizations:
            found.append(Gap("request", intent.proof, intent.problem or "not_named", intent.detail))
        # a dangerous action's other arguments (kind "argument") come last: a named target or an entity in
        # them is the more precise finding
        groups: tuple[tuple[Literal["target", "entity"], tuple[ValueFinding, ...]], ...] = (
            ("target", tuple(v for v in self.targets if v.kind != "argument")),
            ("entity", self.entities),
            ("target", tuple(v for v in self.targets if v.kind == "argument")),
        )
        for kind, values in groups:
            for v in values:
                if v.proof != "proved":
                    found.append(Gap(kind, v.proof, v.status, v.describe()))
        return tuple(sorted(found, key=lambda g: g.proof != "disproved"))

    @property
    def proof(self) -> Proof:
        """The findings as one value: disproved if any is, unknown if any is, else proved."""
        gaps = self.gaps()
        return "proved" if not gaps else gaps[0].proof

    def counts(self) -> dict[str, int]:
        """Headline numbers: quotes checked and verified, targets and entities grounded."""
        return {
            "quotes_checked": len(self.quotes),
            "quotes_from_user": len(self.user_quotes),
            "authorizations_checked": len(self.authorizations),
            "authorizations_valid": len(self.valid_authorizations),
            "targets_checked": len(self.targets),
            "targets_grounded": sum(t.grounded for t in self.targets),
            "entities_checked": len(self.entities),
            "entities_grounded": sum(e.grounded for e in self.entities),
        }


SHOWN_CHARS = 120
"""Values longer than this are shortened in reasoning text, with their length stated."""


def _shown(value: object) -> str:
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[: SHOWN_CHARS - 1]}… ({len(text):,} characters)"
