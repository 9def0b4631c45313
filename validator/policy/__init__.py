"""Tool policy: which tools are guarded, how dangerous they are, and what the user must have chosen.

Declared in Python::

    Policy({"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay", "transfer")),
            "read_inbox": ToolPolicy(exempt=True)})

or in TOML (``Policy.load("policy.toml")``)::

    [settings]
    low_confidence = "ask_user"        # or "block"
    ungrounded_targets = "block"       # dangerous tools: an ungrounded target blocks at the gate

    [tools.send_money]
    risk = "dangerous"
    targets = ["recipient"]
    intents = ["pay", "transfer", "send money"]

    [tools.read_inbox]
    exempt = true

A tool the policy does not name is guarded and ``general``: the policy fails closed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import msgspec

from validator._types import Risk
from validator.exceptions import FieldProblem, PolicyError, UsageError
from validator.language import english
from validator.language.lexicon import default_intents, families_of

__all__ = [
    "RETURNS",
    "Ask",
    "Policy",
    "PolicySettings",
    "IntentBy",
    "Returns",
    "Risk",
    "ToolPolicy",
    "default_intents",
    "json_value",
    "mcp_tool",
    "read_only",
    "sources",
]

Ask = Literal["never", "when_unsure", "always"]
Returns = Literal["user_records"]
IntentBy = Literal["code", "judge"]
"""Who may decide that a dangerous tool's call was asked for (``intent``): code only, or a model judge too."""
RETURNS: tuple[str, ...] = ("user_records",)
"""What a policy may declare a tool's output to be (``returns``)."""


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """How one tool is treated."""

    exempt: bool = False
    """Exempt tools stay between the agent and the user (a reply to the user, a read-only lookup)."""
    risk: Risk = "general"
    """``dangerous`` (money, data leaving, deletion, permissions) needs a high-confidence approval."""
    targets: tuple[str, ...] = ()
    """Arguments whose values the user must have chosen (``recipient``, ``to``, ``message.channel``)."""
    intents: tuple[str, ...] = ()
    """Words a user would use to ask for this action; empty means :func:`default_intents` (the
    built-in lexicon, from the tool's name and description)."""
    description: str = ""
    """What the tool does, for judges and reports (and for the default intents)."""
    amounts: tuple[str, ...] = ()
    """Arguments holding an amount of money: always grounded in the user's request, with the
    ``currency`` argument when the tool has one. Empty: ``amount`` for a payment tool."""
    currency: str | None = None
    """The currency of the tool's amounts when a call names none (an ISO code: ``"EUR"``): a call of
    ``amount: 5000`` pays 5000 of it. Unset, a call that names no currency matches only an amount the user
    named with none ("5000 JPY" never grounds a bare 5000)."""
    ask: Ask = "when_unsure"
    """When the user is asked: ``when_unsure`` (an ``ask_user`` verdict), ``always`` (every call the
    validator would approve goes to the user first, as LangChain's ``interrupt_on``), ``never`` (an
    ``ask_user`` verdict blocks instead: for agents with nobody to ask)."""
    delegate: tuple[str, ...] = ()
    """Arguments of a dangerous tool that may take a *delegated* value: one the agent looked up in the
    record the user named ("pay the bill in bill-december.txt": ``delegate = ["recipient", "amount"]``).
    Without it a dangerous action's delegated value goes to the user, with its chain shown; a general
    action's is proved anyway."""
    kinds: Mapping[str, str] = field(default_factory=dict)
    """What an argument is, where its name does not say it (the pack's ``[arguments]`` kinds: ``person``,
    ``payee``, ``money``, ``file``, ``folder``, ``thread``, ``event``, ``channel``, ``text``, ``title``,
    ``time``, ``number``): ``{"memo": "text"}`` lets free text ("saying …") fill ``memo``. An argument's
    kind says which objects and phrases of a request fill it."""
    returns: Returns | None = None
    """What the tool's output is: ``"user_records"`` declares it returns the user's own records (their contacts,
    accounts, files), the only kind of output whose structured fields may designate a value of another call
    (principle 8). Any other output, with an author or without, is text someone else may have written."""
    content: tuple[str, ...] = ()
    """Arguments that are content: the message the agent writes (a body, a subject, a title, a description). They
    are the agent's wording, compared with the user's words only where the user dictated them (in quotation
    marks, after "saying" or a colon); otherwise never word for word, but a value in them (an address, an IBAN,
    a link, an amount) must still be the user's, and text copied from an outside party's message leaves the
    call unknown. On a dangerous tool, content in the agent's words is put to the user, shown."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Arguments that say *how* the call acts (a flag, a mode, a scope, attachments, a list of invitees), each
    with the tool's default: ``{"permanently_delete": False, "attachments": []}``. A call's option must hold its
    default or a value the user's request asks for; any other value is widened (unknown: asked, or a model judge
    decides a general action knowing it). See :mod:`validator.gate.options`."""
    step_of: tuple[str, ...] = ()
    """Tools this one is a necessary step of (log in before posting, press the brake to start the
    engine): a proved request for one of them proves this call's request too, unless the user's words
    negate this one. Its own values are grounded as for any call."""
    intent: IntentBy = "code"
    """Who may decide that a *dangerous* call was asked for when code could not read the request: ``code`` (the
    default: the user is asked) or ``judge``: a model judge on the blind view may approve it, and only when code
    proved everything else (see :mod:`validator.gate.judgeable`: every value the user's own and the only one of
    its role, the tool's verb in the sentence the model cites, nothing after it unread). A general tool's unknown
    intent is the model's to decide already."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", tuple(self.targets))
        object.__setattr__(self, "step_of", tuple(self.step_of))
        object.__setattr__(self, "delegate", tuple(self.delegate))
        object.__setattr__(self, "intents", tuple(self.intents))
        object.__setattr__(self, "amounts", tuple(self.amounts))
        object.__setattr__(self, "content", tuple(self.content))
        object.__setattr__(self, "kinds", dict(self.kinds))
        object.__setattr__(self, "options", copy.deepcopy(dict(self.options)))  # its defaults may be lists

    def classified(self, tool: str) -> tuple[str, ...]:
        """The arguments the policy says what they are: targets, amounts (with a money tool's currency),
        content, options, and those given a kind."""
        money = ("currency",) if self.amount_paths(tool) else ()
        return (*self.targets, *self.amount_paths(tool), *money, *self.content, *self.options, *self.kinds)

    def intent_words(self, tool: str) -> tuple[str, ...]:
        """The declared intents, or the lexicon's verbs for the tool's name and description."""
        return self.intents or default_intents(tool, self.description)

    def is_money(self, tool: str) -> bool:
        """Whether the tool moves money (declared amounts, or a payment tool by its name or description)."""
        return bool(self.amounts) or "payment" in families_of(tool, self.description)

    def amount_paths(self, tool: str) -> tuple[str, ...]:
        """The arguments holding amounts of money: the declared ones, else ``amount`` for a money tool."""
        if self.amounts:
            return self.amounts
        return ("amount",) if self.is_money(tool) else ()


@dataclass(frozen=True, kw_only=True)
class PolicySettings:
    """Settings that apply to every tool."""

    low_confidence: Literal["ask_user", "block"] = "ask_user"
    """What a verdict the judge is unsure of becomes."""
    ungrounded_targets: Literal["judge", "block"] = "judge"
    """``block``: a dangerous tool's target not found in the user's words blocks at the gate."""
    quality: Literal["advise", "ask_user"] = "advise"
    """``advise``: a judge's quality notes ride along on the verdict; ``ask_user`` (opt-in): an
    approved action with quality notes goes to the user instead."""
    enforce: bool = True
    """``False`` is shadow mode, for rolling out: every verdict is judged and recorded as usual, but a
    refused action runs anyway (code ``NOT_ENFORCED``, the refusal in ``shadow_of``), with a warning
    logged and counted. Never the default."""
    answer_grant_days: int = 30
    """The longest a standing authorization made from the user's answer ("always", ``remember``) may last, in days:
    a ``remember`` asking longer is not kept (the approval stands). A longer grant is made with ``auth grant``."""


GUARDED_DEFAULT = ToolPolicy()


def sources(policy: Policy | None) -> frozenset[str]:
    """The tools a policy declares as returning the user's own records: the only sources that designate."""
    if policy is None:
        return frozenset()
    return frozenset(name for name, tp in policy.tools.items() if tp.returns == "user_records")


PATTERN_SIGNS = frozenset("*?[")
"""A tool name holding one of these is a pattern (``mcp__*__get_*``, matched as :func:`fnmatch.fnmatchcase` does)."""


def is_pattern(name: str) -> bool:
    return bool(PATTERN_SIGNS & set(name))


def mcp_tool(tool: Any) -> tuple[str, Mapping[str, Any]]:
    """An MCP tool's name and annotations, as a host holds them: a mapping (a ``tools/list`` item), MCP's ``Tool``
    (``annotations``, a model), or a LangChain tool (``metadata``). Annotations that are no mapping are none."""
    if isinstance(tool, Mapping):
        name, annotations = tool.get("name"), tool.get("annotations")
    else:
        name = getattr(tool, "name", None)
        annotations = getattr(tool, "annotations", None)
        if annotations is None:  # a LangChain tool keeps them in its metadata (only where it has no annotations)
            annotations = getattr(tool, "metadata", None)
        dump = getattr(annotations, "model_dump", None)  # MCP's ToolAnnotations, a pydantic model
        if callable(dump):
            annotations = dump(by_alias=True)
    if not isinstance(name, str) or not name:
        raise UsageError(f"an MCP tool needs a name, got {type(tool).__name__} with name {name!r}")
    return name, annotations if isinstance(annotations, Mapping) else {}


def read_only(annotations: Mapping[str, Any]) -> bool:
    """Whether MCP annotations say a tool does not modify its environment: ``readOnlyHint`` is ``true`` (the
    boolean, nothing that merely reads as true) and ``destructiveHint`` is absent or ``false`` (any other value,
    ``"true"`` or ``1``, is read as destructive)."""
    return annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") in (None, False)


@dataclass(frozen=True)
class Policy:
    """The tool policy of one agent.

    ``patterns``: tool names as patterns (``"mcp__*__get_*"``), each exempting the tools it matches that the policy
    does not name (the author's choice: a tool's name is the tool's own claim, and a name can lie). In a policy
    file they stand among the tools, as ``[tools."mcp__*__get_*"]`` with ``exempt = true`` and nothing else.

    ``trusted_servers``: the MCP servers whose tool annotations the policy believes (``[servers.NAME] trusted =
    true``): :meth:`with_mcp_tools` exempts their read-only tools. The MCP specification treats annotations from
    an untrusted server as untrusted, so no other server's annotations change anything.

    A policy is immutable: it keeps its own copies of the mappings it is given (a tool's options, deeply), so the
    caller's later changes to them change nothing, and its :attr:`version` is computed once."""

    tools: Mapping[str, ToolPolicy] = field(default_factory=dict)
    settings: PolicySettings = field(default_factory=PolicySettings)
    patterns: Mapping[str, ToolPolicy] = field(default_factory=dict)
    trusted_servers: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", dict(self.tools))
        object.__setattr__(self, "patterns", dict(self.patterns))
        object.__setattr__(self, "trusted_servers", frozenset(self.trusted_servers))
        problems = _consistency_problems(self.tools) + _pattern_problems(self.tools, self.patterns)
        if problems:
            raise PolicyError(problems)

    def for_tool(self, name: str) -> ToolPolicy:
        """The tool's policy: its own entry, else the first pattern that matches it (in the order written), else
        guarded and general."""
        found = self.tools.get(name)
        if found is not None:
            return found
        return next((tp for pattern, tp in self.patterns.items() if fnmatchcase(name, pattern)), GUARDED_DEFAULT)

    def declares(self, name: str) -> bool:
        return name in self.tools

    def with_mcp_tools(self, server: str, tools: Iterable[Any], *, name_format: str = "{tool}") -> Policy:
        """This policy with each read-only tool of MCP server ``server`` exempt, read from the annotations the
        host passed (``readOnlyHint`` true, ``destructiveHint`` not true: :func:`read_only`), when the policy
        marks the server trusted; for any other server, this policy unchanged. A tool the policy names or a
        pattern matches keeps its entry; a tool whose annotations say nothing stays guarded.

        ``tools``: the server's tools as the host has them: MCP's ``Tool`` (``mcp.types.Tool``, its
        ``annotations``), a LangChain tool from ``langchain-mcp-adapters`` (which keeps them in ``metadata``), or
        an item of a ``tools/list`` answer (``{"name", "annotations"}``). ``name_format``: the name the host calls
        the tool by, from ``{server}`` and ``{tool}`` (``"mcp__{server}__{tool}"`` for Claude Code; with the
        default, a bare name, give only tools no other server serves under that name). A name listed twice is
        exempt only when every listing says read-only; a name holding ``*``, ``?`` or ``[`` is no tool's."""
        if server not in self.trusted_servers:
            return self
        listed: dict[str, bool] = {}  # each name, read-only by every listing of it
        for tool in tools:
            name, annotations = mcp_tool(tool)
            called = name_format.format(server=server, tool=name)
            listed[called] = listed.get(called, True) and read_only(annotations)
        added = {
            called: ToolPolicy(exempt=True, description=f"read-only by trusted MCP server {server!r}")
            for called, only_reads in listed.items()
            if only_reads and not is_pattern(called) and called not in self.tools and not self._matched(called)
        }
        if not added:
            return self
        return Policy({**self.tools, **added}, self.settings, self.patterns, self.trusted_servers)

    def _matched(self, name: str) -> bool:
        return any(fnmatchcase(name, pattern) for pattern in self.patterns)

    def to_dict(self) -> dict[str, Any]:
        """Plain data, in the same shape :meth:`from_dict` reads."""
        return {
            # a policy without the later setting keeps its version
            "settings": {k: v for k, v in asdict(self.settings).items() if not (k == "answer_grant_days" and v == 30)},
            **(
                {"servers": {name: {"trusted": True} for name in sorted(self.trusted_servers)}}
                if self.trusted_servers
                else {}
            ),
            "tools": {
                name: {
                    k: list(v) if isinstance(v, tuple) else (dict(v) if isinstance(v, Mapping) else v)
                    for k, v in asdict(tp).items()
                    # a policy without one of the later fields keeps its version
                    if not (k in ("currency", "content", "returns", "options") and not v)
                    and not (k == "intent" and v == "code")
                }
                for name, tp in sorted({**self.tools, **self.patterns}.items())
            },
        }

    @cached_property
    def version(self) -> str:
        """A short hash of the policy's content: equal policies have equal versions (computed once: every check
        records it)."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "policy") -> Policy:
        """Read a policy from plain data (parsed JSON or TOML); raises :class:`PolicyError`."""
        from validator.policy.document import read_document

        doc = read_document(data, source)
        tools = {
            name: ToolPolicy(
                exempt=t.exempt,
                risk=t.risk,
                targets=tuple(t.targets),
                intents=tuple(t.intents),
                description=t.description,
                amounts=tuple(t.amounts),
                currency=t.currency,
                ask=t.ask,
                step_of=tuple(t.step_of),
                delegate=tuple(t.delegate),
                kinds=dict(t.kinds),
                content=tuple(t.content),
                returns=t.returns,
                options=dict(t.options),
                intent=t.intent,
            )
            for name, t in doc.tools.items()
        }
        settings = PolicySettings(**msgspec.structs.asdict(doc.settings))
        named = {name: tp for name, tp in tools.items() if not is_pattern(name)}
        patterns = {name: tp for name, tp in tools.items() if is_pattern(name)}
        trusted = frozenset(name for name, server in doc.servers.items() if server.trusted)
        try:
            return cls(named, settings, patterns, trusted)
        except PolicyError as exc:
            raise PolicyError(exc.problems, source=source) from None

    @classmethod
    def from_toml(cls, text: str, *, source: str = "policy") -> Policy:
        """Read a policy from TOML text."""
        import tomllib  # (a policy of JSON or of code never reads TOML: a one-shot check pays for it when it does)

        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            raise PolicyError([FieldProblem("", f"not valid TOML: {exc}")], source=source) from None
        return cls.from_dict(data, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a policy file: ``.toml``, or ``.json``."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError([FieldProblem("", f"cannot read {p}: {exc}")], source=str(p)) from None
        if p.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than Python goes
                raise PolicyError([FieldProblem("", f"not valid JSON: {exc}")], source=str(p)) from None
            return cls.from_dict(data, source=str(p))
        return cls.from_toml(text, source=str(p))


def _consistency_problems(tools: Mapping[str, ToolPolicy]) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    for name, tp in tools.items():
        where = f"tools.{name}"
        if not isinstance(name, str) or not name.strip():
            problems.append(FieldProblem("tools", f"tool names must be non-empty strings, got {name!r}"))
        if not isinstance(tp, ToolPolicy):
            problems.append(FieldProblem(where, f"must be a ToolPolicy, got {type(tp).__name__}"))
            continue
        if tp.risk not in ("dangerous", "general"):
            problems.append(FieldProblem(f"{where}.risk", f"must be 'dangerous' or 'general', got {tp.risk!r}"))
        if tp.exempt and tp.risk == "dangerous":
            problems.append(
                FieldProblem(where, "a dangerous tool cannot be exempt; exempt tools never reach a third party")
            )
        for i, parent in enumerate(tp.step_of):
            if parent == name or parent not in tools or tools[parent].exempt:
                why = f"must name another guarded tool of the policy, got {parent!r}"
                problems.append(FieldProblem(f"{where}.step_of[{i}]", why))
        for key in ("targets", "intents", "amounts", "step_of", "delegate", "content"):
            for i, value in enumerate(getattr(tp, key)):
                if not isinstance(value, str) or not value.strip():
                    problems.append(FieldProblem(f"{where}.{key}[{i}]", "must be a non-empty string"))
        if tp.currency is not None and not (len(tp.currency) == 3 and tp.currency.isascii() and tp.currency.isupper()):
            why = f"must be a three-letter currency code such as 'EUR', got {tp.currency!r}"
            problems.append(FieldProblem(f"{where}.currency", why))
        if tp.ask not in ("never", "when_unsure", "always"):
            problems.append(FieldProblem(f"{where}.ask", f"must be never, when_unsure or always, got {tp.ask!r}"))
        if tp.exempt and tp.ask == "always":
            problems.append(FieldProblem(where, "an exempt tool is never checked, so the user cannot always be asked"))
        problems += _kind_problems(where, tp) + _content_problems(where, tp) + _returns_problems(where, tp)
        problems += _intent_problems(where, tp)
        problems += _option_problems(where, tp)
        if "justification" in tp.targets:
            problems.append(
                FieldProblem(f"{where}.targets", "'justification' is the actor's own argument, not a target")
            )
    return problems


def _pattern_problems(tools: Mapping[str, ToolPolicy], patterns: Mapping[str, ToolPolicy]) -> list[FieldProblem]:
    """A pattern only exempts (``exempt = true`` and nothing else), and a named tool is never a pattern."""
    problems = [
        FieldProblem(f"tools.{name}", "a tool name holding *, ? or [ is a pattern: give it in patterns")
        for name in tools
        if isinstance(name, str) and is_pattern(name)
    ]
    for name, tp in patterns.items():
        if not isinstance(name, str) or not is_pattern(name):
            problems.append(FieldProblem("patterns", f"a pattern holds *, ? or [, got {name!r}"))
        elif not isinstance(tp, ToolPolicy) or tp != ToolPolicy(exempt=True):
            why = "a pattern only exempts the tools it matches: exempt = true and nothing else (a name can lie)"
            problems.append(FieldProblem(f"tools.{name}", why))
    return problems


def _option_problems(where: str, tp: ToolPolicy) -> list[FieldProblem]:
    """An option says how the call acts: never also what it reaches (a target, an amount) or its wording."""
    problems = []
    for name, default in tp.options.items():
        if not isinstance(name, str) or not name.strip():
            problems.append(FieldProblem(f"{where}.options", f"option names must be non-empty strings, got {name!r}"))
        elif name in (*tp.targets, *tp.amounts, *tp.content) or name == "justification":
            why = "is a target, an amount or content already: an option is what the call does besides"
            problems.append(FieldProblem(f"{where}.options.{name}", why))
        elif not json_value(default):
            why = f"its default must be a JSON value (true, a number, a string, a list, a table), got {default!r}"
            problems.append(FieldProblem(f"{where}.options.{name}", why))
    return problems


OPTION_DEPTH = 8
"""How deep an option's default may nest (a flag, a list of names, a table of settings: never deeper)."""


def json_value(value: Any, *, null: bool = True, depth: int = 0) -> bool:
    """Whether ``value`` is a JSON value an option's default may be: ``null`` (unless ``null=False``: TOML has
    none), a boolean, a finite number, a string, a list or a table of them, at most :data:`OPTION_DEPTH` deep."""
    if depth > OPTION_DEPTH:
        return False
    if value is None:
        return null
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, bool | int | str):
        return True
    if isinstance(value, list | tuple):
        return all(json_value(v, null=null, depth=depth + 1) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and json_value(v, null=null, depth=depth + 1) for k, v in value.items())
    return False


