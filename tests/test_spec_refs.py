"""$ref handling: JSON pointers, the external-ref policy, and hostile specs doing no I/O."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.errors import FetchError
from ramscope.specs import SchemeRequirement, build_index
from ramscope.specs.refs import RefFailure, RefResolver, check_ref_target, resolve_pointer
from ramscope.store.model import FetchedSpec
from tests._spec_fixtures import IOAudit
from tests._specs import FIXTURES, fixture_spec, make_spec, rest_operation

SPEC_URL = "https://specs.example.com/apis/hostile-refs.json"


class SpyLoader:
    """A load_ref that serves a fixed map of URLs and records every request."""

    def __init__(self, docs: dict[str, FetchedSpec] | None = None) -> None:
        self.docs = docs or {}
        self.calls: list[str] = []

    def __call__(self, url: str) -> FetchedSpec:
        self.calls.append(url)
        if url not in self.docs:
            raise FetchError("not found (404)", url=url)
        return self.docs[url]


# --------------------------------------------------------------------------- pointers


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("", {"a/b": {"m~n": [10, 20]}, "sp ace": 1}),
        ("/a~1b/m~0n/1", 20),
        ("/a%7E1b/m~0n/0", 10),  # percent-decoded before RFC 6901 unescaping
        ("/sp%20ace", 1),
    ],
)
def test_resolve_pointer(fragment: str, expected: Any) -> None:
    """URI fragments are percent-decoded, then RFC 6901 escapes ~1 and ~0 are undone."""
    doc = {"a/b": {"m~n": [10, 20]}, "sp ace": 1}
    assert resolve_pointer(doc, fragment) == expected


@pytest.mark.parametrize("fragment", ["/missing", "/a~1b/m~0n/2", "/a~1b/m~0n/01", "anchor", "/sp ace/x"])
def test_resolve_pointer_misses(fragment: str) -> None:
    """Missing keys, out-of-range or zero-padded indexes, plain-name anchors and scalars raise LookupError."""
    with pytest.raises(LookupError):
        resolve_pointer({"a/b": {"m~n": [10, 20]}, "sp ace": 1}, fragment)


# --------------------------------------------------------------------------- policy


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("https://specs.example.com/apis/common.json", None),
        ("https://specs.example.com/apis/sub/dir/common.yaml", None),
        ("https://SPECS.example.com:443/apis/x.json", None),
        ("file:///etc/passwd", "file: refs are never followed"),
        ("ftp://specs.example.com/apis/x.json", "ftp refs are not followed"),
        ("http://specs.example.com/apis/x.json", "other origin"),
        ("https://specs.example.com:8443/apis/x.json", "other origin"),
        ("https://evil.example/apis/x.json", "other origin"),
        ("https://user:pw@specs.example.com/apis/x.json", "credentials"),
        ("https://specs.example.com/private/x.json", "escapes the spec's directory"),
        ("https://specs.example.com/apis/%2e%2e/private/x.json", "escapes the spec's directory"),
        ("https://specs.example.com/apis/%2E%2E/%2e%2e/x.json", "escapes the spec's directory"),
        ("https://specs.example.com/apis/..%2fprivate/x.json", "encoded slashes"),
        ("https://specs.example.com/apis/..%5Cprivate/x.json", "encoded slashes"),
        ("https://specs.example.com/apisx/y.json", "escapes the spec's directory"),
    ],
)
def test_check_ref_target(target: str, reason: str | None) -> None:
    """Only same-origin http(s) targets inside the spec's directory are allowed."""
    got = check_ref_target(target, "https://specs.example.com/apis/openapi.json")
    if reason is None:
        assert got is None
    else:
        assert got is not None
        assert reason in got


@pytest.mark.parametrize(
    ("ref", "code"),
    [
        ("//evil.example/apis/x.json#/a", "ref-refused"),  # scheme-relative: another host
        ("file:x.json#/a", "ref-refused"),
        ("jar:https://specs.example.com/apis/x.jar!/a.json#/a", "ref-refused"),
        ("HTTPS://SPECS.EXAMPLE.COM/apis/x.json#/a", "ref-unresolved"),  # allowed; the spy has no such file
        ("sub/../x.json#/a", "ref-unresolved"),  # dot segments that stay inside are fine
    ],
)
def test_ref_spellings(ref: str, code: str) -> None:
    """Scheme-relative, opaque and odd-case refs get the same origin and directory checks."""
    loader = SpyLoader()
    got = RefResolver({}, "https://specs.example.com/apis/main.json", loader).deref({"$ref": ref})
    assert isinstance(got, RefFailure)
    assert got.code == code
    assert bool(loader.calls) == (code == "ref-unresolved")


