from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Policy, PolicyError, ToolPolicy, default_intents


def test_unknown_tool_is_guarded_and_general() -> None:
    tp = Policy().for_tool("launch_rocket")
    assert (tp.exempt, tp.risk) == (False, "general")


@pytest.mark.parametrize(
    ("name", "included", "excluded"),
    [
        ("send_email", ("email", "send", "reply", "forward", "tell", "let * know"), ("pay",)),
        ("deleteThread", ("delete", "remove", "trash"), ("archive",)),
        ("send_money", ("pay", "transfer", "wire", "send money"), ("send", "email")),
        ("frobnicate_widget", ("frobnicate",), ()),
        ("", (), ("send",)),
    ],
)
def test_default_intents_come_from_the_lexicon(name: str, included: tuple[str, ...], excluded: tuple[str, ...]) -> None:
    intents = default_intents(name)
    assert set(included) <= set(intents) and not set(excluded) & set(intents)


def test_default_intents_read_the_description_when_the_name_says_nothing() -> None:
    assert "pay" in default_intents("do_it", "Sends money to a bank account")
    assert ToolPolicy(description="Posts a message to Slack").intent_words("x") == default_intents(
        "x", "Posts a message to Slack"
    )


def test_toml_policy_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        """
[settings]
low_confidence = "block"
ungrounded_targets = "block"

[tools.send_money]
risk = "dangerous"
targets = ["recipient"]
intents = ["pay"]

[tools.read_inbox]
guarded = false
"""
    )
    p = Policy.load(path)
    assert p.for_tool("send_money") == ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay",))
    assert p.for_tool("read_inbox").exempt
    assert p.settings.low_confidence == "block"
    assert Policy.from_dict(p.to_dict()) == p
    assert Policy.from_dict(p.to_dict()).version == p.version


def test_json_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"tools": {"x": {"risk": "dangerous"}}}')
    assert Policy.load(path).for_tool("x").risk == "dangerous"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"tools": {"x": {"risk": "deadly"}}}, "tools.x.risk: must be one of 'dangerous' or 'general', got 'deadly'"),
        ({"tools": {"x": {"targets": "to"}}}, "tools.x.targets: Input should be a valid list, got str"),
        ({"tools": {"x": {"exempt": True, "risk": "dangerous"}}}, "tools.x: a dangerous tool cannot be exempt"),
        ({"tools": {"x": {"colour": "red"}}}, "tools.x.colour: unknown field"),
        ({"tools": {"x": {"targets": [""]}}}, "tools.x.targets[0]: must be a non-empty string"),
        (
            {"tools": {"x": {"targets": ["justification"]}}},
            "tools.x.targets: 'justification' is the actor's own argument",
        ),
        ({"settings": {"low_confidence": "approve"}}, "settings.low_confidence: must be one of 'ask_user' or 'block'"),
        ({"tools": {"x": {"guarded": True, "exempt": True}}}, "'guarded' and 'exempt' contradict each other"),
        ([1, 2], "Input should be a valid dictionary"),
    ],
)
def test_bad_policy_names_field_and_problem(data: object, problem: str) -> None:
    with pytest.raises(PolicyError) as exc:
        Policy.from_dict(data)
    assert any(problem in str(p) for p in exc.value.problems), exc.value.problems


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="not valid TOML"):
        Policy.from_toml("[tools.x\nrisk=1")
    with pytest.raises(PolicyError, match="cannot read"):
        Policy.load(tmp_path / "missing.toml")


def test_python_policy_is_checked_too() -> None:
    with pytest.raises(PolicyError, match="cannot be exempt"):
        Policy({"x": ToolPolicy(exempt=True, risk="dangerous")})
    assert ToolPolicy(targets=["to"]).targets == ("to",)  # type: ignore[arg-type]


