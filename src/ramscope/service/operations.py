"""What the service answers, independent of the transport: HTTP (:mod:`.http`) and MCP (:mod:`.mcp`)
both call these, and these call the library (the same calls the CLI's commands make).

Each operation runs in a worker thread on a borrowed :class:`~ramscope.derive.Engine` (see
:mod:`.pool`) and returns an :class:`Answer`: the command's JSON (or text) output, the exit code the
CLI would give, and the HTTP status that exit code maps to (:data:`STATUS_OF_EXIT`). A request that
cannot be answered raises :class:`Refusal` (a status, a stable code, one line of message).

Nothing here reads a local file: cards come as bytes or parsed JSON, or from a URL through the
store (the same guard as every spec a card names), and rules come in the request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from .._parse import Limits, check_depth, parse_bytes
from ..card import Card, load_card
from ..derive import Engine
from ..documents import SpecKind
from ..errors import BlockedURLError, FetchError, FetchTimeoutError, InputError, LimitError, RamscopeError
from ..outputs.report import Report
from ..store import SpecStore
from .explain import explain_accesses
from .pool import Cancelled, Usage

__all__ = [
    "STATUS_OF_EXIT",
    "Answer",
    "CardSource",
    "Limits",
    "Refusal",
    "ServiceLimits",
    "check",
    "consent",
    "derive",
    "diff",
    "draft",
    "explain",
    "load_input_card",
    "parse_json_object",
    "scopes",
    "validate",
]

#: The CLI's exit codes (docs/cli.md) as HTTP statuses: 1 invalid card -> 422; 3 undetermined,
#: 4 diff found new permissions, 5 check found a failing rule: answers, so 200 (the body says it,
#: and the ``X-Ramscope-Exit-Code`` header carries the CLI's code); 2 bad input -> 400.
STATUS_OF_EXIT = {0: 200, 1: 422, 2: 400, 3: 200, 4: 200, 5: 200}

Tier = Literal["required", "recommended", "optional"]
Identity = Literal["end_user", "agent", "all"]
ConsentFormat = Literal["json", "markdown", "html"]


@dataclass(frozen=True, slots=True)
class ServiceLimits:
    """Bounds on what one request may carry (cards come from strangers)."""

    #: Largest request body, and largest card (a card fetched by URL included).
    max_body_bytes: int = 1024 * 1024
    #: Deepest nesting of a request's JSON.
    max_depth: int = 64
    #: Seconds a request may take, waiting for a worker included.
    deadline: float = 60.0
    #: Seconds a client has to send a request's head, and then its body: an idle or trickling
    #: socket is closed (408) instead of holding one of the server's connections for ever.
    read_timeout: float = 10.0
    #: Connections one client address may hold open at once (the server's total is 256).
    max_client_connections: int = 32

    def card_limits(self) -> Limits:
        return Limits(max_bytes=self.max_body_bytes, max_depth=self.max_depth, max_yaml_nodes=100_000)


@dataclass(frozen=True, slots=True)
class Answer:
    """One operation's result: the body, its media type, the CLI's exit code and the HTTP status."""

    body: bytes
    exit_code: int = 0
    media_type: str = "application/json"
    #: The JSON document, when the body is one (MCP tools return it as structured content).
    doc: Any = field(default=None, compare=False)
    #: For a server with a policy: whether the card got it ("applied") or not, being none the
    #: operator named ("not-applied"); ``None`` when the server has none or no card was derived.
    policy: str | None = None

    @property
    def status(self) -> int:
        return STATUS_OF_EXIT.get(self.exit_code, 500)


class Refusal(Exception):
    """A request that cannot be answered: HTTP ``status``, a stable ``code``, one line of ``message``."""

    def __init__(self, status: int, code: str, message: str, *, diagnostics: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.diagnostics = diagnostics or []

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": {"status": self.status, "code": self.code, "message": self.message}}
        if self.diagnostics:
            out["diagnostics"] = self.diagnostics
        return out


def refusal_of(exc: RamscopeError) -> Refusal:
    """The HTTP meaning of a library error: a card we could not fetch is the upstream's failure (502,
    504 for a timeout); a URL the guard refuses, or an input we cannot read, is the caller's (400,
    413 past a size bound)."""
    if isinstance(exc, BlockedURLError):
        return Refusal(400, exc.code, str(exc))
    if isinstance(exc, FetchTimeoutError):
        return Refusal(504, exc.code, str(exc))
    if isinstance(exc, FetchError):
        return Refusal(502, exc.code, str(exc))
    if isinstance(exc, LimitError):
        return Refusal(413, exc.code, str(exc))
    return Refusal(400, exc.code, str(exc))


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class CardSource:
    """Where a request's card is: its bytes (a request body), its parsed JSON, or a URL to fetch."""

    data: bytes | None = None
    doc: Mapping[str, Any] | None = None
    url: str | None = None
    #: The card's name in reports (``card.source``).
    label: str = "<request>"