def test_relative_refs_are_refused_without_a_spec_url() -> None:
    """A spec with no http(s) URL cannot have sibling documents checked, so none is read."""
    loader = SpyLoader()
    got = RefResolver({}, "", loader).deref({"$ref": "other.json#/x"})
    assert isinstance(got, RefFailure)
    assert got.code == "ref-refused"
    assert loader.calls == []


# --------------------------------------------------------------------------- hostile spec


@pytest.fixture
def warm() -> None:
    """Import and run everything once, so lazy imports do not show up as file opens in the audit."""
    build_index(fixture_spec("hostile-refs.json", SPEC_URL), load_ref=SpyLoader())
    resolve(*rest_operation("x"), build_index(make_spec({"openapi": "3.0.0", "info": {}, "paths": {}})))


def test_hostile_refs_open_no_file_and_no_socket(io_audit: IOAudit, warm: None) -> None:
    """file:, cross-origin, ../ and %2e%2e escapes and a cycle: no file opened, no connection, no load."""
    spec = fixture_spec("hostile-refs.json", SPEC_URL)
    loader = SpyLoader()
    with io_audit:
        index = build_index(spec, load_ref=loader)
    assert io_audit.events == []
    # Only the same-origin, same-directory ref reached the loader (which 404s here).
    assert loader.calls == ["https://specs.example.com/apis/shared/paths.json"]
    by_path = {d.data.get("skipped_path"): d.code for d in index.diagnostics if "skipped_path" in d.data}
    assert by_path == {
        "/local-file": "ref-refused",
        "/cross-origin": "ref-refused",
        "/escape": "ref-refused",
        "/encoded-escape": "ref-refused",
        "/cycle": "ref-cycle",
        "/shared": "ref-unresolved",
    }
    assert {o.key for o in index.operations} == {"useMetadata", "safe"}


def test_hostile_refs_reach_the_accesses(io_audit: IOAudit, warm: None) -> None:
    """An access naming a path whose $ref was refused is unresolved, and carries the refusal, pointed at the card."""
    index = build_index(fixture_spec("hostile-refs.json", SPEC_URL), load_ref=SpyLoader())
    with io_audit:
        got = resolve(*rest_operation("", "GET", "/api/local-file"), index)
    assert io_audit.events == []
    assert isinstance(got, Unresolved)
    assert got.reason == "operation-not-found"
    refused = [d for d in got.diagnostics if d.code == "ref-refused" and d.data["skipped_path"] == "/local-file"]
    assert len(refused) == 1
    assert refused[0].path == "/resources/0/spec/spec_url"
    assert refused[0].data["spec_pointer"] == "/paths/~1local-file"
    assert "file: refs are never followed" in refused[0].message


def test_refused_scheme_ref_keeps_requirement_and_explains(warm: None) -> None:
    """A security scheme whose $ref is refused: the requirement stays, the scheme is absent, the access is told why."""
    index = build_index(fixture_spec("hostile-refs.json", SPEC_URL))
    assert "metadata" not in index.scheme_map
    assert not [d for d in index.diagnostics if d.code == "undefined-security-scheme"]
    got = resolve(*rest_operation("useMetadata"), index)
    assert isinstance(got, Target)
    assert got.entry.requirements == ((SchemeRequirement("metadata"),),)
    assert [d.code for d in got.diagnostics] == ["ref-refused"]
    assert "169.254.169.254" in got.diagnostics[0].message


# --------------------------------------------------------------------------- allowed external refs


