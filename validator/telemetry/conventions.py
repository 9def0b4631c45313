"""Every OpenTelemetry name this library writes: attributes, spans, events and metrics, in one module, so a
rename in the conventions is one edit here.

Followed (both still *Development* in OpenTelemetry's terms, and in more than one draft):

- the GenAI guardrail conventions, ``docs/gen-ai/gen-ai-guardrails.md`` of
  https://github.com/open-telemetry/semantic-conventions-genai at commit
  ``f5e3733b19bdb5cb9074c2ec26da9e375d52a40a``: a span per check (``apply_guardrail {component}``), the
  ``gen_ai.guardrail.*`` attributes, and the ``gen_ai.guardrail.result`` event;
- the GenAI client span conventions, ``docs/gen-ai/gen-ai-spans.md`` of the same repository at commit
  ``9430220eb6f3f8a0e41d2e0e548aeb5cb9ca5f14``, for a model judge's call (``chat {model}``).

What they leave open is ours, under ``action_validator.*``. No name here ever carries the user's words, the
arguments' values, the justification or a verdict's reasoning (which quotes the user): the guardrail
conventions forbid user content in ``gen_ai.guardrail.result.reason``, and this library records none, whatever
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says (content capture is opt-in for an
instrumentation, and this one does not offer it).
"""

from __future__ import annotations

from typing import Final

__all__: list[str] = []  # names only; read as ``conventions.NAME``

GUARDRAILS_DOC: Final = (
    "https://github.com/open-telemetry/semantic-conventions-genai/blob/"
    "f5e3733b19bdb5cb9074c2ec26da9e375d52a40a/docs/gen-ai/gen-ai-guardrails.md"
)
CLIENT_SPANS_DOC: Final = (
    "https://github.com/open-telemetry/semantic-conventions-genai/blob/"
    "9430220eb6f3f8a0e41d2e0e548aeb5cb9ca5f14/docs/gen-ai/gen-ai-spans.md"
)

INSTRUMENTATION: Final = "action-validator"
"""The instrumentation scope's name (the tracer's and the meter's)."""

# -- the guardrail span and event ----------------------------------------------------------------------------
APPLY_GUARDRAIL: Final = "apply_guardrail"
"""``gen_ai.operation.name`` of a check, and the first word of its span's name."""
COMPONENT: Final = "action-validator"
"""``gen_ai.guardrail.component.name``: this library."""
SOURCE: Final = "tool_input"
"""``gen_ai.guardrail.source``: a check evaluates a tool call before it runs (the conventions' own term)."""
RESULT_CODE: Final = "code"
"""``gen_ai.guardrail.result.type`` of the verdict's code (``INJECTION_SIGNATURE``), the span's result."""
RESULT_DECISION: Final = "decision"
"""``gen_ai.guardrail.result.type`` of the verdict's decision (``approve``, ``block``, ``ask_user``)."""
RESULT_EVENT: Final = "gen_ai.guardrail.result"

OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
GUARDRAIL_COMPONENT_NAME: Final = "gen_ai.guardrail.component.name"
GUARDRAIL_POLICY_ID: Final = "gen_ai.guardrail.policy.id"
GUARDRAIL_POLICY_VERSION: Final = "gen_ai.guardrail.policy.version"
GUARDRAIL_RESULT_TYPE: Final = "gen_ai.guardrail.result.type"
GUARDRAIL_RESULT_VALUE: Final = "gen_ai.guardrail.result.value"
GUARDRAIL_SOURCE: Final = "gen_ai.guardrail.source"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
"""The host's id of the tool call a check decided (when it sent one)."""
ERROR_TYPE: Final = "error.type"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"

# ours: what the conventions have no name for
DECISION: Final = "action_validator.decision"
"""The verdict's decision (the span's result is its code)."""
JUDGE: Final = "action_validator.judge"
"""The judge that decided (``strict``, ``anthropic:MODEL``); absent when code alone decided."""
CONFIDENCE: Final = "action_validator.confidence"
DECIDED_BY: Final = "action_validator.decided_by"
"""Who decided the verdict: ``code``, ``model`` or ``user`` (a question to the user)."""
REUSED: Final = "action_validator.reused"
"""True when the verdict was judged earlier for the very same call and conversation."""

# -- a model judge's call (the GenAI client span) -------------------------------------------------------------
CHAT: Final = "chat"
ANTHROPIC: Final = "anthropic"
"""``gen_ai.provider.name`` of the Anthropic judge's calls."""
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
"""All input tokens, the cached ones included (the conventions' Anthropic page)."""
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ: Final = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION: Final = "gen_ai.usage.cache_creation.input_tokens"

# -- metrics (ours: the conventions define none for a guardrail) ------------------------------------------------
VERDICTS_METRIC: Final = "action_validator.verdicts"
"""Counter: verdicts by decision, code and tool."""
BLOCK_RATE_METRIC: Final = "action_validator.block_rate"
"""Gauge: the block rate of each tool over the monitor's current window (15 minutes by default)."""
WINDOW_CHECKS_METRIC: Final = "action_validator.block_rate.window_checks"
"""Gauge: the checks the block rate of each tool is computed over."""
CODE: Final = "action_validator.code"
