"""Shopify's readings hold for Shopify's own hosts only (issue 30, item 13;
tests/adversarial/test_provider_hosts.py): in a test, the local server stands in for shopify.dev."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.httpserver import LocalHTTPServer


@contextmanager
def shopify_served_by(server: LocalHTTPServer, prefix: str = "/shopify") -> Iterator[None]:
    """While it lasts, a schema the local server serves under ``prefix`` is read as Shopify's own."""
    from ramscope.specs import graphql

    real = graphql._shopify_url
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(graphql, "_shopify_url", lambda url: url.startswith(server.url(prefix)) or real(url))
        yield