def parse_json_object(data: bytes, limits: ServiceLimits, *, what: str = "the request body") -> dict[str, Any]:
    """A request body that must be one JSON object, within the size and depth bounds."""
    if len(data) > limits.max_body_bytes:
        raise Refusal(413, "body-too-large", f"{what} is over the limit of {limits.max_body_bytes:,} bytes")
    if not data.lstrip(b" \t\r\n").startswith(b"{"):
        raise Refusal(400, "bad-input", f"{what} must be a JSON object")
    try:
        doc = parse_bytes(data, source=what, limits=limits.card_limits(), fmt="json").value
    except RamscopeError as exc:
        raise refusal_of(exc) from None
    if not isinstance(doc, dict):
        raise Refusal(400, "bad-input", f"{what} must be a JSON object")
    return doc


def load_input_card(engine: Engine, src: CardSource, limits: ServiceLimits, usage: Usage | None = None) -> Card:
    """The card of a request. A URL is fetched as an A2A card (the card itself, or the agent's
    well-known card path) under the guard, cache and timeouts of every fetch, and read no further
    than the card bound while it streams (:func:`fetch_card`)."""
    try:
        if src.url is not None:
            if usage is not None and usage.cancel.is_set():
                raise Cancelled
            return load_card(fetch_card(engine, src.url, limits), name=src.url, limits=limits.card_limits())
        if src.data is not None:
            if len(src.data) > limits.max_body_bytes:
                raise Refusal(413, "body-too-large", f"the card is over the limit of {limits.max_body_bytes:,} bytes")
            if not src.data.lstrip(b" \t\r\n").startswith(b"{"):
                raise Refusal(400, "bad-input", "the card must be a JSON object")
            # Parsed here, not by the caller, so the report's diagnostics carry line and column.
            return load_card(src.data, name=src.label, limits=limits.card_limits())
        if src.doc is not None:
            # Already parsed (an MCP argument, a part of a diff or check body): bounded all the same,
            # depth first (the encoder below would recurse into it).
            check_depth(src.doc, limits.max_depth, src.label)
            try:
                size = len(orjson.dumps(src.doc))
            except TypeError as exc:
                raise Refusal(400, "bad-input", f"the card is not JSON: {exc}") from None
            if size > limits.max_body_bytes:
                raise Refusal(413, "body-too-large", f"the card is over the limit of {limits.max_body_bytes:,} bytes")
            return load_card(src.doc, name=src.label)
    except RamscopeError as exc:
        raise refusal_of(exc) from None
    raise Refusal(400, "bad-input", "no card given")


def fetch_card(engine: Engine, url: str, limits: ServiceLimits) -> bytes:
    """The bytes of the card at ``url``, through a store of the request's own whose byte bound is
    the card's: the download stops there, instead of at the 64 MiB of a spec (issue 30 item 8:
    a card of 64 MiB was read whole, refused as over 1 MiB afterwards, and kept in the shared
    store's memo for the generation's life). Closed when the card is read: nothing is kept."""
    settings = dataclasses.replace(engine.settings, max_spec_bytes=limits.max_body_bytes)
    with SpecStore(settings) as store:
        fetched = store.get(url, kind_hint=SpecKind.A2A)
        too_large = Refusal(502, "card-too-large", f"{url}: the card is over {limits.max_body_bytes:,} bytes")
        if fetched.size > limits.max_body_bytes:  # a cached copy, written under another bound: not loaded
            raise too_large
        body = bytes(fetched.body)
        if len(body) > limits.max_body_bytes:
            raise too_large
        return body


def _report_doc(engine: Engine, src: CardSource, limits: ServiceLimits, usage: Usage) -> tuple[Report, Card]:
    card = load_input_card(engine, src, limits, usage)
    # The operator's policy only for the cards the operator named (the pool knows which).
    deriving = usage.engine_for(card) if usage.engine_for is not None else engine
    report = deriving.derive(card)
    _note(report, usage)
    return report, card


def _note(report: Report, usage: Usage) -> None:
    for spec in report.specs:
        usage.spec_urls.add(spec.url)
        if spec.error is not None:
            usage.failed = True


