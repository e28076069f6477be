"""The JSON Schema of `export`'s wrapper documents (src/ramscope/schemas/export.schema.json): every JSON format's
output of every card of ours validates, and a document off the shape does not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.governance.export import TARGET_FORMATS, NotExpressible, export_report
from tests.support.exportcards import derive_all
from tests.support.exportcards_saas import derive_saas

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "src" / "ramscope" / "schemas" / "export.schema.json").read_text("utf-8"))
#: Not wrapped: the target's own document (oauth-client, RFC 7591 metadata) or YAML (the gateways).
UNWRAPPED = {"oauth-client", "toolhive", "agentgateway"}
WRAPPED = [f for f in TARGET_FORMATS if f not in UNWRAPPED]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {**derive_all(tmp_path_factory.mktemp("export-cache")), **derive_saas(tmp_path_factory.mktemp("saas"))}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def exported(reports: dict[str, dict[str, Any]], fmt: str, **kw: Any) -> list[tuple[str, Any]]:
    out = []
    for name, report in reports.items():
        try:
            out.append((name, json.loads(export_report(report, fmt, **kw).text)))
        except NotExpressible:
            continue
    return out


def test_the_schema_names_every_wrapped_format() -> None:
    assert SCHEMA["properties"]["format"]["enum"] == WRAPPED
    assert set(SCHEMA["$defs"]) >= set(WRAPPED)


@pytest.mark.parametrize("fmt", WRAPPED)
def test_every_cards_export_validates(
    reports: dict[str, dict[str, Any]], validator: jsonschema.Draft202012Validator, fmt: str
) -> None:
    docs = exported(reports, fmt) + exported(reports, fmt, tier="REQUIRED") + exported(reports, fmt, identity="AGENT")
    assert docs, fmt  # each format exports at least one card of ours
    for name, doc in docs:
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, (name, fmt, errors[:5])


def test_an_export_with_what_was_left_out_validates(
    reports: dict[str, dict[str, Any]], validator: jsonschema.Draft202012Validator
) -> None:
    """A card whose tiers need other targets' scopes and an undetermined access: both kinds of not_exported."""
    r = copy.deepcopy(reports["graph"])
    a = next(a for a in r["accesses"] if a["id"] == "send-mail")
    a.update(complete=False, scopes=None, reason="spec-unavailable")
    r["tiers"]["OPTIONAL"]["END_USER"]["permissions"] += reports["hubspot"]["tiers"]["OPTIONAL"]["END_USER"][
        "permissions"
    ]
    doc = json.loads(export_report(r, "entra-app").text)
    assert {"access", "permission"} <= {k for x in doc["not_exported"] for k in x}
    validator.validate(doc)


@pytest.mark.parametrize(
    ("name", "fmt", "break_it"),
    [
        ("graph", "entra-app", lambda d: d["manifest"]["requiredResourceAccess"][0]["resourceAccess"][0].update(
            type="Delegated")),
        ("slack", "slack-manifest", lambda d: d["manifest"]["oauth_config"]["scopes"].update(bot_required=["x"])),
        ("hubspot", "hubspot-app", lambda d: d["auth"].update(scopes=["tickets"])),
        ("atlassian", "atlassian-app", lambda d: d["manifest"]["permissions"].update(optional=[])),
        ("travel", "google-oauth", lambda d: d.pop("consent_screen")),
        ("github", "github-app", lambda d: d["manifest"]["default_permissions"].update(issues="all")),
        ("graph", "allowlist", lambda d: d.update(default="allow")),
        ("graph", "entra-app", lambda d: d.update(extra=1)),
        ("graph", "entra-app", lambda d: d.update(format="hubspot-app")),
    ],
)  # fmt: skip
def test_a_document_off_the_shape_fails(
    reports: dict[str, dict[str, Any]], validator: jsonschema.Draft202012Validator, name: str, fmt: str, break_it: Any
) -> None:
    doc = json.loads(export_report(reports[name], fmt).text)
    validator.validate(doc)
    break_it(doc)
    assert not validator.is_valid(doc)


def test_every_field_the_schema_names_is_documented() -> None:
    """A field added to export.schema.json without a word in docs/governance.md fails here, by name."""
    doc = (ROOT / "docs" / "governance.md").read_text("utf-8")
    intro = doc[doc.index("## Exports to where") : doc.index("### `entra-app`")]
    missing = [k for k in SCHEMA["properties"] if f"`{k}`" not in intro]
    for fmt in WRAPPED:
        start = doc.index(f"### `{fmt}`")
        section = doc[start : doc.find("\n### ", start + 1)]
        missing += [f"{fmt}.{k}" for k in SCHEMA["$defs"][fmt]["properties"] if f"`{k}" not in section]
    assert not missing
