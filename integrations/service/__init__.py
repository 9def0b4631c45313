"""The validator as an HTTP decision service (``validator serve``), and clients (sync, async) that fail closed.

The clients (:class:`ServiceClient`, :class:`AsyncServiceClient`, :class:`RemoteValidator`) and the token
stores need only the base install; the service itself (:func:`create_app`) needs the ``[service]`` extra.
Each name is imported when first used, so an agent's process that only calls a service never imports
FastAPI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from validator.integrations.service.app import ServiceConfig, check_persistence, create_app
    from validator.integrations.service.client import AsyncServiceClient, ServiceClient
    from validator.integrations.service.remote import RemoteValidator
    from validator.integrations.service.tokens import (
        SCOPES,
        Identity,
        MemoryTenants,
        RedisTenants,
        Tenants,
        new_token,
        tenants_for,
        token_hash,
        token_key,
    )

_WHERE = {
    "ServiceConfig": "app",
    "check_persistence": "app",
    "create_app": "app",
    "AsyncServiceClient": "client",
    "ServiceClient": "client",
    "RemoteValidator": "remote",
    **dict.fromkeys(
        (
            "SCOPES",
            "Identity",
            "MemoryTenants",
            "RedisTenants",
            "Tenants",
            "new_token",
            "tenants_for",
            "token_hash",
            "token_key",
        ),
        "tokens",
    ),
}

__all__ = [
    "SCOPES",
    "AsyncServiceClient",
    "Identity",
    "MemoryTenants",
    "RedisTenants",
    "RemoteValidator",
    "ServiceClient",
    "ServiceConfig",
    "Tenants",
    "check_persistence",
    "create_app",
    "new_token",
    "tenants_for",
    "token_hash",
    "token_key",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
