"""Issue 30, item 3: credentials in URL paths never leave the evidence readers.

`draft` and `audit` kept the path verbatim: a JWT as a path segment, a Telegram bot token
(`/bot<id>:<secret>/`), Slack and Discord webhook secrets and `;jsessionid=` reached the draft report,
stderr and every audit format. The redaction is at the reader boundary (`strip_url`, and
`ObservedCall` itself), so no consumer sees the secret; the placeholder still matches the template.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ramscope.evidence import ObservedCall, read_calls
from ramscope.evidence.match import OperationMatcher
from ramscope.evidence.model import strip_url
from ramscope.evidence.redact import PLACEHOLDER, credential_shaped, redact_path
from ramscope.specs import build_index
from tests._specs import make_spec
from tests.support.recorders import jwt

ROOT = Path(__file__).resolve().parent.parent

JWT = jwt({"sub": "u-1", "scp": "Mail.Read", "secret": "jwt-s3cret-claim"})
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
SLACK_SECRET = "XxXxXxXxXxXxXxXxXxXxXxXx"  # Slack's own documentation placeholder shape: 24 letters
DISCORD_TOKEN = "Tq8fY3bZ_k2lM9vNp0QrS7tUwXyZaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789-abcd"
SESSION = "0A1B2C3D4E5F"
API_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
SHA = "da39a3ee5e6b4b0d3255bfef95601890afd80709"

CASES = [
    (f"https://api.example.com/v1/verify/{JWT}/status", "https://api.example.com/v1/verify/{redacted}/status", JWT),
    (
        f"https://api.telegram.org/bot{TELEGRAM}/sendMessage?chat_id=1",
        "https://api.telegram.org/bot{redacted}/sendMessage",
        TELEGRAM.split(":")[1],
    ),
    (
        f"https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{SLACK_SECRET}",
        "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{redacted}",
        SLACK_SECRET,
    ),
    (
        f"https://discord.com/api/webhooks/112233445566778899/{DISCORD_TOKEN}/messages/@original",
        "https://discord.com/api/webhooks/112233445566778899/{redacted}/messages/@original",
        DISCORD_TOKEN,
    ),
    (
        f"https://discord.com/api/v10/webhooks/112233445566778899/{DISCORD_TOKEN}",
        "https://discord.com/api/v10/webhooks/112233445566778899/{redacted}",
        DISCORD_TOKEN,
    ),
    (f"https://shop.example/cart;jsessionid={SESSION}", "https://shop.example/cart", SESSION),
    (f"https://shop.example/a;sid={SESSION}/b;v=1", "https://shop.example/a/b", SESSION),
    (f"https://api.example.com/keys/{API_KEY}/usage", "https://api.example.com/keys/{redacted}/usage", API_KEY),
    ("https://api.example.com/v1/" + SHA, "https://api.example.com/v1/{redacted}", SHA),
    # Percent-encoded, the secret is still a secret.
    (
        "https://api.telegram.org/bot" + TELEGRAM.replace(":", "%3A") + "/getMe",
        "https://api.telegram.org/{redacted}/getMe",
        TELEGRAM.split(":")[1],
    ),
]


@pytest.mark.parametrize(("raw", "kept", "secret"), CASES, ids=lambda v: str(v)[:40])
def test_known_forms_are_redacted_by_strip_url(raw: str, kept: str, secret: str) -> None:
    assert strip_url(raw) == kept
    assert secret not in (strip_url(raw) or "")


@pytest.mark.parametrize(
    "url",
    [
        "https://www.googleapis.com/calendar/v3/calendars/primary/events",
        "https://graph.microsoft.com/v1.0/me/microsoft.graph.importOffice365DeviceConfigurationPolicies",
        "https://api.github.com/repos/octo-org/hello-world/issues/1347/comments",
        "https://sheets.googleapis.com/v4/spreadsheets/abc:batchUpdate",
        "https://api.example.com/v2/displayVideo360AdvertiserLinkProposals",
    ],
)
def test_ordinary_paths_are_kept(url: str) -> None:
    assert strip_url(url) == url


def test_an_observed_call_redacts_whatever_constructs_it() -> None:
    """The boundary holds for a reader that forgets strip_url (the code reader, a test): the dataclass redacts."""
    call = ObservedCall(time="", method="POST", url=f"https://api.telegram.org/bot{TELEGRAM}/sendMessage")
    assert call.url == "https://api.telegram.org/bot{redacted}/sendMessage"
    assert TELEGRAM not in repr(call)


def test_the_placeholder_still_matches_the_spec_path_template() -> None:
    """Telegram's `/bot{token}/sendMessage`, Slack's and Discord's webhook templates match the redacted path."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/bot{token}/sendMessage": {"post": {"operationId": "sendMessage", "responses": {}}},
            "/services/{team}/{bot}/{secret}": {"post": {"operationId": "slackHook", "responses": {}}},
            "/api/webhooks/{id}/{token}/messages/{mid}": {"get": {"operationId": "discordMsg", "responses": {}}},
            "/v1/verify/{token}/status": {"get": {"operationId": "verify", "responses": {}}},
        },
    }
    m = OperationMatcher(build_index(make_spec(spec)))
    for method, raw, op in [
        ("POST", CASES[1][0], "sendMessage"),
        ("POST", CASES[2][0], "slackHook"),
        ("GET", CASES[3][0], "discordMsg"),
        ("GET", CASES[0][0], "verify"),
    ]:
        call = ObservedCall(time="", method=method, url=strip_url(raw) or "")
        hit = m.match(method, (call.path,))
        assert hit.entry is not None, (raw, call.path)
        assert hit.entry.operation_id == op


