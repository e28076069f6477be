"""The compiled addition from Microsoft Graph's API reference (scripts/graph_docs_additions.py): its reading
of the three permission-table shapes and the HTTP request blocks, failing closed where a page does not say
(an AND, a resource no path names, "Not supported"), and the guard the catalog build applies to it. The
snippets are in the pages' own shape (their text written here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from ramscope.providers import catalog
from ramscope.providers.graph import DOCS, build_from, shipped_additions

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("graph_docs_additions", ROOT / "scripts" / "graph_docs_additions.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RESOURCE_ROWS = """# Do a thing
## Permissions

| Supported resource | Delegated (work or school account) | Delegated (personal Microsoft account) | Application |
|:-|:-|:-|:-|
| [event](../resources/event.md) | Calendars.ReadWrite | Calendars.ReadWrite | Calendars.ReadWrite |
| [message](../resources/message.md) | Mail.ReadWrite | Not supported. | Mail.ReadWrite |
| [user](../resources/user.md) | GroupMember.ReadWrite.All and User.ReadWrite.All | Not supported. | Not supported. |

## HTTP request
```http
DELETE /me/events/{id}/attachments/{id}
DELETE /users/{id | userPrincipalName}/messages/{id}/attachments/{id}
DELETE /groups/{id}/members/{id}/$ref
```
<!--
DELETE /groups/{id}/events/{id}/attachments/{id}
-->
## Request headers
"""

INCLUDED = """## Permissions
[!INCLUDE [permissions-table](../includes/permissions/thing-get-permissions.md)]

## HTTP request
```http
GET /things/{id}
```
"""

TABLE = """|Permission type|Least privileged permissions|Higher privileged permissions|
|:---|:---|:---|
|Delegated (work or school account)|Thing.Read.All|Thing.ReadWrite.All|
|Delegated (personal Microsoft account)|Not supported.|Not supported.|
|Application|Thing.Read.All|Thing.ReadWrite.All|"""


def test_resource_rows_pick_the_row_a_path_names_and_fail_closed_on_and() -> None:
    mod = _script()
    kind, rows = mod.table(RESOURCE_ROWS, None)
    assert kind == "resource-rows"
    reqs = mod.requests(RESOURCE_ROWS)
    assert ("DELETE", "/users/{id}/messages/{id}/attachments/{id}") in reqs
    assert all("/groups/{id}/events" not in p for _, p in reqs)  # commented out
    assert mod.permissions_for(kind, rows, "/me/events/{id}/attachments/{id}") == {
        "DelegatedWork": ["Calendars.ReadWrite"],
        "DelegatedPersonal": ["Calendars.ReadWrite"],
        "Application": ["Calendars.ReadWrite"],
    }
    assert mod.permissions_for(kind, rows, "/users/{id}/messages/{id}/attachments/{id}") == {
        "DelegatedWork": ["Mail.ReadWrite"],
        "Application": ["Mail.ReadWrite"],
    }
    # Members of a group: the row is the member's type, which no path names; and its cells are ANDs.
    assert mod.permissions_for(kind, rows, "/groups/{id}/members/{id}/$ref") == {}


def test_an_included_table_gives_the_least_mark(tmp_path: Path) -> None:
    mod = _script()
    api = tmp_path / "api-reference" / "v1.0" / "api"
    inc = tmp_path / "api-reference" / "v1.0" / "includes" / "permissions"
    api.mkdir(parents=True)
    inc.mkdir(parents=True)
    (api / "thing-get.md").write_text(INCLUDED)
    (inc / "thing-get-permissions.md").write_text(TABLE)
    (add,) = [a for a in mod.compile_pages(tmp_path, {}) if a["scheme"] == "DelegatedWork"]
    assert add["permissions"] == ["Thing.Read.All", "Thing.ReadWrite.All"]
    assert add["least"] == ["Thing.Read.All"]
    assert add["source"] == "https://learn.microsoft.com/graph/api/thing-get?view=graph-rest-1.0#permissions"


def test_the_shipped_addition_is_what_the_script_writes() -> None:
    doc = json.loads((ROOT / "src" / "ramscope" / "providers" / "data" / DOCS).read_text("utf-8"))
    assert doc["format"] == 1
    assert doc["additions"]
    for add in doc["additions"]:
        assert add["page"].startswith("api-reference/v1.0/api/")
        assert len(add["commit"]) == 40
        assert add["source"].startswith("https://learn.microsoft.com/graph/api/")


def _tiny_permissions() -> bytes:
    return orjson.dumps(
        {
            "permissions": {
                "Thing.Read.All": {
                    "schemes": {"DelegatedWork": {"adminDisplayName": "Read things", "requiresAdminConsent": True}},
                    "pathSets": [
                        {
                            "schemeKeys": ["DelegatedWork"],
                            "methods": ["GET"],
                            "paths": {"/things": "least=DelegatedWork"},
                        }
                    ],
                }
            }
        }
    )


def test_the_build_refuses_a_compiled_permission_the_data_does_not_define() -> None:
    docs = orjson.dumps(
        {"format": 1, "additions": [{"method": "GET", "paths": ["/things/{id}"], "scheme": "DelegatedWork",
                                     "permissions": ["Thing.Invented"], "source": "https://learn.microsoft.com/x"}]}
    )  # fmt: skip
    source = {"date": "2026-01-01", "commit": "0" * 40, "sha256": "0" * 64}
    with pytest.raises(ValueError, match=r"Thing\.Invented is not a DelegatedWork permission"):
        build_from(_tiny_permissions(), source, None, docs=docs)
    # Where permissions.json lists the scheme already, the compiled addition leaves it alone.
    docs_ok = orjson.dumps(
        {"format": 1, "additions": [{"method": "GET", "paths": ["/things"], "scheme": "DelegatedWork",
                                     "permissions": ["Thing.Read.All"], "source": "https://learn.microsoft.com/x"}]}
    )  # fmt: skip
    build_from(_tiny_permissions(), source, shipped_additions() and None, docs=docs_ok)


def test_the_catalog_carries_the_compiled_addition() -> None:
    cat = catalog("microsoft-graph")
    assert cat is not None
    assert cat.source["docs"]["file"].endswith(DOCS)
    hit = cat.lookup("GET", "/directory/deletedItems/microsoft.graph.user")
    assert hit is not None
    assert hit.least["microsoft-graph-application"] == ("https://graph.microsoft.com/User.Read.All",)