def _json_answer(doc: Any, exit_code: int) -> Answer:
    try:
        body = orjson.dumps(doc)
    except TypeError:  # an integer beyond 64 bits from a stranger's card: the stdlib writes it
        import json  # noqa: PLC0415

        body = json.dumps(doc, ensure_ascii=False).encode()
    return Answer(body=body, exit_code=exit_code, doc=doc)


# --------------------------------------------------------------------------- operations


def derive(engine: Engine, usage: Usage, src: CardSource, limits: ServiceLimits) -> Answer:
    """``ramscope derive CARD``: the report JSON."""
    report, _ = _report_doc(engine, src, limits, usage)
    try:
        body = report.to_json()
    except TypeError:
        return _json_answer(report.to_dict(), report.exit_code)
    return Answer(body=body, exit_code=report.exit_code, doc=None)


def scopes(
    engine: Engine, usage: Usage, src: CardSource, limits: ServiceLimits, *, tier: Tier, identity: Identity
) -> Answer:
    """``ramscope scopes --tier T --identity I CARD``: the scopes, and what the CLI says beside them
    on stderr (credentials that are not scopes, accesses whose permissions are unknown)."""
    report, _ = _report_doc(engine, src, limits, usage)
    idents = ("END_USER", "AGENT") if identity == "all" else (identity.upper(),)
    found: set[str] = set()
    credentials: list[dict[str, Any]] = []
    incomplete: list[str] = []
    if report.card_valid:  # nothing derived from an invalid card is granted
        for ident in idents:
            it = report.tiers[tier.upper()].identities[ident]
            found.update(it.scopes)
            credentials += [{**c, "identity": ident.lower()} for c in it.credentials]
            incomplete += [a for a in it.incomplete_accesses if a not in incomplete]
    doc = {
        "card": {"source": report.card_source, "sha256": report.card_sha256, "valid": report.card_valid},
        "tier": tier,
        "identity": identity,
        "scopes": sorted(found),
        "credentials": credentials,
        "complete": report.card_valid and not incomplete,
        "incomplete_accesses": incomplete,
        "diagnostics": [d for d in report.to_dict()["diagnostics"] if d.get("severity") == "error"],
    }
    return _json_answer(doc, report.exit_code)


def consent(engine: Engine, usage: Usage, src: CardSource, limits: ServiceLimits, *, fmt: ConsentFormat) -> Answer:
    """``ramscope consent --format F CARD``."""
    from ..outputs.consent import consent_data, render_html, render_markdown  # noqa: PLC0415

    report, card = _report_doc(engine, src, limits, usage)
    provider = card.document.get("provider")
    data = consent_data(
        report,
        description=card.description,
        provider=str(provider.get("organization", "")) if isinstance(provider, dict) else "",
    )
    if fmt == "json":
        return _json_answer(data, report.exit_code)
    if fmt == "markdown":
        return Answer(render_markdown(data).encode(), report.exit_code, "text/markdown; charset=utf-8")
    return Answer(render_html(data).encode(), report.exit_code, "text/html; charset=utf-8")


def validate(engine: Engine, usage: Usage, src: CardSource, limits: ServiceLimits) -> Answer:
    """``ramscope validate --format json CARD``: the card's diagnostics; no network."""
    from ..diagnostics import has_errors  # noqa: PLC0415
    from ..outputs.diagnostics import CardDiagnostics, render_json  # noqa: PLC0415
    from ..validate import validate as validate_card  # noqa: PLC0415

    card = load_input_card(engine, src, limits, usage)
    diags = validate_card(card)
    return _json_answer(render_json([CardDiagnostics(card, diags)])[0], 1 if has_errors(diags) else 0)


def _side(engine: Engine, doc: Any, label: str, limits: ServiceLimits, usage: Usage) -> dict[str, Any]:
    """A card, derived (``diff`` and ``check`` judge what the card derives, never a report's claim)."""
    if not isinstance(doc, dict):
        raise Refusal(400, "bad-input", f"{label} must be a JSON object (a card)")
    _no_saved_report(doc, label)
    report, _ = _report_doc(engine, CardSource(doc=doc, label=label), limits, usage)
    return report.to_dict()


def _no_saved_report(doc: Mapping[str, Any], label: str) -> None:
    """A saved report is a claim about a card, verified on the CLI against the card beside it; the
    service reads no card file, so it cannot verify one (issue 30: a forged report, its scopes
    removed, was judged as it claimed)."""
    if doc.get("report_version") is not None and "tiers" in doc:
        raise Refusal(
            400,
            "saved-report-refused",
            f"{label} is a saved report, which the service cannot verify against its card: post the card itself",
        )


