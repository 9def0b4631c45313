"""The action validator: before an agent's action reaches a third party, did the user authorize it?

Key components:

- :class:`Validator` and :func:`validate` / :func:`avalidate` / :func:`check`: the pipeline.
- :class:`Policy`, :class:`ToolPolicy`: which tools are guarded, their risk, targets and intents.
- :class:`Verdict`, :class:`Code`, :class:`Decision`: the answer, with codes and findings.
- :class:`Judge`, :class:`StrictJudge`: the judge seam and the embedded offline judge.
- :mod:`validator.testing`: scripted judges for tests.
- :mod:`validator.integrations`: the decorator, the LangGraph node, the agent middleware, the raw
  Anthropic loop.

Typical usage::

    import validator

    verdict = validator.validate(messages, action, policy=validator.Policy.load("policy.toml"))
    print(verdict.decision, verdict.code, verdict.reasoning)
"""

import importlib as _importlib
import inspect as _inspect
import typing as _typing

if _typing.TYPE_CHECKING:
    from validator._types import Confidence, Risk, Role
    from validator.decision import decide
    from validator.engine import (
        ActionInput,
        BaseValidator,
        MessagesInput,
        Validator,
        ValidatorConfig,
        avalidate,
        check,
        validate,
    )
    from validator.engine.stateful import stateful_validator
    from validator.exceptions import (
        ActionBlocked,
        FieldProblem,
        InputError,
        JudgeError,
        JudgeOutputError,
        JudgeRequestRejected,
        JudgeServiceError,
        JudgeTimeout,
        JudgeTransportError,
        PackError,
        PolicyError,
        SetupError,
        StoreBusy,
        StoreError,
        UsageError,
        ValidatorError,
        is_control_flow,
    )
    from validator.findings import (
        AuthorizationFinding,
        Findings,
        IntentFinding,
        Location,
        QuoteFinding,
        ValueFinding,
    )
    from validator.inputs import (
        AuthorizationEvidence,
        CheckInput,
        Justification,
        Limits,
        Message,
        PendingAction,
        QuoteEvidence,
        ToolCall,
        Transcript,
        parse_action,
        parse_justification,
        parse_transcript,
        pending_action,
        transcript_from_anthropic,
    )
    from validator.judges import Judge, JudgeOutput, JudgeRequest, StrictJudge
    from validator.language.lexicon import default_intents
    from validator.policy import Policy, PolicySettings, ToolPolicy
    from validator.prompts import load_prompt
    from validator.record import AuditEvent, MemoryRecorder, Recorder
    from validator.store import AuthorizationStore, MemoryAuthorizationStore
    from validator.store.records import StandingAuthorization
    from validator.telemetry import Telemetry
    from validator.verdict import Code, Decision, Usage, Verdict

__all__ = [
    "ActionBlocked",
    "ActionInput",
    "AuditEvent",
    "AuthorizationEvidence",
    "AuthorizationFinding",
    "AuthorizationStore",
    "avalidate",
    "BaseValidator",
    "check",
    "CheckInput",
    "Code",
    "Confidence",
    "decide",
    "Decision",
    "default_intents",
    "FieldProblem",
    "Findings",
    "InputError",
    "IntentFinding",
    "is_control_flow",
    "Judge",
    "JudgeError",
    "JudgeOutput",
    "JudgeOutputError",
    "JudgeRequest",
    "JudgeRequestRejected",
    "JudgeServiceError",
    "JudgeTimeout",
    "JudgeTransportError",
    "Justification",
    "Limits",
    "load_prompt",
    "Location",
    "MemoryAuthorizationStore",
    "MemoryRecorder",
    "Message",
    "MessagesInput",
    "PackError",
    "parse_action",
    "parse_justification",
    "parse_transcript",
    "pending_action",
    "PendingAction",
    "Policy",
    "PolicyError",
    "PolicySettings",
    "QuoteEvidence",
    "QuoteFinding",
    "Recorder",
    "Risk",
    "Role",
    "SetupError",
    "StandingAuthorization",
    "stateful_validator",
    "StoreBusy",
    "StoreError",
    "StrictJudge",
    "Telemetry",
    "ToolCall",
    "ToolPolicy",
    "Transcript",
    "transcript_from_anthropic",
    "Usage",
    "UsageError",
    "validate",
    "Validator",
    "ValidatorConfig",
    "ValidatorError",
    "ValueFinding",
    "Verdict",
]

from validator._types import VERSION as _VERSION

