"""Policy files: every key's effect on a real derivation, exactly, and every malformed file refused
with the file, the JSON pointer and what was expected. A policy is the one place a reviewer can make
ramscope pick something broader than the least privilege, so each such choice is tested."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope.derive.policy import Policy, SliceOptIn, load_policy, policy_from_dict
from ramscope.errors import PolicyError
from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def bank() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        yield _bank.serve_bank(srv)


def _derive(cli: Run, tmp_path: Path, bank: str, policy: str, *accesses: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    card = _bank.write(tmp_path / "card.json", _bank.card(bank, *accesses))
    pfile = tmp_path / "policy.toml"
    pfile.write_text(policy, "utf-8")
    code, out, _ = cli("--allow-private-network", "--policy", str(pfile), "derive", str(card))
    return code, json.loads(out)


# --------------------------------------------------------------------------- effects


def test_prefer_picks_a_broader_scope_and_says_so(cli: Run, tmp_path: Path, bank: str) -> None:
    """Alone, getBalance gets accounts.read (the name breaks the tie); prefer makes it overview.read."""
    code, report = _derive(cli, tmp_path, bank, 'prefer = ["overview.read"]\n', _bank.access("a", "getBalance"))
    (a,) = report["accesses"]
    assert code == 0
    assert a["scopes"] == ["overview.read"]
    assert a["policy"] == [{"effect": "preferred", "scopes": ["overview.read"]}]
    assert report["policy"]["prefer"] == ["overview.read"]


def test_prefer_that_matches_every_alternative_changes_nothing(cli: Run, tmp_path: Path, bank: str) -> None:
    code, report = _derive(cli, tmp_path, bank, 'prefer = ["*.read"]\n', _bank.access("a", "getBalance"))
    (a,) = report["accesses"]
    assert (code, a["scopes"], a["policy"]) == (0, ["accounts.read"], [])


def test_exclude_removes_one_alternative(cli: Run, tmp_path: Path, bank: str) -> None:
    code, report = _derive(cli, tmp_path, bank, 'exclude = ["accounts.*"]\n', _bank.access("a", "getBalance"))
    (a,) = report["accesses"]
    assert (code, a["scopes"]) == (0, ["overview.read"])
    assert a["policy"] == [{"effect": "excluded", "scopes": ["accounts.read"], "rule": "accounts.*"}]


def test_excluding_every_alternative_never_gives_something_else(cli: Run, tmp_path: Path, bank: str) -> None:
    """The documented promise: the access is incomplete (exit 3), not silently given another scope."""
    code, report = _derive(
        cli, tmp_path, bank, 'exclude = ["accounts.read", "overview.read"]\n', _bank.access("a", "getBalance")
    )
    (a,) = report["accesses"]
    assert code == 3
    assert (a["complete"], a["scopes"], a["reason"]) == (False, None, "all-alternatives-excluded")
    assert a["reason_message"] == "every alternative of the operation is excluded by the policy"
    assert [e["effect"] for e in a["policy"]] == ["excluded", "excluded"]
    assert report["tiers"]["REQUIRED"]["complete"] is False


def test_an_access_pin_beats_an_operation_pin(cli: Run, tmp_path: Path, bank: str) -> None:
    policy = (
        '[[pin]]\noperation = "op-a"\nscopes = ["accounts.read"]\nreason = "op"\n'
        '[[pin]]\naccess = "a"\nscopes = ["overview.read"]\nreason = "access"\n'
    )
    code, report = _derive(cli, tmp_path, bank, policy, _bank.access("a", "getBalance"))
    (a,) = report["accesses"]
    assert (code, a["scopes"], a["choice"]["method"]) == (0, ["overview.read"], "pinned")
    assert a["policy"] == [{"effect": "pinned", "scopes": ["overview.read"], "reason": "access"}]


def test_a_pin_that_matches_nothing_is_reported(cli: Run, tmp_path: Path, bank: str) -> None:
    code, report = _derive(
        cli, tmp_path, bank, '[[pin]]\naccess = "nobody"\nscopes = []\n', _bank.access("a", "getBalance")
    )
    assert code == 0
    assert "policy-pin-unused" in [d["code"] for d in report["diagnostics"]]


# --------------------------------------------------------------------------- the model


def test_defaults() -> None:
    p = policy_from_dict({})
    assert p == Policy()
    assert p.excludes == ("*/auth/*.addons.*",)
    assert p.to_dict() == {"source": "<policy>", "exclude": ["*/auth/*.addons.*"], "prefer": [], "pins": []}


def test_use_default_excludes_false_drops_the_builtin_list() -> None:
    assert policy_from_dict({"use_default_excludes": False, "exclude": ["x"]}).excludes == ("x",)


def test_slices_and_admin_round_trip_in_to_dict() -> None:
    p = policy_from_dict(
        {
            "allow_admin": True,
            "slice": [{"access": "a", "scopes": ["*/drive.file"], "reason": "opened files only"}],
            "catalogs": {"accounts": "personal"},
        }
    )
    assert p.slices == (SliceOptIn(("*/drive.file",), access="a", reason="opened files only"),)
    assert p.slice_opted("a", "r", "https://www.googleapis.com/auth/drive.file")
    assert not p.slice_opted("b", "r", "https://www.googleapis.com/auth/drive.file")
    assert p.to_dict()["allow_admin"] is True
    assert p.to_dict()["slices"] == [{"access": "a", "reason": "opened files only", "scopes": ["*/drive.file"]}]
    assert p.to_dict()["catalogs"] == {"accounts": "personal", "resources": {}}


def test_a_resource_slice_applies_to_every_access_of_the_resource() -> None:
    p = policy_from_dict({"slice": [{"resource": "drive", "scopes": ["*drive.file"]}]})
    assert p.slice_opted("any", "drive", "https://www.googleapis.com/auth/drive.file")
    assert not p.slice_opted("any", "sheets", "https://www.googleapis.com/auth/drive.file")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("doc", "pointer", "message"),
    [
        ({"excludes": []}, "/excludes", "unknown key 'excludes'; expected one of"),
        ({"version": 2}, None, "policy version 2 is not supported (expected 1)"),
        ({"exclude": "x"}, "/exclude", "expected an array of non-empty strings (glob patterns)"),
        ({"exclude": [""]}, "/exclude", "expected an array of non-empty strings (glob patterns)"),
        ({"prefer": [1]}, "/prefer", "expected an array of non-empty strings (glob patterns)"),
        ({"use_default_excludes": "yes"}, "/use_default_excludes", "expected true or false"),
        ({"allow_admin": 1}, "/allow_admin", "expected true or false"),
        ({"pin": {}}, "/pin", "expected an array of tables ([[pin]])"),
        ({"pin": ["x"]}, "/pin/0", "expected a table"),
        ({"pin": [{"access": "a", "scopes": [], "why": ""}]}, "/pin/0/why", "unknown key 'why'"),
        (
            {"pin": [{"access": "a", "operation": "o", "scopes": []}]},
            "/pin/0",
            "exactly one of 'access' or 'operation'",
        ),
        ({"pin": [{"scopes": []}]}, "/pin/0", "exactly one of 'access' or 'operation'"),
        ({"pin": [{"access": 1, "scopes": []}]}, "/pin/0/access", "expected a string"),
        ({"pin": [{"access": "a", "reason": ["r"], "scopes": []}]}, "/pin/0/reason", "expected a string"),
        ({"pin": [{"access": "a"}]}, "/pin/0/scopes", "expected an array of non-empty strings"),
        ({"pin": [{"access": "a", "scopes": [""]}]}, "/pin/0/scopes", "expected an array of non-empty strings"),
        ({"slice": {}}, "/slice", "expected an array of tables ([[slice]])"),
        ({"slice": [1]}, "/slice/0", "expected a table"),
        ({"slice": [{"access": "a", "scopes": ["x"], "op": 1}]}, "/slice/0/op", "unknown key 'op'"),
        ({"slice": [{"access": "a", "resource": "r", "scopes": ["x"]}]}, "/slice/0", "exactly one of"),
        ({"slice": [{"access": "a", "scopes": []}]}, "/slice/0/scopes", "expected a non-empty array"),
        ({"slice": [{"access": 2, "scopes": ["x"]}]}, "/slice/0/access", "expected a string"),
        ({"catalogs": []}, "/catalogs", "expected a table ([catalogs])"),
        ({"catalogs": {"account": "work"}}, "/catalogs/account", "unknown key 'account'"),
        ({"catalogs": {"accounts": "school"}}, "/catalogs/accounts", 'expected "work" or "personal"'),
        ({"catalogs": {"resources": []}}, "/catalogs/resources", "expected a table of resource id = catalog name"),
        ({"catalogs": {"resources": {"r": "okta"}}}, "/catalogs/resources/r", "unknown catalog 'okta'"),
    ],
)
def test_every_malformed_policy_names_where_and_what(doc: dict[str, Any], pointer: str | None, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        policy_from_dict(doc, source="p.toml")
    assert info.value.pointer == pointer
    assert info.value.source == "p.toml"
    assert message in info.value.detail


def test_invalid_toml_and_utf8_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("exclude = [\n", "utf-8")
    with pytest.raises(PolicyError, match="invalid TOML"):
        load_policy(bad)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'reason = "caf\xe9"\n')
    with pytest.raises(PolicyError, match="is not valid UTF-8"):
        load_policy(latin)


def test_the_cli_says_one_line_and_exits_2_for_a_bad_policy(cli: Run, tmp_path: Path, bank: str) -> None:
    card = _bank.write(tmp_path / "card.json", _bank.card(bank, _bank.access("a", "getBalance")))
    pfile = tmp_path / "policy.toml"
    pfile.write_text('[[pin]]\naccess = "a"\noperation = "o"\nscopes = []\n', "utf-8")
    code, out, err = cli("--allow-private-network", "--policy", str(pfile), "derive", str(card))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert str(pfile) in err
    assert "/pin/0" in err
