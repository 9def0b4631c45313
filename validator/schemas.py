"""JSON Schemas of the check input and the verdict, generated from the models that parse them.

The generated texts are also committed as ``schemas/*.schema.json`` in the repository (a test
keeps them equal), so tools in other languages can read them without Python.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from validator.inputs.fastdecode import CheckIn
from validator.verdict import verdict_adapter

__all__ = ["SCHEMAS", "schema", "schema_json"]


class _Quote(BaseModel):
    model_config = ConfigDict(extra="forbid", title="QuoteEvidence")
    quote: str = Field(description="The user's own words, copied exactly from one of their messages.")


class _Authorization(BaseModel):
    model_config = ConfigDict(extra="forbid", title="AuthorizationEvidence")
    authorization_id: str = Field(description="The id of a standing authorization the user granted.")


class _Justification(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Justification")
    reason: str = Field(description="What the user asked for and how this action does it.")
    evidence: list[_Quote | _Authorization]


def _check_input() -> dict[str, Any]:
    generated: dict[str, Any] = msgspec.json.schema(CheckIn)  # the records the decoder reads are the format
    defs: dict[str, Any] = generated["$defs"]
    doc: dict[str, Any] = {**defs.pop("CheckIn"), "$defs": defs}
    justification = _Justification.model_json_schema()
    defs.update(justification.pop("$defs", {}))
    defs["Justification"] = justification
    defs["ActionIn"]["properties"]["justification"] = {
        "description": "The actor's justification, as the agent sent it. A missing or malformed one is "
        "not an input error: the check blocks it with MISSING_JUSTIFICATION.",
        "anyOf": [{"$ref": "#/$defs/Justification"}, {}],
    }
    doc["title"] = "CheckInput"
    doc["description"] = "A pending action to validate against the conversation that led to it."
    return doc


def _verdict() -> dict[str, Any]:
    doc = verdict_adapter().json_schema(mode="serialization")
    doc["description"] = "The validator's answer for one pending action."
    return doc


def _eval_case() -> dict[str, Any]:
    from validator.evals.cases import CaseDoc

    doc = CaseDoc.model_json_schema()
    doc["title"] = "EvalCase"
    doc["description"] = "An eval case: a check input, the decision it must get, its risk class and its pattern tags."
    return doc


SCHEMAS = {"check-input": _check_input, "verdict": _verdict, "eval-case": _eval_case}


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema called ``name`` (``check-input`` or ``verdict``)."""
    return SCHEMAS[name]()


def schema_json(name: str) -> str:
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"
