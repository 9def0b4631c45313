"""The action validator: before an agent's action reaches a third party, did the user authorize it?

Key components:

- :class:`Validator` and :func:`validate` / :func:`avalidate` / :func:`check`: the pipeline.
- :class:`Policy`, :class:`ToolPolicy`: which tools are guarded, their risk, targets and intents.
- :class:`Verdict`, :class:`Code`, :class:`Decision`: the answer, with codes and findings.
- :class:`Judge`, :class:`StrictJudge`: the judge seam and the embedded offline judge.
- :mod:`validator.testing`: scripted judges for tests.

Typical usage::

    import validator

    verdict = validator.validate(messages, action, policy=validator.Policy.load("policy.toml"))
    print(verdict.decision, verdict.code, verdict.reasoning)
"""

from .action import AuthorizationEvidence, Justification, PendingAction, QuoteEvidence, parse_justification
from .authorizations import AuthorizationStore, MemoryAuthorizationStore, StandingAuthorization
from .checkinput import CheckInput, Limits, parse_action, parse_transcript, pending_action
from .engine import Validator, ValidatorConfig, avalidate, check, decide, validate
from .exceptions import (
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
    StoreError,
    ValidatorError,
    ValidatorUsageError,
)
from .findings import AuthorizationFinding, Findings, IntentFinding, Location, QuoteFinding, ValueFinding
from .judge import Judge, JudgeOutput, JudgeRequest
from .policy import Policy, PolicySettings, Risk, ToolPolicy, default_intents
from .prompts import load_prompt
from .recorder import AuditEvent, MemoryRecorder, Recorder
from .strict import StrictJudge
from .transcript import Message, Role, ToolCall, Transcript
from .verdict import Code, Confidence, Decision, Usage, Verdict

__all__ = [
    "ActionBlocked",
    "AuditEvent",
    "AuthorizationEvidence",
    "AuthorizationFinding",
    "AuthorizationStore",
    "avalidate",
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
    "StandingAuthorization",
    "StoreError",
    "StrictJudge",
    "ToolCall",
    "ToolPolicy",
    "Transcript",
    "Usage",
    "validate",
    "Validator",
    "ValidatorConfig",
    "ValidatorError",
    "ValidatorUsageError",
    "ValueFinding",
    "Verdict",
]

__version__ = "0.1.0"
