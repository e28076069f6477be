"""`derive`, `scopes`, `consent`, `diff` as users and CI call them: outputs, files and exit codes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.errors import InputError
from ramscope.schema import load_schema
from tests.support.httpserver import LocalHTTPServer

GMAIL = "https://www.googleapis.com/auth/gmail."


@pytest.fixture(scope="module")
def gmail_server(discovery_documents: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/gmail.json", body=(discovery_documents / "gmail.v1.json").read_bytes())
        srv.route("/drive.json", body=(discovery_documents / "drive.v3.json").read_bytes())
        srv.route("/gone.json", status=503, body=b"down")
        yield srv


def _card(server: LocalHTTPServer, *ops: tuple[str, str, str], evil: str = "") -> dict[str, Any]:
    """A card with one access per (route, operation id, necessity)."""
    resources, operations, accesses = [], [], []
    for i, (route, op_id, necessity) in enumerate(ops):
        resources.append(
            {
                "id": f"r{i}",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": f"Service {i}{evil}",
                "spec": {"spec_url": server.url(route)},
            }
        )
        operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": {"operation_id": op_id}})
        accesses.append(
            {
                "id": f"a{i}",
                "operation": f"o{i}",
                "identity_used": "END_USER",
                "necessity": necessity,
                "confirmation_required": i == 0,
                "access_justification": f"To do thing {i}.{evil}",
            }
        )
    return {
        "name": "CLI agent",
        "description": "An agent for CLI tests",
        "resourceAccessManifest": {"resources": resources, "operations": operations, "resource_accesses": accesses},
    }


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, Any], Path]:
    def w(name: str, doc: Any) -> Path:
        p = tmp_path / name
        p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, "utf-8")
        return p

    return w


def test_derive_prints_the_report(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """One card: one pretty JSON report on stdout, valid against the published schema, exit 0."""
    path = write("c.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED")))
    code, out, _ = cli("derive", str(path))
    assert code == 0
    report = json.loads(out)
    jsonschema.Draft202012Validator(load_schema("report")).validate(report)
    assert report["accesses"][0]["scopes"] == [GMAIL + "send"]
    assert report["specs"][0]["origin"] == "network"


def test_derive_writes_atomically(cli: Any, write: Any, gmail_server: LocalHTTPServer, tmp_path: Path) -> None:
    """-o writes the report through a temporary file: the target appears complete, nothing else remains."""
    path = write("c.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED")))
    out_file = tmp_path / "out" / "report.json"
    out_file.parent.mkdir()
    code, out, _ = cli("derive", str(path), "-o", str(out_file))
    assert (code, out) == (0, "")
    assert json.loads(out_file.read_text())["report_version"] == 1
    assert [p.name for p in out_file.parent.iterdir()] == ["report.json"]


def test_derive_batch_is_json_lines(cli: Any, write: Any, gmail_server: LocalHTTPServer, tmp_path: Path) -> None:
    """A directory of cards gives one compact report per line; an unreadable card is named, exit 2."""
    d = tmp_path / "cards"
    d.mkdir()
    (d / "a.json").write_text(json.dumps(_card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED"))))
    (d / "b.json").write_text(json.dumps(_card(gmail_server, ("/drive.json", "drive.files.create", "REQUIRED"))))
    (d / "c.json").write_text("{not json")
    code, out, err = cli("derive", str(d))
    lines = out.splitlines()
    assert len(lines) == 2
    assert [json.loads(line)["card"]["source"] for line in lines] == [str(d / "a.json"), str(d / "b.json")]
    assert f"{d / 'c.json'}:1:2: invalid JSON" in err
    assert code == 2


def test_derive_exit_codes(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """Invalid card: 1 (report still printed). Unreachable spec: 3, with nulls, never empty lists."""
    bad = _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED"))
    bad["resourceAccessManifest"]["resource_accesses"][0]["necessity"] = "SOMETIMES"
    code, out, _ = cli("derive", str(write("bad.json", bad)))
    assert code == 1
    assert json.loads(out)["card"]["valid"] is False
    code, out, _ = cli("derive", str(write("down.json", _card(gmail_server, ("/gone.json", "x.y", "REQUIRED")))))
    assert code == 3
    acc = json.loads(out)["accesses"][0]
    assert (acc["status"], acc["scopes"], acc["requirements"]) == ("unresolved", None, None)


def test_derive_text(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """--format text shows each access and the cumulative tiers, readable, no escape codes when piped."""
    path = write("c.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED")))
    code, out, _ = cli("derive", "--format", "text", str(path))
    assert code == 0
    assert "gmail.send" in out
    assert "cumulative tiers" in out
    assert "\x1b" not in out


def test_scopes_prints_one_per_line(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """`scopes` prints the cumulative tier's scopes, sorted, and nothing else."""
    path = write(
        "c.json",
        _card(
            gmail_server,
            ("/gmail.json", "gmail.users.messages.send", "REQUIRED"),
            ("/drive.json", "drive.files.get", "OPTIONAL"),
        ),
    )
    code, out, err = cli("scopes", "--tier", "required", str(path))
    assert (code, out, err) == (0, GMAIL + "send\n", "")
    code, out, _ = cli("scopes", str(path), "--identity", "end_user")
    assert out.splitlines() == sorted(out.splitlines())
    assert len(out.splitlines()) == 2
    code, out, err = cli("scopes", str(path), "--identity", "agent")
    assert (code, out, err) == (0, "", "")