def test_same_origin_sibling_document_is_loaded_once(io_audit: IOAudit, warm: None) -> None:
    """A sibling file in the spec's directory is fetched through load_ref, parsed once, and its operations indexed."""
    shared_url = "https://specs.example.com/apis/shared/paths.json"
    shared = make_spec((FIXTURES / "shared-paths.json").read_bytes(), shared_url)
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {}}}},
        "paths": {
            "/one": {"$ref": "shared/paths.json#/shared"},
            "/two": {"$ref": "./shared/paths.json#/other"},  # a ref inside the sibling, to itself
        },
    }
    loader = SpyLoader({shared_url: shared})
    with io_audit:
        index = build_index(make_spec(doc, "https://specs.example.com/apis/main.json"), load_ref=loader)
    assert io_audit.events == []
    assert loader.calls == [shared_url]
    by_key = {o.key: o for o in index.operations}
    assert set(by_key) == {"GET /one", "PUT /one", "GET /two", "PUT /two"}  # the two paths share operation ids
    assert by_key["GET /one"].extra["source"] == shared_url + "#/shared"
    assert by_key["GET /one"].requirements == ((SchemeRequirement("oauth", ("read",)),),)


def test_redirect_to_another_origin_is_refused() -> None:
    """If the loader's final URL (after redirects) leaves the origin, the document is not used."""
    url = "https://specs.example.com/apis/shared/paths.json"
    moved = make_spec((FIXTURES / "shared-paths.json").read_bytes(), url, final_url="https://evil.example/p.json")
    doc = {"openapi": "3.0.3", "info": {}, "paths": {"/one": {"$ref": "shared/paths.json#/shared"}}}
    index = build_index(make_spec(doc, "https://specs.example.com/apis/main.json"), load_ref=SpyLoader({url: moved}))
    assert index.operations == ()
    assert [d.code for d in index.diagnostics if "skipped_path" in d.data] == ["ref-refused"]


@pytest.mark.parametrize(
    ("paths", "loader", "code", "text"),
    [
        ({"/a": {"$ref": "#/nowhere"}}, None, "ref-unresolved", "points at nothing"),
        ({"/a": {"$ref": "other.json#/x"}}, None, "ref-unresolved", "no loader"),
        ({"/a": {"$ref": "other.json#/x"}}, SpyLoader(), "ref-unresolved", "could not be fetched"),
        ({"/a": {"$ref": 7}}, None, "ref-unresolved", "not a string"),
    ],
    ids=["dangling", "no-loader", "fetch-error", "not-a-string"],
)
def test_unresolvable_path_item_refs(
    paths: dict[str, Any], loader: Callable[[str], FetchedSpec] | None, code: str, text: str
) -> None:
    """Every way a path item ref can fail is a diagnostic naming the skipped path, never an exception."""
    doc = {"openapi": "3.0.3", "info": {}, "paths": paths}
    index = build_index(make_spec(doc), load_ref=loader)
    (d,) = [d for d in index.diagnostics if "skipped_path" in d.data]
    assert (d.code, d.data["skipped_path"]) == (code, "/a")
    assert text in d.message


def test_long_ref_chains_are_bounded() -> None:
    """A chain longer than 64 hops is cut off with a diagnostic."""
    items = {f"P{i}": {"$ref": f"#/components/pathItems/P{i + 1}"} for i in range(100)}
    items["P100"] = {"get": {"operationId": "deep", "responses": {}}}
    doc = {
        "openapi": "3.1.0",
        "info": {},
        "components": {"pathItems": items},
        "paths": {"/deep": {"$ref": "#/components/pathItems/P0"}, "/near": {"$ref": "#/components/pathItems/P90"}},
    }
    index = build_index(make_spec(doc))
    assert [o.path for o in index.operations] == ["/near"]
    (d,) = [d for d in index.diagnostics if "skipped_path" in d.data]
    assert "more than 64 chained refs" in d.message


def test_audit_hook_sees_file_opens_and_connects(io_audit: IOAudit) -> None:
    """The audit used above is not blind: it records an open and a connection attempt (to 127.0.0.1 only)."""
    import contextlib
    import socket

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        port = srv.getsockname()[1]
        with io_audit, socket.socket() as s:
            open(__file__, "rb").close()
            s.settimeout(1)
            with contextlib.suppress(OSError):
                s.connect(("127.0.0.1", port))  # bound but not listening: refused
    assert {e for e, _ in io_audit.events} >= {"open", "socket.connect"}