def diff(engine: Engine, usage: Usage, body: Mapping[str, Any], limits: ServiceLimits) -> Answer:
    """``ramscope diff OLD NEW``: body ``{"old": card-or-report, "new": card-or-report}``."""
    from ..outputs.diff import diff_reports  # noqa: PLC0415

    _only_keys(body, {"old", "new"}, required={"old", "new"})
    old = _side(engine, body["old"], "old", limits, usage)
    new = _side(engine, body["new"], "new", limits, usage)
    try:
        d = diff_reports(old, new)
    except InputError as exc:
        raise refusal_of(exc) from None
    if d["new"].get("valid") is False:
        code = 1
    elif d["risks"] or d["new_permissions"]:
        code = 4
    else:
        code = 0 if d["complete"] else 3
    return _json_answer(d, code)


def check(engine: Engine, usage: Usage, body: Mapping[str, Any], limits: ServiceLimits) -> Answer:
    """``ramscope check --rules R --format json CARD``: body ``{"card": ..., "rules": ...}``, the rules
    as TOML text or as the same tables in JSON."""
    from ..governance.check import check_report, results_json  # noqa: PLC0415
    from ..governance.locate import Locator  # noqa: PLC0415
    from ..governance.rules import check_rules_depth, loads_rules, parse_rules  # noqa: PLC0415

    _only_keys(body, {"card", "rules"}, required={"card", "rules"})
    raw = body["rules"]
    if not isinstance(raw, str | dict):
        raise Refusal(400, "bad-input", "rules must be TOML text or a JSON object of the same tables")
    try:
        # Nested TOML (thousands of "[") was a RecursionError, HTTP 500 (issue 30 item 14).
        raw = loads_rules(raw, source="rules") if isinstance(raw, str) else raw
        check_rules_depth(raw, "rules")
        rules = parse_rules(raw, source="rules")
    except InputError as exc:
        raise refusal_of(exc) from None
    card_doc = body["card"]
    if not isinstance(card_doc, dict):
        raise Refusal(400, "bad-input", "card must be a JSON object (a card)")
    _no_saved_report(card_doc, "card")
    derived, card = _report_doc(engine, CardSource(doc=card_doc, label="card"), limits, usage)
    report, locator = derived.to_dict(), Locator.for_card(card)
    result = check_report(report, rules, locator)
    doc = results_json([result], rules)
    return _json_answer(doc, int(doc["exit_code"]))


def explain(
    engine: Engine, usage: Usage, src: CardSource, limits: ServiceLimits, *, access: str | None = None
) -> Answer:
    """Why each access gets its permission (see :mod:`.explain`); ``access`` picks one by id."""
    report, _ = _report_doc(engine, src, limits, usage)
    doc = report.to_dict()
    try:
        out = explain_accesses(doc, access)
    except KeyError:
        known = ", ".join(str(a.get("id")) for a in doc.get("accesses", []))
        raise Refusal(400, "unknown-access", f"the card has no access {access!r} (it has: {known})") from None
    return _json_answer(out, report.exit_code)


def draft(
    engine: Engine, usage: Usage, evidence: list[str], specs: list[str], *, code: list[str] | None = None
) -> Answer:
    """``ramscope draft EVIDENCE... --spec PREFIX=SPEC_URL ... --report``: ``{"card", "report"}``.

    ``evidence`` are files the caller has already checked it may read (the MCP server: inside a root
    the client granted); their specs are fetched through the engine's store, as on the CLI."""
    from ..evidence import draft as draft_card  # noqa: PLC0415 - the evidence readers only when drafting
    from ..evidence.hosts import parse_spec_option  # noqa: PLC0415

    try:
        pairs = [parse_spec_option(text) for text in specs]
        result = draft_card(evidence, code=code or [], specs=pairs, engine=engine)
    except InputError as exc:
        raise refusal_of(exc) from None
    return _json_answer({"card": result.card, "report": result.report()}, 0)


def _only_keys(body: Mapping[str, Any], allowed: set[str], *, required: set[str]) -> None:
    extra = sorted(set(body) - allowed)
    if extra:
        raise Refusal(400, "bad-input", f"unknown key {extra[0]!r}; expected {', '.join(sorted(allowed))}")
    missing = sorted(required - set(body))
    if missing:
        raise Refusal(400, "bad-input", f"missing key {missing[0]!r}")
