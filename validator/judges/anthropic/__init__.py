"""Claude as the validator: tools to prepare, the cache-sharing judge, prices, the prefix doctor.

Requires the ``anthropic`` extra (``pip install '.[anthropic]'`` in a clone) for
:class:`AnthropicJudge`; the rest is plain data and needs no SDK.
"""

from validator.judges.anthropic.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from validator.judges.anthropic.requests import (
    NotShareable,
    StandaloneCaching,
    breakpoints,
    shared_request,
    standalone_request,
)
from validator.judges.anthropic.tools import (
    DEFAULT_SEARCH_TOOL,
    DEFAULT_VALIDATOR_TOOL,
    prepare_tools,
    search_tool,
    validator_tool,
)

__all__ = [
    "AnthropicJudge",
    "breakpoints",
    "DEFAULT_PRICES",
    "DEFAULT_SEARCH_TOOL",
    "DEFAULT_VALIDATOR_TOOL",
    "ModelPrice",
    "NotShareable",
    "StandaloneCaching",
    "prepare_tools",
    "PriceTable",
    "search_tool",
    "shared_request",
    "standalone_request",
    "validator_tool",
]


def __getattr__(name: str) -> object:
    if name == "AnthropicJudge":  # imported on first use: only it needs the anthropic SDK (its module names the extra)
        from validator.judges.anthropic.judge import AnthropicJudge

        return AnthropicJudge
    raise AttributeError(name)