def _token(rnd: random.Random, nbytes: int, enc: str) -> str:
    b = rnd.randbytes(nbytes)
    return b.hex() if enc == "hex" else base64.urlsafe_b64encode(b).decode().rstrip("=")


_WORD = st.text(string.ascii_lowercase, min_size=1, max_size=10)


@st.composite
def _secret_path(draw: st.DrawFn) -> tuple[str, str]:
    """A realistic path with one secret of a known form (or a key of 32 random bytes) somewhere in it."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    before = draw(st.lists(_WORD, max_size=3))
    after = draw(st.lists(_WORD, max_size=3))
    kind = draw(st.sampled_from(["jwt", "telegram", "slack", "discord", "session", "hex", "b64"]))
    if kind == "jwt":
        secret = jwt({"sub": _token(rnd, 8, "b64"), "exp": rnd.randrange(10**9)})
        segs = [*before, secret, *after]
    elif kind == "telegram":
        secret = _token(rnd, 26, "b64")
        segs = [*before, f"bot{rnd.randrange(10**6, 10**10)}:{secret}", *after]
    elif kind == "slack":
        secret = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(24))
        segs = ["services", f"T{rnd.randrange(10**8)}", f"B{rnd.randrange(10**8)}", secret]
    elif kind == "discord":
        secret = _token(rnd, 51, "b64")
        segs = ["api", "webhooks", str(rnd.randrange(10**17, 10**18)), secret, *after]
    elif kind == "session":
        secret = _token(rnd, draw(st.integers(4, 32)), "hex")
        segs = [*before, f"{draw(_WORD)};jsessionid={secret}", *after]
    else:
        secret = _token(rnd, draw(st.integers(32, 48)), "hex" if kind == "hex" else "b64")
        if kind == "b64" and rnd.random() < 0.5:
            secret = "sk_live_" + secret
        segs = [*before, secret, *after]
    return "/" + "/".join(segs), secret


@given(_secret_path())
def test_no_secret_survives_redaction(case: tuple[str, str]) -> None:
    """Property: a secret of a known form, or a key of 32 to 48 random bytes (hex or base64url, the generic
    rule's measured reach), is never in the redacted path; the path keeps its segment count."""
    path, secret = case
    out = redact_path(path)
    assert secret not in out
    assert out.count("/") == path.count("/")


def test_generic_rule_measured_reach() -> None:
    """What docs/evidence.md and the module say, on a fixed seed: random base64url keys of 24 bytes escape
    at most 1 in 300, of 32 bytes and hex keys of 16 bytes never."""
    rnd = random.Random(30)
    n = 5_000
    assert sum(not credential_shaped(_token(rnd, 16, "hex")) for _ in range(n)) == 0
    assert sum(not credential_shaped(_token(rnd, 24, "b64")) for _ in range(n)) <= n // 300
    assert sum(not credential_shaped(_token(rnd, 32, "b64")) for _ in range(n)) == 0


def _literal_segments(every: int) -> set[str]:
    import googleapiclient

    segments: set[str] = set()
    docs = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"

    def walk(r: dict[str, object]) -> None:
        for m in (r.get("methods") or {}).values():  # type: ignore[union-attr]
            for key in ("path", "flatPath"):
                segments.update(s for s in str(m.get(key) or "").split("/") if s and "{" not in s)
        for sub in (r.get("resources") or {}).values():  # type: ignore[union-attr]
            walk(sub)

    for f in sorted(docs.glob("*.json"))[::every]:
        walk(json.loads(f.read_bytes()))
    github = ROOT / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
    if github.exists():
        for p in json.loads(github.read_bytes())["paths"]:
            segments.update(s for s in p.split("/") if s and "{" not in s)
    return segments


def test_literal_segments_of_real_specs_are_kept() -> None:
    """The false-positive side, on real specs: every literal path segment of GitHub's REST spec and of every
    tenth Discovery document shipped with google-api-python-client is kept as it is (all of them: -m slow)."""
    segments = _literal_segments(10)
    assert len(segments) > 1_000
    assert sorted(s for s in segments if credential_shaped(s) or ";" in s) == []


@pytest.mark.slow
def test_literal_segments_of_every_discovery_document_are_kept() -> None:
    segments = _literal_segments(1)
    assert len(segments) > 3_000
    assert sorted(s for s in segments if credential_shaped(s) or ";" in s) == []


def test_readers_redact_every_format(tmp_path: Path) -> None:
    """HAR, OTLP and MCP logs: the secret is in no call, and the placeholder is."""
    url = CASES[1][0]
    entries = [{"request": {"method": "POST", "url": url}}]
    har = {"log": {"version": "1.2", "creator": {"name": "t"}, "entries": entries}}
    (tmp_path / "s.har").write_text(json.dumps(har))
    span = {
        "kind": 3,
        "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "POST"}},
            {"key": "url.full", "value": {"stringValue": url}},
        ],
    }
    (tmp_path / "t.jsonl").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    mcp = {
        "server": f"https://mcp.example.com/s/{API_KEY}/mcp",
        "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search"}},
    }
    (tmp_path / "m.jsonl").write_text(json.dumps(mcp) + "\n")
    calls, _ = read_calls([tmp_path / "s.har", tmp_path / "t.jsonl", tmp_path / "m.jsonl"])
    assert [c.url for c in calls] == [
        "https://api.telegram.org/bot{redacted}/sendMessage",
        "https://api.telegram.org/bot{redacted}/sendMessage",
        "https://mcp.example.com/s/{redacted}/mcp",
    ]
    for secret in (TELEGRAM, TELEGRAM.split(":")[1], API_KEY):
        assert secret not in repr(calls)
    assert PLACEHOLDER in calls[0].label
