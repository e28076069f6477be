"""`ramscope fetch CARD...`: which specs a card names, the summary table, exit codes, batch inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ramscope.card import load_card
from ramscope.cli import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, main
from ramscope.manifest import InteractionProtocol
from ramscope.specs.model import SpecKind
from ramscope.store import spec_refs
from tests.support.httpserver import LocalHTTPServer

SPEC = b'{"openapi": "3.0.0", "paths": {}}'


def _card(resources: list[dict[str, Any]], operations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"resources": resources, "operations": operations or [], "resource_accesses": []}


def _rest(rid: str, url: str, protocol: str = "REST") -> dict[str, Any]:
    return {"id": rid, "interaction_protocol": protocol, "owner": "CONSUMER", "spec": {"spec_url": url}}


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_spec_refs_collect_resources_and_operation_specs(tmp_path: Path) -> None:
    """URLs come from resources and api_operation_spec, with kind hints from the protocol, each once."""
    doc = _card(
        [
            _rest("a", "https://x.test/openapi.json"),
            _rest("m", "https://x.test/mcp", "MCP"),
            _rest("g", "https://agent.test/.well-known/agent-card.json", "A2A"),
            _rest("b", "https://x.test/openapi.json"),
        ],
        [
            {
                "id": "op",
                "resource": "a",
                "api_operation_spec": {"spec_url": "https://x.test/v2.json", "http_method": "GET"},
            }
        ],
    )
    refs = spec_refs([load_card(_write(tmp_path, "c.json", doc))])
    assert [(r.url, r.kind, r.protocol) for r in refs] == [
        ("https://x.test/openapi.json", None, InteractionProtocol.REST),
        ("https://x.test/mcp", SpecKind.MCP, InteractionProtocol.MCP),
        ("https://agent.test/.well-known/agent-card.json", SpecKind.A2A, InteractionProtocol.A2A),
        ("https://x.test/v2.json", None, InteractionProtocol.REST),
    ]
    assert refs[0].users == (f"{tmp_path / 'c.json'}#a", f"{tmp_path / 'c.json'}#b")


def test_fetch_fills_the_cache_and_prints_a_table(
    server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All specs fetched: exit 0, one table row per URL with kind, bytes, origin and status."""
    server.route("/one.json", body=SPEC)
    server.route("/two.json", body=SPEC * 2)
    card = _write(
        tmp_path, "card.json", _card([_rest("one", server.url("/one.json")), _rest("two", server.url("/two.json"))])
    )
    cache = tmp_path / "cache"
    code, out, err = _run(capsys, "--allow-private-network", "--cache-dir", str(cache), "fetch", str(card))
    assert code == EXIT_OK, err
    for header in ("url", "kind", "bytes", "origin", "status"):
        assert header in out
    assert server.url("/one.json") in out
    assert server.url("/two.json") in out
    assert f"{len(SPEC * 2):,}" in out
    assert out.count("network") == 2
    assert out.count(" ok ") == 2
    assert "\x1b[" not in out  # no colour when piped
    code, out, _ = _run(capsys, "--offline", "--allow-private-network", "--cache-dir", str(cache), "fetch", str(card))
    assert code == EXIT_OK
    assert out.count("cache") == 2
    assert server.hits("/one.json") == 1


