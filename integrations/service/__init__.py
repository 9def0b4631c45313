"""The validator as an HTTP decision service (``validator serve``), and clients (sync, async) that fail closed."""

from validator.integrations.service.app import ServiceConfig, check_persistence, create_app
from validator.integrations.service.client import AsyncServiceClient, ServiceClient
from validator.integrations.service.remote import RemoteValidator
from validator.integrations.service.tokens import (
    SCOPES,
    TOKEN_PREFIX,
    Identity,
    MemoryTenants,
    RedisTenants,
    Tenants,
    new_token,
    tenants_for,
    token_hash,
)

__all__ = [
    "SCOPES",
    "TOKEN_PREFIX",
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
]