def test_policy_lint_names_each_hole_with_its_reason() -> None:
    from validator.policy.lint import lint

    policy = Policy(
        {
            "wipe_disk": ToolPolicy(risk="dangerous"),
            "send_money": ToolPolicy(risk="dangerous", targets=("recipient",)),
            "fetch_url": ToolPolicy(exempt=True),
            "forward_email": ToolPolicy(exempt=True),
            "reply_to_user": ToolPolicy(exempt=True),
            "pay_invoice": ToolPolicy(risk="dangerous", targets=("iban",), amounts=("total",)),
        }
    )
    warnings = {(w.tool, w.problem.split(":")[0].split(" ")[0]) for w in lint(policy)}
    assert warnings == {
        ("wipe_disk", "dangerous"),
        ("send_money", "moves"),
        ("fetch_url", "exempt,"),
        ("forward_email", "exempt,"),
    }


def test_the_shipped_policies_lint_clean() -> None:
    from validator.policy.lint import lint

    root = Path(__file__).resolve().parent.parent
    for path in ("validator/examples/policy.toml", "evals/suite/policy.toml"):
        assert lint(Policy.load(root / path)) == [], path


def test_policy_check_prints_the_warnings(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from validator.cli import app

    path = tmp_path / "p.toml"
    path.write_text('[tools.wipe_disk]\nrisk = "dangerous"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["policy", "check", str(path)])
    assert result.exit_code == 0 and "warning:" in result.stdout and "wipe_disk" in result.stdout


def test_a_pattern_exempts_the_tools_it_matches_that_the_policy_does_not_name() -> None:
    """Issue 62: ``[tools."mcp__*__get_*"]`` with ``exempt = true`` exempts the read-only tools of every MCP server
    by their names (the author's choice: a name can lie); a tool the policy names keeps its own entry, a pattern
    does nothing but exempt, and the patterns stand among the tools in the policy's plain data (its version)."""
    text = """
[tools."mcp__*__get_*"]
exempt = true

[tools.mcp__github__get_secret_and_post_it]
risk = "dangerous"
targets = ["to"]
"""
    policy = Policy.from_toml(text)
    assert policy.for_tool("mcp__github__get_issue").exempt
    assert policy.for_tool("mcp__github__create_issue") == ToolPolicy()
    assert policy.for_tool("mcp__github__get_secret_and_post_it").risk == "dangerous"  # named: its own entry
    assert "mcp__*__get_*" not in policy.tools and "mcp__*__get_*" in policy.to_dict()["tools"]
    assert Policy.from_dict(policy.to_dict()) == policy
    assert Policy.from_toml(text).version == policy.version != Policy.from_toml(text.split("\n\n", 1)[1]).version
    for extra in ('risk = "dangerous"', 'intents = ["get"]', "exempt = false"):
        with pytest.raises(PolicyError, match="a pattern only exempts"):
            Policy.from_toml(f'[tools."mcp__*__pay*"]\n{extra}\n')
    with pytest.raises(PolicyError, match="is a pattern"):
        Policy({"get_*": ToolPolicy(exempt=True)})


TRUSTING = """
[servers.github]
trusted = true

[servers.scraper]
trusted = false

[tools.get_secret_and_post_it]
risk = "dangerous"
targets = ["to"]
"""


def _mcp_tools() -> list[Any]:
    """One server's tools as three hosts hold them: MCP's own ``Tool``, a ``tools/list`` item, a LangChain tool
    as ``langchain-mcp-adapters`` makes it (annotations in ``metadata``)."""
    from langchain_core.tools import StructuredTool
    from mcp.types import Tool, ToolAnnotations

    def noop() -> str:
        return ""

    return [
        Tool(name="get_issue", inputSchema={"type": "object"}, annotations=ToolAnnotations(readOnlyHint=True)),
        Tool(name="delete_repo", inputSchema={"type": "object"}, annotations=ToolAnnotations(destructiveHint=True)),
        {"name": "list_prs", "annotations": {"readOnlyHint": True, "openWorldHint": False}},
        {"name": "merge_pr", "annotations": {"readOnlyHint": "true"}},  # a string that reads as true: not the boolean
        {"name": "wipe", "annotations": {"readOnlyHint": True, "destructiveHint": True}},  # contradicts itself
        {"name": "create_issue"},  # says nothing
        {"name": "get_secret_and_post_it", "annotations": {"readOnlyHint": True}},  # the policy names it
        StructuredTool.from_function(noop, name="search_code", description="x", metadata={"readOnlyHint": True}),
    ]


def test_a_trusted_servers_read_only_tools_are_exempt_by_their_mcp_annotations() -> None:
    policy = Policy.from_toml(TRUSTING)
    assert policy.trusted_servers == {"github"}
    effective = policy.with_mcp_tools("github", _mcp_tools())
    exempt = {name for name, tp in effective.tools.items() if tp.exempt}
    assert exempt == {"get_issue", "list_prs", "search_code"}
    assert effective.for_tool("get_secret_and_post_it").risk == "dangerous"  # named: its own entry
    for guarded in ("delete_repo", "merge_pr", "wipe", "create_issue"):
        assert effective.for_tool(guarded) == ToolPolicy()
    claude = policy.with_mcp_tools("github", _mcp_tools(), name_format="mcp__{server}__{tool}")
    assert claude.for_tool("mcp__github__get_issue").exempt and not claude.for_tool("get_issue").exempt
    assert Policy.from_dict(policy.to_dict()) == policy and "servers" in policy.to_dict()


def test_an_untrusted_servers_annotations_change_nothing() -> None:
    policy = Policy.from_toml(TRUSTING)
    assert policy.with_mcp_tools("scraper", _mcp_tools()) is policy
    assert policy.with_mcp_tools("unlisted", _mcp_tools()) is policy
    assert Policy().with_mcp_tools("github", _mcp_tools()) == Policy()
    assert Policy().version == Policy.from_toml("").version  # a policy with no servers keeps its version


def test_a_trusted_servers_tool_goes_unchecked_only_where_its_annotations_say_read_only() -> None:
    from validator import Decision, Message, Transcript, Validator

    validator = Validator(Policy.from_toml(TRUSTING).with_mcp_tools("github", _mcp_tools()))
    t = Transcript([Message(role="user", content="What does issue 42 say?")])
    assert validator.validate(t, {"tool": "get_issue", "args": {"number": 42}}).decision is Decision.APPROVE
    assert validator.validate(t, {"tool": "delete_repo", "args": {"repo": "x"}}).decision is not Decision.APPROVE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[servers.github]\ntrusted = 1\n", "servers.github.trusted"),
        ("[servers.github]\ntrustd = true\n", "trusted"),
    ],
)
def test_a_servers_table_is_read_strictly(text: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        Policy.from_toml(text)


def test_an_mcp_tool_without_a_name_is_a_usage_error() -> None:
    from validator.exceptions import UsageError

    with pytest.raises(UsageError, match="needs a name"):
        Policy.from_toml(TRUSTING).with_mcp_tools("github", [{"annotations": {"readOnlyHint": True}}])


def test_the_attackers_mcp_listings_stay_guarded() -> None:
    """A destructive flag of any truthy shape, a name listed read-only and then destructive, a name holding a
    pattern's sign (no tool's), and empty annotations beside a metadata that says read-only."""
    from types import SimpleNamespace

    listed = [
        {"name": "wipe_a", "annotations": {"readOnlyHint": True, "destructiveHint": "true"}},
        {"name": "wipe_b", "annotations": {"readOnlyHint": True, "destructiveHint": 1}},
        {"name": "twice", "annotations": {"readOnlyHint": True}},
        {"name": "twice", "annotations": {"destructiveHint": True}},
        {"name": "get_*", "annotations": {"readOnlyHint": True}},
        SimpleNamespace(name="odd", annotations={}, metadata={"readOnlyHint": True}),
    ]
    effective = Policy.from_toml(TRUSTING).with_mcp_tools("github", listed)
    assert not any(tp.exempt for tp in effective.tools.values()), effective.tools


def test_a_policy_keeps_its_own_copies_so_its_version_is_the_content_it_checks_with() -> None:
    """The mappings a policy is given, and a tool's option defaults inside them, are copied: the caller's later
    changes to them change neither what the policy checks with nor its version (computed once, kept)."""
    options: dict[str, Any] = {"attachments": []}
    tools = {"send_email": ToolPolicy(targets=("to",), options=options)}
    patterns = {"get_*": ToolPolicy(exempt=True)}
    policy = Policy(tools, patterns=patterns)
    version, plain = policy.version, policy.to_dict()
    tools["pay"] = ToolPolicy(risk="dangerous", targets=("iban",))
    patterns.clear()
    options["attachments"].append("secret.pdf")
    options["permanently_delete"] = False
    assert not policy.declares("pay") and policy.for_tool("get_mail").exempt
    assert policy.for_tool("send_email").options == {"attachments": []}
    assert policy.to_dict() == plain and policy.version == version
    assert Policy.from_dict(plain).version == version  # the same content, the same version, however built


# -- the document's reading, held to the pydantic models it was read with before ----------------------------------


def _oracle() -> Any:
    """The policy document as pydantic read it (strict models, unknown fields refused): what
    :mod:`validator.policy.document`'s records must accept, refuse and build alike."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, model_validator

    from validator._types import Risk
    from validator.policy import Ask, IntentBy, Returns

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

    class ToolDoc(Strict):
        exempt: bool = False
        risk: Risk = "general"
        targets: list[str] = Field(default_factory=list)
        intents: list[str] = Field(default_factory=list)
        description: str = ""
        amounts: list[str] = Field(default_factory=list)
        currency: str | None = None
        ask: Ask = "when_unsure"
        step_of: list[str] = Field(default_factory=list)
        delegate: list[str] = Field(default_factory=list)
        kinds: dict[str, str] = Field(default_factory=dict)
        content: list[str] = Field(default_factory=list)
        returns: Returns | None = None
        options: dict[str, Any] = Field(default_factory=dict)
        intent: IntentBy = "code"
        guarded: bool | None = None

        @model_validator(mode="after")
        def _guarded_means_not_exempt(self) -> ToolDoc:
            if self.guarded is not None:
                if "exempt" in self.model_fields_set and self.guarded == self.exempt:
                    raise ValueError("'guarded' and 'exempt' contradict each other")
                self.exempt = not self.guarded
            return self

    class SettingsDoc(Strict):
        low_confidence: Literal["ask_user", "block"] = "ask_user"
        ungrounded_targets: Literal["judge", "block"] = "judge"
        quality: Literal["advise", "ask_user"] = "advise"
        enforce: bool = True
        answer_grant_days: int = Field(default=30, ge=1, le=3650)

    class ServerDoc(Strict):
        trusted: bool = False

    class PolicyDoc(Strict):
        tools: dict[str, ToolDoc] = Field(default_factory=dict)
        settings: SettingsDoc = Field(default_factory=SettingsDoc)
        servers: dict[str, ServerDoc] = Field(default_factory=dict)

    return PolicyDoc


_ODD = st.sampled_from([None, 1, 0, True, 1.5, "x", "", [], ["x"], [1], {}, {"a": "b"}, ("x",), -3, 4000])


def _documents(odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Policy documents; ``odd``: what may stand in any field's place instead of one of its values."""
    tool = st.fixed_dictionaries(
        {},
        optional={
            "exempt": st.booleans() | odd,
            "risk": st.sampled_from(["general", "dangerous", "deadly"]) | odd,
            "targets": st.lists(st.sampled_from(["to", "cc", "recipient"]), max_size=2) | odd,
            "intents": st.lists(st.sampled_from(["email", "pay"]), max_size=2) | odd,
            "description": st.text(max_size=5) | odd,
            "currency": st.sampled_from(["EUR", None]) | odd,
            "ask": st.sampled_from(["never", "when_unsure", "always"]) | odd,
            "kinds": st.dictionaries(st.sampled_from(["to", "iban"]), st.sampled_from(["email", "iban"])) | odd,
            "returns": st.sampled_from(["user_records", None]) | odd,
            "options": st.dictionaries(st.sampled_from(["a", "b"]), _ODD) | odd,
            "intent": st.sampled_from(["code", "judge"]) | odd,
            "guarded": st.booleans() | odd,
            "colour": odd,
        },
    )
    settings_doc = st.fixed_dictionaries(
        {},
        optional={
            "low_confidence": st.sampled_from(["ask_user", "block"]) | odd,
            "enforce": st.booleans() | odd,
            "answer_grant_days": st.integers(-2, 4000) | odd,
            "quality": st.sampled_from(["advise", "ask_user"]) | odd,
            "setings": odd,
        },
    )
    servers = st.dictionaries(
        st.sampled_from(["mail", "bank"]), st.fixed_dictionaries({}, optional={"trusted": st.booleans() | odd})
    )
    return (
        st.fixed_dictionaries(
            {},
            optional={
                "tools": st.dictionaries(st.sampled_from(["send_email", "pay", "mcp__*__get_*"]), tool, max_size=2)
                | odd,
                "settings": settings_doc | odd,
                "servers": servers | odd,
                "extra": odd,
            },
        )
        | odd
    )


@settings(max_examples=400, deadline=None)
@given(st.one_of(_documents(_ODD), _documents(st.nothing())))
def test_a_document_is_read_as_the_pydantic_models_read_it(data: Any) -> None:
    """Accepted and refused alike, and a good one read to the same fields; a refused one's problems are at the
    places the models named (the models' extra words for a union's member aside)."""
    import msgspec
    from pydantic import ValidationError

    from validator.policy.document import read_document

    try:
        expected = _oracle().model_validate(data)
    except ValidationError as exc:
        with pytest.raises(PolicyError) as refused:
            read_document(data, "p")
        paths = {p.path for p in refused.value.problems}
        for err in exc.errors():
            loc = [part for part in err["loc"] if not str(part).startswith(("literal[", "function-"))]
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
            assert any(where.startswith(p) or p.startswith(where) for p in paths), (where, paths)
        return
    assert msgspec.to_builtins(read_document(data, "p")) == expected.model_dump()


class _Risk(str, __import__("enum").Enum):
    DANGEROUS = "dangerous"


class _Days(__import__("enum").IntEnum):
    MONTH = 30


class _Text(str):
    pass


@pytest.mark.parametrize(
    "data",
    [
        __import__("collections").OrderedDict(tools={"pay": {"risk": "dangerous"}}),
        {"tools": {"pay": {"risk": _Risk.DANGEROUS, "targets": [_Text("iban")]}}},
        {"settings": {"answer_grant_days": _Days.MONTH}},
        {"tools": {"pay": {"options": {1: "a"}}}},
        {"tools": {_Text("pay"): __import__("collections").OrderedDict(exempt=True)}},
        {"settings": {"answer_grant_days": True}},
    ],
)
def test_a_documents_own_types_are_read_as_the_pydantic_models_read_them(data: Any) -> None:
    """A document built in code, or read by another TOML library, holds its own types (an ``OrderedDict``, a str
    ``Enum``'s member, an ``IntEnum``): read alike, never a boolean for a number, a key that is no text named."""
    import msgspec
    from pydantic import ValidationError

    from validator.policy.document import read_document

    try:
        expected = _oracle().model_validate(data)
    except ValidationError:
        with pytest.raises(PolicyError) as refused:
            read_document(data, "p")
        assert all(p.path for p in refused.value.problems), refused.value.problems  # each named by its place
        return
    assert msgspec.to_builtins(read_document(data, "p"), enc_hook=str) == expected.model_dump()
