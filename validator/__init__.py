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

from validator._types import Confidence, Risk, Role
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
    PolicyError,
    SetupError,
    StoreBusy,
    StoreError,
    UsageError,
    ValidatorError,
    is_control_flow,
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
from validator.verdict.decision import decide
from validator.verdict.findings import (
    AuthorizationFinding,
    Findings,
    IntentFinding,
    Location,
    QuoteFinding,
    ValueFinding,
)

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

__version__ = "0.1.0"

# Tracebacks and reprs name the public path (validator.Verdict), as httpx does. Type aliases
# (Risk, Role, ...) are not classes and keep theirs.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or (callable(_obj) and not _name[0].isupper()):
        _obj.__module__ = "validator"
del _name, _obj
