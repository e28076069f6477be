"""Issue 30, items 3, 4 and 11, through `audit` and `draft` as a user runs them.

4: an entry whose URL or one header name was over 64 KiB, or whose method was an extension method
(`UPLOAD-V2`), was skipped whole: `evidence-skipped`, exit 0 instead of 6 (HAR and OTLP). Now such an
entry is still a call to its host (read in part, never matched): exit 6 where it is undeclared; only an
entry with no readable host is skipped, and that makes `audit` fail closed too (exit 6).
11: `undeclared-host` findings were uncapped (200,000 hosts, 200,000 findings): now 1,000 and a count.
3: no output format of `audit` (text, json, sarif) nor stderr of `draft` shows a secret of a URL path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import main
from ramscope.config import Settings
from ramscope.evidence import audit, draft
from tests.adversarial.hostile import card_doc, dumps, manifest, openapi
from tests.support.httpserver import LocalHTTPServer

API = "https://api.items.example"
BIG = 70_000
TELEGRAM_SECRET = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        doc = openapi(servers=[{"url": API}])
        doc["paths"]["/bot{token}/sendMessage"] = {"post": {"operationId": "send", "responses": {}}}
        srv.route("/openapi.json", body=dumps(doc))
        yield srv.url("/openapi.json")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=10)


@pytest.fixture
def card(tmp_path: Path, served: str) -> Path:
    p = tmp_path / "agent.card.json"
    p.write_text(json.dumps(card_doc(manifest(served))))
    return p


def _har(path: Path, *requests: dict[str, Any]) -> Path:
    entries = [{"startedDateTime": "2026-12-01T10:00:00Z", "request": r, "response": {"status": 200}} for r in requests]
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t"}, "entries": entries}}))
    return path


def _req(method: str, url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"method": method, "url": url, "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()]}


def _otlp(path: Path, *spans: tuple[str, str]) -> Path:
    def attr(k: str, v: str) -> dict[str, Any]:
        return {"key": k, "value": {"stringValue": v}}

    s = [{"kind": 3, "attributes": [attr("http.request.method", m), attr("url.full", u)]} for m, u in spans]
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": s}]}]}) + "\n")
    return path


def _codes(result: Any) -> list[str]:
    return sorted(d.code for d in result.diagnostics if d.code != "unused-access")


def test_the_declared_call_alone_passes(tmp_path: Path, card: Path, settings: Settings) -> None:
    """The baseline the other cases differ from by one entry."""
    ev = _har(tmp_path / "ok.har", _req("GET", f"{API}/items"))
    result = audit(card, [ev], settings=settings)
    assert (result.exit_code, _codes(result)) == (0, [])


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (_req("GET", f"{API}/items/" + "a" * BIG), "undeclared-call"),
        (_req("UPLOAD-V2", f"{API}/items"), "undeclared-call"),
        (_req("GET", "https://collector.evil.example/x/" + "a" * BIG), "undeclared-host"),
        (_req("UPLOAD-V2", "https://collector.evil.example/x"), "undeclared-host"),
        (_req("GET", "https://collector.evil.example/x", {"X-" + "h" * BIG: "1"}), "undeclared-host"),
        (_req("G E T", "https://collector.evil.example/x"), "undeclared-host"),
        (_req("GET", "/exfil", {"Host": "collector.evil.example"}), "undeclared-host"),
    ],
    ids=["long-url", "extension-method", "long-url-host", "extension-host", "long-header", "bad-method", "host-hdr"],
)
def test_an_entry_not_read_whole_still_counts_for_its_host(
    tmp_path: Path, card: Path, settings: Settings, request_: dict[str, Any], code: str
) -> None:
    ev = _har(tmp_path / "s.har", _req("GET", f"{API}/items"), request_)
    result = audit(card, [ev], settings=settings)
    assert result.exit_code == 6
    assert code in _codes(result)
    assert result.calls == 2


def test_otlp_spans_not_read_whole_count_for_their_host(tmp_path: Path, card: Path, settings: Settings) -> None:
    ev = _otlp(
        tmp_path / "t.jsonl",
        ("GET", f"{API}/items"),
        ("UPLOAD-V2", f"{API}/items"),
        ("GET", "https://collector.evil.example/" + "a" * BIG),
    )
    result = audit(card, [ev], settings=settings)
    assert result.exit_code == 6
    assert _codes(result) == ["evidence-skipped", "undeclared-call", "undeclared-host"]
    assert (result.evidence[0].calls, result.evidence[0].partial, result.evidence[0].skipped) == (3, 1, 0)


def test_an_entry_without_any_readable_host_makes_audit_fail_closed(
    tmp_path: Path, card: Path, settings: Settings
) -> None:
    """No host to name: skipped (evidence-skipped, a warning), and audit exits 6 all the same."""
    ev = _har(tmp_path / "s.har", _req("GET", f"{API}/items"), _req("GET", "/exfil"))
    result = audit(card, [ev], settings=settings)
    assert _codes(result) == ["evidence-skipped"]
    assert result.exit_code == 6
    assert result.to_dict()["evidence"][0]["skipped"] == 1


def test_draft_reports_an_entry_read_in_part_as_unmatched(tmp_path: Path, served: str, settings: Settings) -> None:
    ev = _har(tmp_path / "s.har", _req("GET", f"{API}/items"), _req("GET", f"{API}/items/" + "a" * BIG))
    result = draft([ev], specs=[(f"{API}/", served)], settings=settings)
    (miss,) = result.unmatched
    assert miss.url == f"{API}/"
    assert "could not be read whole (URL over 65536 bytes)" in miss.reason
    assert result.report()["evidence"][0]["partial"] == 1


def test_undeclared_hosts_are_capped_with_a_count(tmp_path: Path, card: Path, settings: Settings) -> None:
    """5,000 hosts: 1,000 findings and one that counts the other 4,000 calls (was 5,000 findings)."""
    ev = _har(tmp_path / "s.har", *(_req("GET", f"https://h{i}.evil.example/") for i in range(5_000)))
    result = audit(card, [ev], settings=settings)
    hosts = [d for d in result.diagnostics if d.code == "undeclared-host"]
    assert len(hosts) == 1_001
    assert hosts[-1].data == {"host": None, "count": 4_000, "call": None, "listed": 1_000}
    assert sum(d.data["count"] for d in hosts) == 5_000


def test_undeclared_calls_are_capped_with_a_count(tmp_path: Path, card: Path, settings: Settings) -> None:
    ev = _har(tmp_path / "s.har", *(_req("DELETE", f"{API}/items/{i}") for i in range(1_500)))
    result = audit(card, [ev], settings=settings)
    calls = [d for d in result.diagnostics if d.code == "undeclared-call"]
    assert len(calls) == 1_001
    assert calls[-1].data["count"] == 500
    assert calls[-1].data["listed"] == 1_000


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_no_audit_format_shows_a_path_secret(
    tmp_path: Path, card: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ev = _har(tmp_path / "s.har", _req("POST", f"https://collector.evil.example/bot123456789:{TELEGRAM_SECRET}/x"))
    args = ["--cache-dir", str(tmp_path / "c"), "--allow-private-network", "audit", str(card), str(ev)]
    code = main([*args, "--format", fmt])
    out = capsys.readouterr()
    assert code == 6
    assert TELEGRAM_SECRET not in out.out + out.err
    assert "bot{redacted}" in out.out + out.err


def test_draft_stderr_and_report_show_no_path_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: str
) -> None:
    ev = _har(tmp_path / "s.har", _req("POST", f"{API}/hooks/T0123/B0456/{TELEGRAM_SECRET}x9"))
    report = tmp_path / "draft.json"
    args = ["--cache-dir", str(tmp_path / "c"), "--allow-private-network", "draft", str(ev)]
    main([*args, "--spec", f"{API}/={served}", "-o", str(tmp_path / "card.json"), "--report", str(report)])
    out = capsys.readouterr()
    assert TELEGRAM_SECRET not in out.out + out.err + report.read_text()
    assert "{redacted}" in report.read_text()
