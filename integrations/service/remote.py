"""A validator (:class:`~validator.engine.BaseValidator`) that decides through ``validator serve``: the
integrations take it wherever they take a ``Validator``.

``RemoteValidator(url, token, policy=...)`` sends each check to the service (``POST /v1/check``) and each
answer of the user to it (``POST /v1/answer``), through the fail-closed clients: a service that cannot be
reached, or answers anything but a verdict on the tool asked about, is a refusal. The policy given here is
the one the host's adapters read to shape the tools (which are guarded, which get a ``justification``);
the service decides under its own. A host's human-in-the-loop edit (``validate(..., edited=...)``) is not
sent: the service never takes a caller's word that a value is the user's, so such a call is checked as
the agent's (it may be asked about again).

Typical usage::

    validator = RemoteValidator("http://127.0.0.1:8321", token, policy=Policy.load("policy.toml"))
    agent = create_agent(model, tools, middleware=[ActionValidatorMiddleware(validator)], checkpointer=...)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

import httpx
from validator.integrations.service.client import AsyncServiceClient, ServiceClient

from validator.engine.base import (
    ActionInput,
    AnswerOptions,
    BaseValidator,
    CallOptions,
    CheckOptions,
    MessagesInput,
    ValidatorConfig,
)
from validator.exceptions import UsageError
from validator.inputs.checkinput import check_input_data, read_action, read_messages
from validator.policy import Policy
from validator.telemetry import Telemetry
from validator.verdict import Code, Verdict
from validator.verdict.refusals import ANSWER_AGAIN, NO_ANSWER_TOKEN, NO_QUESTION

__all__ = ["RemoteValidator"]


class RemoteValidator(BaseValidator):
    """See the module docstring. ``token`` needs the ``check`` scope. ``answer_token`` (the ``answer`` scope, and
    never ``check``: the service refuses a token that may check to answer) records the user's answers; without
    it an answer is a refusal and the call does not run."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        policy: Policy,
        answer_token: str | None = None,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        """``telemetry``: where each check's ``CLIENT`` span goes (:mod:`validator.telemetry`); the service
        continues its trace."""
        super().__init__(policy, ValidatorConfig(telemetry=telemetry or Telemetry()))
        telemetry = self.config.telemetry
        self.client = ServiceClient(url, token, timeout=timeout, transport=transport, telemetry=telemetry)
        self.async_client = AsyncServiceClient(
            url, token, timeout=timeout, transport=async_transport, telemetry=telemetry
        )
        answering = answer_token or ""
        self.answer_client = ServiceClient(url, answering, timeout=timeout, transport=transport)
        self.async_answer_client = AsyncServiceClient(url, answering, timeout=timeout, transport=async_transport)
        self.answers = answer_token is not None

    def validate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        return self.client.check(check_input(messages, action, options.get("user_id"), options.get("agent_request")))

    async def avalidate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        body = check_input(messages, action, options.get("user_id"), options.get("agent_request"))
        return await self.async_client.check(body)

    def answer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        if verdict.question_id is None or not self.answers:
            return _unasked(verdict, self.answers)
        return self.answer_client.answer(verdict.question_id, verdict.tool, _answer(verdict, approved, reason, options))

    async def aanswer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        if verdict.question_id is None or not self.answers:
            return _unasked(verdict, self.answers)
        return await self.async_answer_client.answer(
            verdict.question_id, verdict.tool, _answer(verdict, approved, reason, options)
        )

    def feedback(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[CallOptions]
    ) -> None:
        """Not over the wire yet: a record kept here would miss the service's audit, which ``eval propose``
        reads, so it is refused rather than kept where nobody looks."""
        raise UsageError("RemoteValidator cannot record feedback yet: the service has no feedback route")


def _answer(verdict: Verdict, approved: bool, reason: str | None, options: AnswerOptions) -> dict[str, Any]:
    """``POST /v1/answer``'s decision: the user's answer to the question the verdict carries."""
    return decision(approved, reason, options.get("remember"), options.get("edit"), verdict.tool)


def _unasked(verdict: Verdict, answers: bool) -> Verdict:
    """The refusal of an answer this validator cannot give: the verdict put no question (the service asks by
    id, and only it), or no answer token was given."""
    why = NO_QUESTION if answers else NO_ANSWER_TOKEN
    return Verdict.blocked(verdict.tool, why, code=Code.SERVICE_UNAVAILABLE, suggested_next_step=ANSWER_AGAIN)


def check_input(
    messages: MessagesInput, action: ActionInput, user_id: str | None, agent_request: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The check input (the service's wire format) of one call: messages, action (with its call id), user."""
    transcript, pending = read_messages(messages, agent_request), read_action(action)
    return check_input_data(transcript, pending, user_id)


def decision(
    approved: bool, reason: str | None, remember: Mapping[str, Any] | None, edit: Mapping[str, Any] | None, tool: str
) -> dict[str, Any]:
    """The user's answer in LangChain's decision shapes (what ``POST /v1/answer`` reads)."""
    if not approved:
        return {"type": "reject", **({"message": reason} if reason else {})}
    if edit is not None:
        return {"type": "edit", "edited_action": {"name": tool, "args": dict(edit)}}
    return {"type": "approve", **({"remember": dict(remember)} if remember is not None else {})}