def _intent_problems(where: str, tp: ToolPolicy) -> list[FieldProblem]:
    if tp.intent not in ("code", "judge"):
        return [FieldProblem(f"{where}.intent", f"must be 'code' or 'judge', got {tp.intent!r}")]
    if tp.intent == "judge" and tp.risk != "dangerous":
        why = "'judge' is for dangerous tools: a model judge decides a general tool's unknown intent already"
        return [FieldProblem(f"{where}.intent", why)]
    return []


def _returns_problems(where: str, tp: ToolPolicy) -> list[FieldProblem]:
    if tp.returns is None or tp.returns in RETURNS:
        return []
    why = f"must be one of {', '.join(repr(r) for r in RETURNS)}, got {tp.returns!r}"
    return [FieldProblem(f"{where}.returns", why)]


def _content_problems(where: str, tp: ToolPolicy) -> list[FieldProblem]:
    """Content is the agent's wording: never a target or an amount, which the user must have chosen."""
    return [
        FieldProblem(f"{where}.content[{i}]", f"{path!r} is a target or an amount, not content")
        for i, path in enumerate(tp.content)
        if path in tp.targets or path in tp.amounts
    ]


def _kind_problems(where: str, tp: ToolPolicy) -> list[FieldProblem]:
    """Each argument kind the policy names must be one of the language pack's."""
    known = {k.name for k in english().arguments}
    why = f"must be one of {', '.join(sorted(known))}, got "
    return [
        FieldProblem(f"{where}.kinds.{arg}", why + repr(kind)) for arg, kind in tp.kinds.items() if kind not in known
    ]
