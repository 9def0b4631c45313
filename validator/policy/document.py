"""A policy document as it is read (TOML or JSON): strict pydantic models, imported only when a policy is read, so
a check that brings no policy never builds them."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from validator._types import Risk
from validator.exceptions import PolicyError, problems_from_pydantic
from validator.policy import Ask, IntentBy, Returns

__all__ = ["read_document"]


def read_document(data: Any, source: str) -> _PolicyDoc:
    """``data`` read as a policy document; raises :class:`PolicyError` naming each field and its problem."""
    try:
        return _PolicyDoc.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(problems_from_pydantic(exc, fields=_fields), source=source) from None


def _fields(parent: tuple[int | str, ...]) -> Collection[str]:
    """The fields a policy document allows under ``parent`` (a misspelt one is told the one it meant)."""
    if parent == ():
        return _PolicyDoc.model_fields.keys()
    if parent == ("settings",):
        return _SettingsDoc.model_fields.keys()
    if len(parent) == 2 and parent[0] == "tools":
        return _ToolDoc.model_fields.keys()
    if len(parent) == 2 and parent[0] == "servers":
        return _ServerDoc.model_fields.keys()
    return ()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _ToolDoc(_Strict):
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
    def _guarded_means_not_exempt(self) -> _ToolDoc:
        if self.guarded is not None:
            if "exempt" in self.model_fields_set and self.guarded == self.exempt:
                raise ValueError("'guarded' and 'exempt' contradict each other")
            self.exempt = not self.guarded
        return self


class _SettingsDoc(_Strict):
    low_confidence: Literal["ask_user", "block"] = "ask_user"
    ungrounded_targets: Literal["judge", "block"] = "judge"
    quality: Literal["advise", "ask_user"] = "advise"
    enforce: bool = True
    answer_grant_days: int = Field(default=30, ge=1, le=3650)


class _ServerDoc(_Strict):
    trusted: bool = False


class _PolicyDoc(_Strict):
    tools: dict[str, _ToolDoc] = Field(default_factory=dict)
    settings: _SettingsDoc = Field(default_factory=_SettingsDoc)
    servers: dict[str, _ServerDoc] = Field(default_factory=dict)
