"""Shared fixtures and hooks."""

from tests._spec_fixtures import (  # noqa: F401 - pytest finds hooks and fixtures by name here
    discovery_documents,
    io_audit,
    npm_corpora,
    pytest_collection_modifyitems,
)