def test_scopes_incomplete_warns_and_exits_3(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """Known scopes are printed, the gap is said on stderr, and the exit code says incomplete."""
    path = write(
        "c.json",
        _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED"), ("/gone.json", "x", "REQUIRED")),
    )
    code, out, err = cli("scopes", str(path))
    assert code == 3
    assert out == GMAIL + "send\n"
    assert "incomplete" in err
    assert "a1" in err


def test_consent_formats_and_escaping(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """Consent data in JSON, Markdown and HTML; strangers' text never becomes markup or escapes."""
    evil = " <script>alert(1)</script> [click](javascript:x) \x1b[31m\u202egnp.exe"
    path = write("c.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED"), evil=evil))
    code, out, _ = cli("consent", str(path))
    data = json.loads(out)
    assert code == 0
    (res,) = data["resources"]
    assert res["permissions"][0]["scope"] == GMAIL + "send"
    assert res["permissions"][0]["description"] == "Send email on your behalf"
    assert res["accesses"][0]["confirmation_required"] is True
    _, md, _ = cli("consent", "--format", "markdown", str(path))
    assert "<script>" not in md
    assert re.search(r"(?<!\\)\]\(javascript", md) is None  # the bracket is escaped: no link
    assert "\\[click\\](javascript\\:x)" in md
    assert "\x1b" not in md
    assert "\u202e" not in md
    _, html, _ = cli("consent", "--format", "html", str(path))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "Content-Security-Policy" in html
    assert "\u202e" not in html
    assert "http://" not in html.replace("http-equiv", "")  # no external assets


def test_diff_reports_new_permissions(cli: Any, write: Any, gmail_server: LocalHTTPServer, tmp_path: Path) -> None:
    """A new version that asks for more exits 4 and says what; an identical one exits 0."""
    old = write("old.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED")))
    new = write(
        "new.json",
        _card(
            gmail_server,
            ("/gmail.json", "gmail.users.messages.send", "REQUIRED"),
            ("/drive.json", "drive.files.get", "RECOMMENDED"),
        ),
    )
    code, out, _ = cli("diff", str(old), str(new))
    d = json.loads(out)
    assert code == 4
    assert d["new_permissions"] is True
    assert d["tiers"]["REQUIRED"]["END_USER"]["added_scopes"] == []
    assert d["tiers"]["RECOMMENDED"]["END_USER"]["added_scopes"]
    assert d["accesses"]["added"] == ["a1"]
    code, out, _ = cli("diff", "--format", "text", str(old), str(new))
    assert code == 4
    assert out.splitlines()[-1] == "new permissions needed"
    # A saved report is accepted in place of a card (the reviewer's workflow).
    saved = tmp_path / "old-report.json"
    assert cli("derive", str(old), "-o", str(saved))[0] == 0
    assert cli("diff", str(saved), str(old))[0] == 0


def test_schema_report(cli: Any) -> None:
    """`schema report` prints the report's JSON Schema."""
    code, out, _ = cli("schema", "report")
    assert code == 0
    jsonschema.Draft202012Validator.check_schema(json.loads(out))


def test_bad_policy_is_a_usage_error(cli: Any, write: Any, gmail_server: LocalHTTPServer) -> None:
    """A malformed policy file is named with the offending key; exit 2, no traceback."""
    path = write("c.json", _card(gmail_server, ("/gmail.json", "gmail.users.messages.send", "REQUIRED")))
    policy = write("p.toml", '[[pin]]\naccess = "a0"\nscopes = "gmail.send"\n')
    code, out, err = cli("--policy", str(policy), "derive", str(path))
    assert (code, out) == (2, "")
    assert "p.toml (at /pin/0/scopes): expected an array" in err


def test_scopes_mentions_credentials_on_stderr(cli: Any, tmp_path: Path) -> None:
    """A tier that needs a credential other than a scope (an API key) says so on stderr; stdout stays scopes only."""
    root = Path(__file__).resolve().parent.parent
    code, out, err = cli(
        "--offline",
        "--cassette",
        str(root / "cassettes" / "travel-agent.yaml"),
        "--policy",
        str(root / "examples" / "travel-agent.policy.toml"),
        "scopes",
        "--identity",
        "agent",
        str(root / "examples" / "travel-agent.card.json"),
    )
    assert (code, out) == (0, "")
    assert "also needs credentials that are not OAuth scopes: mcp-api-key (apiKey)" in err


def test_a_directory_gives_its_card_files_in_order(tmp_path: Path) -> None:
    """Nested directories are walked; only .json/.yaml/.yml files are cards; a symlinked file is
    taken, a symlinked directory is not entered (no loops); the paths read as the argument wrote them."""
    from ramscope._io import expand_card_args

    root = tmp_path / "cards"
    (root / "b" / "deeper").mkdir(parents=True)
    for name in ("a.json", "b/c.YAML", "b/deeper/d.yml", "notes.txt", "b/e.toml"):
        (root / name).write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.json").write_text("{}")
    (root / "link.json").symlink_to(elsewhere / "x.json")
    (root / "loop").symlink_to(root)
    (root / "outside").symlink_to(elsewhere)
    got = expand_card_args([f"{root}/./", str(root / "a.json")])
    assert got == [f"{root}/{n}" for n in ("a.json", "b/c.YAML", "b/deeper/d.yml", "link.json")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no"):
        expand_card_args([str(tmp_path / "empty")])