__version__ = _VERSION

# Each name is imported when first asked for (PEP 562): ``import validator`` costs no more than the modules a
# command uses (the Claude Code hook's client imports none). Tracebacks and reprs name the public path
# (validator.Verdict), as httpx does; type aliases (Risk, Role, ...) are not classes and keep theirs.
_HOMES: dict[str, str] = {
    "ActionBlocked": "validator.exceptions",
    "ActionInput": "validator.engine",
    "AuditEvent": "validator.record",
    "AuthorizationEvidence": "validator.inputs",
    "AuthorizationFinding": "validator.findings",
    "AuthorizationStore": "validator.store",
    "avalidate": "validator.engine",
    "BaseValidator": "validator.engine",
    "check": "validator.engine",
    "CheckInput": "validator.inputs",
    "Code": "validator.verdict",
    "Confidence": "validator._types",
    "decide": "validator.decision",
    "Decision": "validator.verdict",
    "default_intents": "validator.language.lexicon",
    "FieldProblem": "validator.exceptions",
    "Findings": "validator.findings",
    "InputError": "validator.exceptions",
    "IntentFinding": "validator.findings",
    "is_control_flow": "validator.exceptions",
    "Judge": "validator.judges",
    "JudgeError": "validator.exceptions",
    "JudgeOutput": "validator.judges",
    "JudgeOutputError": "validator.exceptions",
    "JudgeRequest": "validator.judges",
    "JudgeRequestRejected": "validator.exceptions",
    "JudgeServiceError": "validator.exceptions",
    "JudgeTimeout": "validator.exceptions",
    "JudgeTransportError": "validator.exceptions",
    "Justification": "validator.inputs",
    "Limits": "validator.inputs",
    "load_prompt": "validator.prompts",
    "Location": "validator.findings",
    "MemoryAuthorizationStore": "validator.store",
    "MemoryRecorder": "validator.record",
    "Message": "validator.inputs",
    "MessagesInput": "validator.engine",
    "parse_action": "validator.inputs",
    "parse_justification": "validator.inputs",
    "parse_transcript": "validator.inputs",
    "pending_action": "validator.inputs",
    "PendingAction": "validator.inputs",
    "Policy": "validator.policy",
    "PackError": "validator.exceptions",
    "PolicyError": "validator.exceptions",
    "PolicySettings": "validator.policy",
    "QuoteEvidence": "validator.inputs",
    "QuoteFinding": "validator.findings",
    "Recorder": "validator.record",
    "Risk": "validator._types",
    "Role": "validator._types",
    "SetupError": "validator.exceptions",
    "StandingAuthorization": "validator.store.records",
    "stateful_validator": "validator.engine.stateful",
    "StoreBusy": "validator.exceptions",
    "StoreError": "validator.exceptions",
    "StrictJudge": "validator.judges",
    "Telemetry": "validator.telemetry",
    "ToolCall": "validator.inputs",
    "ToolPolicy": "validator.policy",
    "Transcript": "validator.inputs",
    "transcript_from_anthropic": "validator.inputs",
    "Usage": "validator.verdict",
    "UsageError": "validator.exceptions",
    "validate": "validator.engine",
    "Validator": "validator.engine",
    "ValidatorConfig": "validator.engine",
    "ValidatorError": "validator.exceptions",
    "ValueFinding": "validator.findings",
    "Verdict": "validator.verdict",
}


def __getattr__(name: str) -> _typing.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    obj = getattr(_importlib.import_module(home), name)
    if isinstance(obj, type) or (callable(obj) and not name[0].isupper()):
        _public(obj)
    globals()[name] = obj
    return obj


def _public(obj: _typing.Any) -> None:
    """Name ``validator`` as the module of ``obj``, its annotations resolved first: ``typing.get_type_hints``, pydantic
    and msgspec read them in the namespace of the module an object names, and this one lacks the names they use (a
    user's pydantic model with a ``validator.Verdict`` field would not build). An annotation only a type checker
    resolves is left as written."""
    try:
        hints = _typing.get_type_hints(obj, include_extras=True)
    except Exception:  # a name imported for type checkers only: nothing to resolve it with
        hints = None
    if hints:
        own = _inspect.get_annotations(obj)
        if own:
            obj.__annotations__ = {key: hints.get(key, value) for key, value in own.items()}
        for found in getattr(obj, "__dataclass_fields__", {}).values():
            found.type = hints.get(found.name, found.type)
    obj.__module__ = "validator"


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
