"""Policy ``available``: the scopes the app's OAuth client is approved to request. Picks only among
them; a slice permission it lists counts as opted in (its condition stated); an access nothing
available can do is incomplete (``not-available``, exit 3) naming the least permission that would do
and what it costs. On Google's real Discovery documents and the shipped universe."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, load_policy, policy_from_dict
from ramscope.errors import PolicyError
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.test_costs_report import google_card

AUTH = "https://www.googleapis.com/auth/"
INSERT = {"add-event": ("calendar.v3", "calendar.events.insert", "REQUIRED")}
CREATE = {"save-file": ("drive.v3", "drive.files.create", "REQUIRED")}


@pytest.fixture(scope="module")
def server(discovery_documents: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        for doc in ("calendar.v3", "drive.v3"):
            srv.route(f"/{doc}.json", body=(discovery_documents / f"{doc}.json").read_bytes())
        yield srv


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("available")


def derive(server: LocalHTTPServer, cache: Path, accesses: dict[str, tuple[str, str, str]], policy: Policy) -> Report:
    with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30, reuse=False), policy=policy) as e:
        return e.derive(google_card(server, accesses))


def test_nothing_available_does_the_job_is_not_available_naming_the_least(server: LocalHTTPServer, cache: Path) -> None:
    policy = policy_from_dict({"available": [AUTH + "calendar.events.readonly"]})
    report = derive(server, cache, INSERT, policy)
    (a,) = report.accesses
    assert not a.complete
    assert a.reason == "not-available"
    assert a.scopes is None
    assert f"{AUTH}calendar.events (google: sensitive, triggers google-verification)" in (a.reason_message or "")
    (needed,) = [e for e in a.policy if e["effect"] == "not-available" and "needed" in e]
    assert needed["needed"]["scopes"] == [AUTH + "calendar.events"]
    assert needed["needed"]["costs"][0]["class"] == "sensitive"
    assert report.exit_code == 3
    assert report.tiers["REQUIRED"].identities["END_USER"].incomplete_accesses == ["add-event"]


def test_picks_only_among_what_is_available(server: LocalHTTPServer, cache: Path) -> None:
    """With only the broad calendar scope approved, it is the pick (reach is ranked among what the app may ask)."""
    policy = policy_from_dict({"available": [AUTH + "calendar", AUTH + "calendar.events.readonly"]})
    (a,) = derive(server, cache, INSERT, policy).accesses
    assert a.complete
    assert a.scopes == [AUTH + "calendar"]
    assert any(e["effect"] == "not-available" and AUTH + "calendar.events" in e["scopes"] for e in a.policy)
    listed = {tuple(x["scopes"]): x.get("available") for x in a.alternatives or []}
    assert listed[(AUTH + "calendar.events",)] is False
    assert listed[(AUTH + "calendar",)] is None


def test_a_slice_the_policy_makes_available_counts_as_opted_in(server: LocalHTTPServer, cache: Path) -> None:
    """drive.files.list: drive.file (only files the app opened) is offered, not picked, unless opted in."""
    listing = {"list-files": ("drive.v3", "drive.files.list", "REQUIRED")}
    (plain,) = derive(server, cache, listing, Policy()).accesses
    assert plain.scopes == [AUTH + "drive.readonly"]
    policy = policy_from_dict({"available": [AUTH + "drive.file"]})
    (a,) = derive(server, cache, listing, policy).accesses
    assert a.complete
    assert a.scopes == [AUTH + "drive.file"]
    (e,) = [e for e in a.policy if e["effect"] == "available-slice"]
    assert e["scopes"] == [AUTH + "drive.file"]
    assert e["condition"]


def test_available_per_provider_leaves_other_servers_alone(server: LocalHTTPServer, cache: Path) -> None:
    policy = policy_from_dict({"available": {"slack": ["chat:write"]}})
    (a,) = derive(server, cache, CREATE, policy).accesses
    assert a.scopes == [AUTH + "drive.file"]
    google = policy_from_dict({"available": {"google": [AUTH + "drive.file"]}})
    (b,) = derive(server, cache, CREATE, google).accesses
    assert b.scopes == [AUTH + "drive.file"]


def test_available_from_a_file_and_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "approved.txt").write_text(
        f"# our client\n{AUTH}calendar.events.readonly\n\n{AUTH}drive.file  # docs\n"
    )
    (tmp_path / "p.toml").write_text('available = "approved.txt"\n')
    p = load_policy(tmp_path / "p.toml")
    assert p.available == (("*", (AUTH + "calendar.events.readonly", AUTH + "drive.file")),)
    assert p.to_dict()["available"] == {"*": [AUTH + "calendar.events.readonly", AUTH + "drive.file"]}
    assert p.is_available("https://accounts.google.com", AUTH + "drive.file")
    assert not p.is_available("https://accounts.google.com", AUTH + "drive")


@pytest.mark.parametrize(
    ("doc", "pointer"),
    [
        ({"available": [""]}, "/available"),
        ({"available": 3}, "/available"),
        ({"available": {"nosuch": ["x"]}}, "/available/nosuch"),
        ({"available": "missing-file.txt"}, "/available"),
    ],
)
def test_a_bad_available_is_a_policy_error(doc: dict[str, object], pointer: str) -> None:
    with pytest.raises(PolicyError) as info:
        policy_from_dict(doc, source="p.toml")
    assert info.value.pointer == pointer


def test_cli_exits_three_with_not_available(
    server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    card = tmp_path / "card.json"
    card.write_text(json.dumps(google_card(server, INSERT)))
    policy = tmp_path / "p.toml"
    policy.write_text(f'available = ["{AUTH}calendar.events.readonly"]\n')
    code = main(["--allow-private-network", "--cache-dir", str(tmp_path / "c"), "--policy", str(policy),
                 "derive", str(card)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3
    doc = json.loads(out)
    assert doc["accesses"][0]["reason"] == "not-available"
    assert "calendar.events (google: sensitive" in err


def test_graph_permissions_may_be_listed_by_short_name() -> None:
    p = policy_from_dict({"available": {"microsoft-graph": ["Mail.Read"]}})
    assert p.is_available("https://login.microsoftonline.com", "https://graph.microsoft.com/Mail.Read")
    assert not p.is_available("https://login.microsoftonline.com", "https://graph.microsoft.com/Mail.ReadWrite")
    # Google's server is not named by this list: unconstrained.
    assert p.is_available("https://accounts.google.com", AUTH + "drive")


def test_a_not_available_report_validates_against_its_schema(server: LocalHTTPServer, cache: Path) -> None:
    import jsonschema

    from ramscope.schema import load_schema

    policy = policy_from_dict({"available": [AUTH + "calendar.events.readonly", AUTH + "drive.file"]})
    report = derive(server, cache, {**INSERT, **CREATE}, policy)
    jsonschema.Draft202012Validator(load_schema("report")).validate(report.to_dict())
    assert [a.reason for a in report.accesses] == ["not-available", None]


def test_an_empty_available_list_makes_every_scope_unavailable() -> None:
    p = policy_from_dict({"available": []})
    assert p.available == (("*", ()),)
    assert not p.is_available("https://accounts.google.com", AUTH + "drive.file")
