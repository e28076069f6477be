"""Spec kind detection from content, and "unsupported spec" errors that say what was found."""

from __future__ import annotations

import pytest

from ramscope.errors import SpecError
from ramscope.specs import ADAPTERS, SpecKind, build_index, detect_kind
from tests._specs import make_spec


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b'{"swagger": "2.0", "info": {}, "paths": {}}', SpecKind.OPENAPI),
        (b"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n", SpecKind.OPENAPI),
        (b"openapi: 3.0\npaths: {}\n", SpecKind.OPENAPI),  # YAML float 3.0, written carelessly
        (b'{"openapi": "3.1.0", "info": {}, "webhooks": {}}', SpecKind.OPENAPI),
        (b'\xef\xbb\xbf{"openapi": "3.0.1", "paths": {}}', SpecKind.OPENAPI),  # UTF-8 BOM
        (b'{"kind": "discovery#restDescription", "discoveryVersion": "v1"}', SpecKind.DISCOVERY),
        (b"{openapi: 3.1.0, paths: {}}", SpecKind.OPENAPI),  # YAML flow style starting with "{"
    ],
)
def test_detect_kind_from_content(body: bytes, kind: SpecKind) -> None:
    """Swagger 2.0, OpenAPI 3.x and Discovery are recognised in JSON or YAML, whatever the media type."""
    assert detect_kind(body, "text/plain") is kind


@pytest.mark.parametrize(
    ("body", "media_type", "words"),
    [
        (b'{"swaggerVersion": "1.2", "apis": []}', None, "Swagger '1.2'"),
        (b'{"swagger": "3.0"}', None, "Swagger '3.0'"),
        (b'{"openapi": "4.0.0"}', None, "OpenAPI '4.0.0'"),
        (b"<!DOCTYPE html><html><body>API docs</body></html>", None, "HTML page"),
        (b'{"a": 1}', "text/html; charset=utf-8", "HTML page"),
        (b"   \n", None, "empty"),
        (b'{"name": "thing", "version": 2}', None, "top-level keys 'name', 'version'"),
        (b"[1, 2, 3]", None, "an array of 3 items"),
        (b'{"kind": "discovery#directoryList", "items": []}', None, "Discovery directory"),
        (b"just text", None, "a bare string"),
    ],
)
def test_unsupported_specs_say_what_they_are(body: bytes, media_type: str | None, words: str) -> None:
    """Anything else raises SpecError("unsupported spec: ...") describing what was found."""
    with pytest.raises(SpecError, match="unsupported spec") as err:
        detect_kind(body, media_type)
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"openapi": "3.0.0",', "invalid JSON"),
        (b"key: [unclosed", "not JSON, and not YAML"),
        (b'{"a": "\xff"}', "invalid JSON"),
    ],
)
def test_unreadable_specs_are_invalid_not_unsupported(body: bytes, words: str) -> None:
    """A document that cannot be parsed was obtained but is invalid (reason ``spec-invalid``), not of a
    kind ramscope does not read (``unsupported-spec``)."""
    with pytest.raises(SpecError, match="unreadable spec") as err:
        detect_kind(body, None)
    assert words in str(err.value)


def test_mcp_kind_hint_needs_a_capture() -> None:
    """The MCP adapter reads ramscope's own capture; a bare tools/list result is not one."""
    assert SpecKind.MCP in ADAPTERS
    with pytest.raises(SpecError, match="expected a mcp document"):
        build_index(make_spec({"tools": []}), kind_hint=SpecKind.MCP)
    with pytest.raises(SpecError, match="format 'ramscope-mcp-capture/9'"):
        build_index(make_spec({"format": "ramscope-mcp-capture/9", "tools": []}), kind_hint=SpecKind.MCP)


def test_build_index_kind_hint_must_match_content() -> None:
    """A kind hint picks the adapter, but the document must still be of that kind."""
    with pytest.raises(SpecError, match="expected a google-discovery document"):
        build_index(make_spec({"openapi": "3.0.0", "paths": {}}), kind_hint=SpecKind.DISCOVERY)


def test_detection_ignores_the_url() -> None:
    """A Discovery document served at a .yaml URL is still Discovery."""
    spec = make_spec({"kind": "discovery#restDescription"}, "https://x.test/openapi.yaml", media_type="text/yaml")
    assert build_index(spec).kind is SpecKind.DISCOVERY
