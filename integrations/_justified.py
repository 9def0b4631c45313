"""The ``justification`` argument as pydantic models, for hosts whose tools take pydantic argument models (LangChain,
the plain tool decorator of :mod:`validator.integrations.tools`): apart from :mod:`validator.integrations._host`, so
that a host with no pydantic model (the Claude Code hook) never imports pydantic."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from validator.integrations._host import JUSTIFICATION, justification_description

__all__ = ["AuthorizationItem", "JustificationArg", "QuoteItem", "justified_model"]


class QuoteItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    quote: str = Field(description="The user's own words, copied exactly from one of their messages.")


class AuthorizationItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    authorization_id: str = Field(description="The id of a standing permission the user gave earlier.")


class JustificationArg(BaseModel):
    """Why the user wants this action: a reason, and the user's own words as evidence."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(description="What the user asked for and how this action does it.")
    evidence: list[QuoteItem | AuthorizationItem] = Field(
        description="The user's own words quoted exactly, or standing authorizations, that ask for this action."
    )


def justified_model(base: type[BaseModel], *, description: str | None = None) -> type[BaseModel]:
    """A copy of a tool's model-facing argument model with a required ``justification`` field.

    Built afresh from the fields (langchain-core patches the original class's ``model_json_schema``
    with a cache, which a subclass would inherit). The guidance goes in the parameter's description,
    never in the tool's.
    """
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in base.model_fields.items()}
    fields[JUSTIFICATION] = (JustificationArg, Field(description=justification_description()))
    return create_model(f"{base.__name__}Justified", __doc__=description or base.__doc__, **fields)