def test_any_failure_exits_3_and_says_what_failed(
    server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 404, a blocked URL and an MCP endpoint without a fetcher each get a status; the exit code is 3."""
    server.route("/ok.json", body=SPEC)
    card = _write(
        tmp_path,
        "card.json",
        _card(
            [
                _rest("ok", server.url("/ok.json")),
                _rest("missing", server.url("/missing.json")),
                _rest("mcp", server.url("/mcp"), "MCP"),
            ]
        ),
    )
    code, out, err = _run(
        capsys, "--allow-private-network", "--cache-dir", str(tmp_path / "c"), "fetch", "--no-progress", str(card)
    )
    assert code == EXIT_INCOMPLETE
    assert "fetch-failed: HTTP 404" in out
    assert "fetch-failed: MCP initialize: HTTP 404" in out
    assert "2 of 3 specs could not be fetched" in err
    assert "Traceback" not in err

    metadata = _write(tmp_path, "meta.json", _card([_rest("meta", "http://169.254.169.254/latest/meta-data/")]))
    code, out, _ = _run(capsys, "--cache-dir", str(tmp_path / "c2"), "fetch", str(metadata))
    assert code == EXIT_INCOMPLETE
    assert "url-blocked: refused: 169.254.169.254" in out


def test_strangers_strings_are_escaped_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Control characters and rich markup in a card's URL are shown escaped, never interpreted."""
    url = "https://x.test/[bold red]spec[/]\u202e.json"
    card = _write(tmp_path, "card.json", _card([_rest("evil", url)]))
    code, out, _ = _run(capsys, "--offline", "--cache-dir", str(tmp_path / "c"), "fetch", str(card))
    assert code == EXIT_INCOMPLETE
    assert "\u202e" not in out
    assert "\\u202e" in out
    assert "[bold red]spec[/]" in out


def test_directories_and_globs_are_expanded(
    server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CARD may be a directory (cards inside, recursively) or a glob; a URL shared by cards is fetched once."""
    server.route("/shared.json", body=SPEC)
    cards = tmp_path / "cards"
    (cards / "sub").mkdir(parents=True)
    _write(cards, "a.json", _card([_rest("a", server.url("/shared.json"))]))
    _write(cards / "sub", "b.json", _card([_rest("b", server.url("/shared.json"))]))
    (cards / "notes.txt").write_text("not a card")
    code, out, _ = _run(capsys, "--allow-private-network", "--cache-dir", str(tmp_path / "c"), "fetch", str(cards))
    assert code == EXIT_OK
    assert out.count(server.url("/shared.json")) == 1
    assert server.hits("/shared.json") == 1
    code, _, _ = _run(
        capsys, "--allow-private-network", "--cache-dir", str(tmp_path / "c"), "fetch", f"{cards}/**/*.json"
    )
    assert code == EXIT_OK


def test_unreadable_inputs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing card, an empty glob or --record without --cassette are usage errors (exit 2), no traceback."""
    code, _, err = _run(capsys, "fetch", str(tmp_path / "nope.json"))
    assert code == EXIT_USAGE
    assert "no such file" in err
    code, _, err = _run(capsys, "fetch", str(tmp_path / "*.json"))
    assert code == EXIT_USAGE
    assert "no file matches" in err
    with pytest.raises(SystemExit) as info:
        main(["--record", "fetch", str(tmp_path / "x.json")])
    assert info.value.code == EXIT_USAGE


def test_cards_without_spec_urls_fetch_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A card naming no specs is not a failure."""
    card = _write(tmp_path, "card.json", _card([]))
    code, out, err = _run(capsys, "--cache-dir", str(tmp_path / "c"), "fetch", str(card))
    assert code == EXIT_OK
    assert out == ""
    assert "nothing to fetch" in err


def test_record_and_replay_through_the_cli(
    server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--cassette FILE --record writes the run; --cassette FILE replays it with the server gone."""
    server.route("/spec.json", body=SPEC)
    card = _write(tmp_path, "card.json", _card([_rest("s", server.url("/spec.json"))]))
    tape = tmp_path / "tape.yaml"
    common = ["--allow-private-network", "--cassette", str(tape)]
    code, _, err = _run(capsys, *common, "--record", "--cache-dir", str(tmp_path / "c1"), "fetch", str(card))
    assert code == EXIT_OK, err
    server.stop()
    code, out, err = _run(capsys, *common, "--cache-dir", str(tmp_path / "c2"), "fetch", str(card))
    assert code == EXIT_OK, err
    assert "cassette" in out
