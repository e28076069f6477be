"""Hostile inputs, by class and by document kind.

Every case is a card (bytes) plus, for the spec kinds, what a local server answers
for the spec the card names. The classes follow issue 8: deep nesting, huge arrays,
YAML alias bombs, duplicate keys, bad UTF-8, NUL bytes, numbers as ids, ids that
collide after case folding, 10 MB strings, ``$ref`` loops and long chains, hostile
operation ids, CRLF in URLs. Kinds: ``card``, ``openapi-json``, ``openapi-yaml``,
``discovery``, ``mcp`` (the wire: JSON-RPC answers), ``a2a`` (a remote agent card).

``heavy`` marks the cases whose worst-case variant is big enough to belong behind
the ``slow`` marker; the default run uses a smaller instance of the same shape.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

MB = 1024 * 1024

#: Depth of the deep-nesting inputs (issue 8: 100,000 levels).
DEEP = 100_000
#: Length of the long ``$ref`` chains (issue 8: 10,000).
CHAIN = 10_000
#: The size of the long strings (issue 8: 10 MB).
BIG = 10 * MB

KINDS = ("card", "openapi-json", "openapi-yaml", "discovery", "mcp", "a2a")

HOSTILE_IDS = (
    "../../../etc/passwd",
    "..\\..\\windows\\system32",
    "$(touch /tmp/ramscope-pwned)",
    "`id`; rm -rf / | cat && echo",
    "a\r\nX-Injected: 1",
    "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07",
)


@dataclass
class Served:
    """One thing the local server answers: a body at a path (GET) or a JSON-RPC handler (POST /mcp)."""

    path: str
    body: bytes = b""
    content_type: str = "application/json"
    #: For MCP: the JSON-RPC ``result`` of ``tools/list`` as raw bytes (spliced in as is).
    mcp_tools_result: bytes | None = None


@dataclass(frozen=True)
class Outcome:
    """What ``ramscope derive`` does with a case, exactly.

    ``code``: for exit 2 the error's code (``RamscopeError.code``: ``bad-input``, ``limit-exceeded``);
    for a report, the ``reason`` of its unresolved accesses (joined with ``+`` if several), else the
    error diagnostic that made the card invalid (exit 1), else ``None`` (every access derived).
    ``diagnostics``: the report's diagnostic codes, sorted, without ``insecure-spec-url`` and
    ``insecure-fetch`` (every case's spec is on a plain-http loopback server).
    ``bug``: the outcome is the right one, not today's: a strict xfail names the bug until it is fixed.
    """

    exit: int
    code: str | None
    diagnostics: tuple[str, ...] = ()
    bug: str | None = None


@dataclass
class Case:
    name: str
    klass: str
    kind: str
    #: Builds the card, given the base URL of the local server.
    card: Callable[[str], bytes]
    served: list[Served] = field(default_factory=list)
    card_suffix: str = ".json"
    #: Text that must appear in stderr or stdout (a diagnostic naming the problem), if any.
    expect: str | None = None
    #: The exact outcome (exit code, code, diagnostics), from ``OUTCOMES`` by ``all_cases``.
    outcome: Outcome | None = None

    @property
    def exit(self) -> int:
        assert self.outcome is not None, f"{self.klass}/{self.name} has no outcome in OUTCOMES"
        return self.outcome.exit

    @property
    def code(self) -> str | None:
        assert self.outcome is not None, f"{self.klass}/{self.name} has no outcome in OUTCOMES"
        return self.outcome.code


# --------------------------------------------------------------------------- base documents


def manifest(
    spec_url: str,
    *,
    protocol: str = "REST",
    resource_path: str = "/items",
    operation_id: str | None = "listItems",
    http_method: str | None = "GET",
    display_name: str = "Item Service",
) -> dict[str, Any]:
    aos: dict[str, Any] = {}
    if operation_id is not None:
        aos["operation_id"] = operation_id
    if http_method is not None:
        aos["http_method"] = http_method
    op: dict[str, Any] = {"id": "op", "resource": "res", "description": "lists items"}
    if aos:
        op["api_operation_spec"] = aos
    return {
        "resources": [
            {
                "id": "res",
                "interaction_protocol": protocol,
                "owner": "CONSUMER",
                "display_name": display_name,
                "spec": {"spec_url": spec_url, "resource_path": resource_path},
            }
        ],
        "operations": [op],
        "resource_accesses": [
            {
                "id": "acc",
                "operation": "op",
                "identity_used": "END_USER",
                "necessity": "REQUIRED",
                "confirmation_required": False,
                "access_justification": "to list your items",
            }
        ],
    }


def card_doc(m: dict[str, Any], name: str = "Hostile test agent") -> dict[str, Any]:
    return {"name": name, "description": "an agent under test", "version": "1.0", "resourceAccessManifest": m}


def dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


OAUTH = {
    "type": "oauth2",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://auth.example.com/authorize",
            "tokenUrl": "https://auth.example.com/token",
            "scopes": {"items.read": "See your items", "items.write": "Change your items"},
        }
    },
}


def openapi(paths: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Item Service API", "version": "1"},
        "components": {"securitySchemes": {"oauth": copy.deepcopy(OAUTH)}},
        "security": [{"oauth": ["items.read"]}],
        "paths": paths
        if paths is not None
        else {
            "/items": {
                "get": {"operationId": "listItems", "responses": {"200": {"description": "ok"}}},
                "post": {
                    "operationId": "addItem",
                    "security": [{"oauth": ["items.write"]}],
                    "responses": {"200": {"description": "ok"}},
                },
            }
        },
    }
    doc.update(extra)
    return doc


def discovery(resources: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": "discovery#restDescription",
        "discoveryVersion": "v1",
        "id": "items:v1",
        "name": "items",
        "version": "v1",
        "title": "Item Service API",
        "rootUrl": "https://items.example.com/",
        "servicePath": "v1/",
        "auth": {
            "oauth2": {
                "scopes": {
                    "https://items.example.com/auth/items.readonly": {"description": "See your items"},
                    "https://items.example.com/auth/items": {"description": "Change your items"},
                }
            }
        },
        "resources": resources
        if resources is not None
        else {
            "items": {
                "methods": {
                    "list": {
                        "id": "items.items.list",
                        "path": "items",
                        "httpMethod": "GET",
                        "scopes": [
                            "https://items.example.com/auth/items.readonly",
                            "https://items.example.com/auth/items",
                        ],
                    }
                }
            }
        },
    }
    doc.update(extra)
    return doc


def mcp_tools(tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "tools": tools
        if tools is not None
        else [{"name": "listItems", "description": "lists items", "inputSchema": {"type": "object"}}]
    }


def a2a_card(skills: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "Item agent",
        "description": "answers about items",
        "version": "1.0",
        "supportedInterfaces": [{"url": "https://items.example.com/a2a", "protocolBinding": "JSONRPC"}],
        "capabilities": {},
        "securitySchemes": {
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/authorize",
                            "tokenUrl": "https://auth.example.com/token",
                            "scopes": {"items.read": "See your items"},
                        }
                    }
                }
            }
        },
        "securityRequirements": [{"schemes": {"oauth": {"list": ["items.read"]}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills
        if skills is not None
        else [{"id": "listItems", "name": "List items", "description": "lists items", "tags": ["items"]}],
    }
    doc.update(extra)
    return doc


# --------------------------------------------------------------------------- spec kinds


@dataclass(frozen=True)
class SpecKindInfo:
    kind: str
    path: str
    protocol: str
    resource_path: str
    operation_id: str | None
    http_method: str | None
    content_type: str


SPEC_KINDS: dict[str, SpecKindInfo] = {
    "openapi-json": SpecKindInfo(
        "openapi-json", "/openapi.json", "REST", "/items", "listItems", "GET", "application/json"
    ),
    "openapi-yaml": SpecKindInfo(
        "openapi-yaml", "/openapi.yaml", "REST", "/items", "listItems", "GET", "application/yaml"
    ),
    "discovery": SpecKindInfo(
        "discovery", "/discovery.json", "REST", "/v1/items", "items.items.list", "GET", "application/json"
    ),
    "mcp": SpecKindInfo("mcp", "/mcp", "MCP", "listItems", None, None, "application/json"),
    "a2a": SpecKindInfo("a2a", "/agent-card.json", "A2A", "listItems", None, None, "application/json"),
}


def base_spec(kind: str) -> dict[str, Any]:
    return {
        "openapi-json": openapi,
        "openapi-yaml": openapi,
        "discovery": discovery,
        "mcp": mcp_tools,
        "a2a": a2a_card,
    }[kind]()


def spec_case(
    name: str,
    klass: str,
    kind: str,
    body: bytes,
    *,
    operation_id: str | None = None,
    resource_path: str | None = None,
    expect: str | None = None,
) -> Case:
    """A card naming one operation of a spec the local server answers with ``body``."""
    info = SPEC_KINDS[kind]
    op_id = operation_id if operation_id is not None else info.operation_id
    rp = resource_path if resource_path is not None else info.resource_path

    def card(base: str) -> bytes:
        m = manifest(
            base + info.path,
            protocol=info.protocol,
            resource_path=rp,
            operation_id=op_id,
            http_method=info.http_method,
        )
        return dumps(card_doc(m))

    served = (
        Served(info.path, mcp_tools_result=body)
        if kind == "mcp"
        else Served(info.path, body=body, content_type=info.content_type)
    )
    return Case(name, klass, kind, card, [served], expect=expect)


def encode(kind: str, doc: Any) -> bytes:
    if kind == "openapi-yaml":
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode("utf-8")
    return dumps(doc)


# --------------------------------------------------------------------------- the classes


def _deep_json(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _deep_yaml_block(depth: int) -> str:
    # Block style: one more indentation level per line.
    return "".join(f"{' ' * i}a:\n" for i in range(depth)) + " " * depth + "b: 1\n"


def deep_nesting(depth: int = DEEP) -> list[Case]:
    cases: list[Case] = []
    deep = _deep_json(depth)
    # Card: deep inside a field, as JSON and as YAML (flow and block).
    card_json = dumps(card_doc(manifest("https://x.example/s.json")))[:-1] + b',"x-deep":' + deep.encode() + b"}"
    cases.append(Case("card-json", "deep-nesting", "card", lambda _b: card_json, expect="nesting"))
    card_yaml = ("name: deep\nx: " + "[" * depth + "]" * depth + "\n").encode()
    cases.append(Case("card-yaml-flow", "deep-nesting", "card", lambda _b: card_yaml, card_suffix=".yaml"))
    block = ("name: deep\nx:\n" + _deep_yaml_block(min(depth, 5000)).replace("\n", "\n ")).encode()
    cases.append(Case("card-yaml-block", "deep-nesting", "card", lambda _b: block, card_suffix=".yaml"))
    for kind in SPEC_KINDS:
        if kind == "openapi-yaml":
            body = ("openapi: 3.0.3\ninfo: {title: t, version: '1'}\nx: " + "[" * depth + "]" * depth + "\n").encode()
        else:
            raw = dumps(base_spec(kind))
            body = raw[:-1] + b',"x-deep":' + deep.encode() + b"}"
        cases.append(spec_case(f"{kind}", "deep-nesting", kind, body))
    # Discovery nests `resources` (real documents: 10 levels); 450 levels stay under the parser's bound.
    levels = 450
    method = '{"methods":{"list":{"id":"items.items.list","path":"items","httpMethod":"GET"}}}'
    nested = '{"r":{"resources":' * (levels - 1) + '{"r":' + method + "}" + "}}" * (levels - 1)
    raw = dumps(discovery({}))
    body = raw.replace(b'"resources": {}', b'"resources": ' + nested.encode(), 1)
    cases.append(spec_case("discovery-resources-450", "deep-nesting", "discovery", body))
    return cases


def huge_arrays(n: int = 1_000_000) -> list[Case]:
    cases: list[Case] = []
    arr = b"[" + b",".join([b"0"] * n) + b"]"

    def card(base: str) -> bytes:
        return dumps(card_doc(manifest(base + "/openapi.json")))[:-1] + b',"x-huge":' + arr + b"}"

    cases.append(Case("card-array", "huge-arrays", "card", card, [Served("/openapi.json", dumps(openapi()))]))
    # 50,000 accesses (the card limit is 16 MiB), all through one operation of a local spec.
    info = SPEC_KINDS["openapi-json"]

    def many_accesses(base: str, count: int = n // 20) -> bytes:
        m = manifest(base + info.path)
        one = m["resource_accesses"][0]
        m["resource_accesses"] = [dict(one, id=f"acc{i}") for i in range(count)]
        return dumps(card_doc(m))

    cases.append(Case("card-accesses", "huge-arrays", "card", many_accesses, [Served(info.path, dumps(openapi()))]))
    # Specs with many operations / tools / skills / methods.
    ops = max(1, n // 5)
    paths = {f"/p{i}": {"get": {"operationId": f"op{i}", "responses": {}}} for i in range(ops)}
    paths["/items"] = openapi()["paths"]["/items"]
    cases.append(spec_case("openapi-json-ops", "huge-arrays", "openapi-json", dumps(openapi(paths))))
    cases.append(
        spec_case(
            "openapi-yaml-ops",
            "huge-arrays",
            "openapi-yaml",
            encode("openapi-yaml", openapi(dict(list(paths.items())[-20000:]))),
        )
    )
    methods = {f"m{i}": {"id": f"items.m{i}", "path": f"m{i}", "httpMethod": "GET", "scopes": []} for i in range(ops)}
    methods["list"] = discovery()["resources"]["items"]["methods"]["list"]
    cases.append(
        spec_case("discovery-methods", "huge-arrays", "discovery", dumps(discovery({"items": {"methods": methods}})))
    )
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(ops)] + mcp_tools()["tools"]
    cases.append(spec_case("mcp-tools", "huge-arrays", "mcp", dumps({"tools": tools})))
    skills = [{"id": f"s{i}", "name": "s", "description": "d", "tags": []} for i in range(ops)]
    skills += a2a_card()["skills"]
    cases.append(spec_case("a2a-skills", "huge-arrays", "a2a", dumps(a2a_card(skills))))
    # Many alternatives x many scopes on the one operation: the optimiser's input.
    alts = [{"oauth": [f"s{i}.{j}" for j in range(50)]} for i in range(200)]
    big_sec = openapi()
    big_sec["paths"]["/items"]["get"]["security"] = alts
    cases.append(spec_case("openapi-alternatives", "huge-arrays", "openapi-json", dumps(big_sec)))
    cases.append(optimiser_case(200 if n >= 1_000_000 else 40, 50 if n >= 1_000_000 else 10))
    cases.append(unknown_operations_case(ops, 2_000 if n >= 1_000_000 else 100))
    return cases


def unknown_operations_case(n_ops: int, n_accesses: int) -> Case:
    """``n_accesses`` accesses naming operation ids a spec of ``n_ops`` operations lacks: every one is
    unresolved, and each would ask for "did you mean" suggestions over every operation."""
    paths = {f"/p{i}": {"get": {"operationId": f"operation{i}", "responses": {}}} for i in range(n_ops)}
    body = dumps(openapi(paths))
    info = SPEC_KINDS["openapi-json"]

    def card(base: str) -> bytes:
        m = manifest(base + info.path)
        o, a = m["operations"][0], m["resource_accesses"][0]
        m["operations"] = [
            dict(o, id=f"o{i}", api_operation_spec={"operation_id": f"operaton{i}x", "http_method": "GET"})
            for i in range(n_accesses)
        ]
        m["resource_accesses"] = [dict(a, id=f"a{i}", operation=f"o{i}") for i in range(n_accesses)]
        return dumps(card_doc(m))

    return Case("openapi-unknown-operations", "huge-arrays", "openapi-json", card, [Served(info.path, body)])


def optimiser_case(n_ops: int, n_alts: int, n_scopes: int = 5) -> Case:
    """``n_ops`` accesses, each to its own operation with ``n_alts`` alternatives of ``n_scopes`` scopes:
    far past the exact search, so the per-tier optimiser runs its greedy pass and local search."""
    paths: dict[str, Any] = {}
    for i in range(n_ops):
        alts = [{"oauth": [f"s{(i * 7 + j * 3 + k) % (n_ops * 2)}" for k in range(n_scopes)]} for j in range(n_alts)]
        paths[f"/p{i}"] = {"get": {"operationId": f"op{i}", "security": alts, "responses": {}}}
    body = dumps(openapi(paths))
    info = SPEC_KINDS["openapi-json"]

    def card(base: str) -> bytes:
        m = manifest(base + info.path)
        r, o, a = m["resources"][0], m["operations"][0], m["resource_accesses"][0]
        m["operations"] = [dict(o, id=f"op{i}", api_operation_spec={"operation_id": f"op{i}"}) for i in range(n_ops)]
        m["resource_accesses"] = [dict(a, id=f"acc{i}", operation=f"op{i}") for i in range(n_ops)]
        m["resources"] = [r]
        return dumps(card_doc(m))

    return Case("openapi-optimiser", "huge-arrays", "openapi-json", card, [Served(info.path, body)])


def _alias_bomb(levels: int = 10, width: int = 10) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def yaml_alias_bombs() -> list[Case]:
    bomb = _alias_bomb()
    card = ("name: bomb\nresourceAccessManifest: {resources: []}\n" + bomb).encode()
    cases = [Case("card", "yaml-alias-bomb", "card", lambda _b: card, card_suffix=".yaml", expect="alias bomb")]
    body = ("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n" + bomb).encode()
    cases.append(spec_case("openapi-yaml", "yaml-alias-bomb", "openapi-yaml", body))
    recursive = b"name: loop\nx: &x [*x]\n"
    cases.append(Case("card-recursive", "yaml-alias-bomb", "card", lambda _b: recursive, card_suffix=".yaml"))
    return cases


def duplicate_keys() -> list[Case]:
    cases: list[Case] = []

    def card(_b: str) -> bytes:
        text = dumps(card_doc(manifest("https://x.example/s.json"))).decode()
        return text.replace('"id": "res"', '"id": "res", "id": "other"', 1).encode()

    cases.append(Case("card-json", "duplicate-keys", "card", card, expect="duplicate key"))
    ycard = b"name: a\nname: b\nresourceAccessManifest: {resources: []}\n"
    cases.append(
        Case("card-yaml", "duplicate-keys", "card", lambda _b: ycard, card_suffix=".yaml", expect="duplicate key")
    )
    for kind in SPEC_KINDS:
        raw = encode(kind, base_spec(kind)).decode()
        if kind == "openapi-yaml":
            body = raw.replace("openapi: 3.0.3", "openapi: 3.0.3\nopenapi: 2.0", 1)
        elif kind == "openapi-json":
            body = raw.replace('"operationId": "listItems"', '"operationId": "listItems", "operationId": "other"', 1)
        elif kind == "discovery":
            body = raw.replace('"httpMethod": "GET"', '"httpMethod": "GET", "httpMethod": "DELETE"', 1)
        elif kind == "mcp":
            body = raw.replace('"name": "listItems"', '"name": "listItems", "name": "other"', 1)
        else:
            body = raw.replace('"id": "listItems"', '"id": "listItems", "id": "other"', 1)
        cases.append(spec_case(kind, "duplicate-keys", kind, body.encode()))
    return cases


def bad_utf8() -> list[Case]:
    cases: list[Case] = []
    samples = {
        "invalid": b"\xff\xfe\xfa",
        "overlong-slash": b"\xc0\xaf",
        "overlong-nul": b"\xc0\x80",
        "surrogate": b"\xed\xa0\x80",
        "overlong-3byte": b"\xe0\x80\xaf",
    }
    for label, raw in samples.items():
        card = b'{"name": "bad ' + raw + b'", "resourceAccessManifest": {"resources": []}}'
        cases.append(Case(f"card-{label}", "bad-utf8", "card", lambda _b, c=card: c, expect="UTF-8"))
    for kind in SPEC_KINDS:
        raw_doc = encode(kind, base_spec(kind))
        body = raw_doc.replace(b"lists items", b"lists \xc0\xaf items", 1).replace(
            b"Item Service API", b"Item \xed\xa0\x80 API", 1
        )
        if body == raw_doc:
            body = raw_doc.replace(b"items", b"it\xc0\xafems", 1)
        cases.append(spec_case(kind, "bad-utf8", kind, body))

    # Escaped lone surrogates are valid JSON but not valid Unicode.
    def esc(base: str) -> bytes:
        return dumps(card_doc(manifest(base + "/openapi.json"))).replace(b"an agent under test", b"\\ud800 lone", 1)

    cases.append(Case("card-escaped-surrogate", "bad-utf8", "card", esc, [Served("/openapi.json", dumps(openapi()))]))
    return cases


def nul_bytes() -> list[Case]:
    cases: list[Case] = []
    raw = b'{"name": "a\x00b", "resourceAccessManifest": {"resources": []}}'
    cases.append(Case("card-raw-nul", "nul-bytes", "card", lambda _b: raw))

    def escaped(base: str) -> bytes:
        info = SPEC_KINDS["openapi-json"]
        m = manifest(base + info.path)
        m["resources"][0]["id"] = "res\x00hidden"
        m["operations"][0]["resource"] = "res\x00hidden"
        m["resources"][0]["display_name"] = "Item\x00Service"
        m["operations"][0]["api_operation_spec"]["operation_id"] = "listItems\x00"
        return dumps(card_doc(m))

    cases.append(Case("card-escaped-nul", "nul-bytes", "card", escaped, [Served("/openapi.json", dumps(openapi()))]))
    ycard = b"name: a\x00b\nresourceAccessManifest: {resources: []}\n"
    cases.append(Case("card-yaml-nul", "nul-bytes", "card", lambda _b: ycard, card_suffix=".yaml"))
    for kind in SPEC_KINDS:
        doc = base_spec(kind)
        if kind.startswith("openapi"):
            doc["paths"]["/items"]["get"]["operationId"] = "list\x00Items"
            doc["info"]["title"] = "Item\x00API"
        elif kind == "discovery":
            doc["resources"]["items"]["methods"]["list"]["id"] = "items.items\x00.list"
        elif kind == "mcp":
            doc["tools"][0]["name"] = "list\x00Items"
        else:
            doc["skills"][0]["id"] = "list\x00Items"
        cases.append(spec_case(kind, "nul-bytes", kind, encode(kind, doc)))
    cases.append(spec_case("openapi-raw-nul", "nul-bytes", "openapi-json", dumps(openapi()) + b"\x00"))
    return cases


def numbers_as_ids() -> list[Case]:
    cases: list[Case] = []

    def card(base: str) -> bytes:
        info = SPEC_KINDS["openapi-json"]
        m: Any = manifest(base + info.path)
        m["resources"][0]["id"] = 1
        m["operations"][0]["id"] = 2.5
        m["operations"][0]["resource"] = 1
        m["resource_accesses"][0]["id"] = True
        m["resource_accesses"][0]["operation"] = 2.5
        m["operations"][0]["api_operation_spec"]["operation_id"] = 12345678901234567890123
        return dumps(card_doc(m))

    cases.append(Case("card", "numbers-as-ids", "card", card, [Served("/openapi.json", dumps(openapi()))]))
    for kind in SPEC_KINDS:
        doc = base_spec(kind)
        if kind.startswith("openapi"):
            doc["paths"]["/items"]["get"]["operationId"] = 42
            doc["paths"]["/items"]["post"]["operationId"] = 1e308
            doc["components"]["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["scopes"] = {"1": 2}
        elif kind == "discovery":
            doc["resources"]["items"]["methods"]["list"]["id"] = 42
            doc["resources"]["items"]["methods"]["list"]["scopes"] = [1, 2]
        elif kind == "mcp":
            doc["tools"][0]["name"] = 42
        else:
            doc["skills"][0]["id"] = 42
            doc["securityRequirements"] = [{"schemes": {"oauth": {"list": [1]}}}]
        cases.append(
            spec_case(
                kind,
                "numbers-as-ids",
                kind,
                encode(kind, doc),
                operation_id="42" if kind.startswith("openapi") or kind == "discovery" else None,
                resource_path="42" if kind in ("mcp", "a2a") else None,
            )
        )
    return cases


def casefold_collisions() -> list[Case]:
    cases: list[Case] = []

    def card(base: str) -> bytes:
        info = SPEC_KINDS["openapi-json"]
        m = manifest(base + info.path)
        r = m["resources"][0]
        m["resources"] = [dict(r, id="Res"), dict(r, id="res"), dict(r, id="RES\u212a")]  # KELVIN SIGN
        op = m["operations"][0]
        m["operations"] = [dict(op, id="op"), dict(op, id="OP"), dict(op, id="o\u1e55")]
        a = m["resource_accesses"][0]
        m["resource_accesses"] = [dict(a, id="Stra\u00dfe"), dict(a, id="STRASSE"), dict(a, id="strasse")]
        return dumps(card_doc(m))

    cases.append(Case("card", "casefold-collisions", "card", card, [Served("/openapi.json", dumps(openapi()))]))
    for kind in SPEC_KINDS:
        doc = base_spec(kind)
        if kind.startswith("openapi"):
            doc["paths"]["/Items"] = {"get": {"operationId": "LISTITEMS", "responses": {}}}
            doc["paths"]["/items"]["post"]["operationId"] = "listitems"
        elif kind == "discovery":
            m = doc["resources"]["items"]["methods"]
            m["List"] = dict(m["list"], id="items.items.LIST")
            m["lisT"] = dict(m["list"], id="ITEMS.items.list")
        elif kind == "mcp":
            doc["tools"] += [{"name": "LISTITEMS", "inputSchema": {}}, {"name": "listitems", "inputSchema": {}}]
        else:
            doc["skills"] += [dict(doc["skills"][0], id="LISTITEMS"), dict(doc["skills"][0], id="listitems")]
        cases.append(spec_case(kind, "casefold-collisions", kind, encode(kind, doc)))
    return cases


def big_strings(size: int = BIG) -> list[Case]:
    cases: list[Case] = []
    s = "A" * size

    def card(base: str) -> bytes:
        info = SPEC_KINDS["openapi-json"]
        m = manifest(base + info.path, display_name=s[: size // 4])
        m["resources"][0]["description"] = s[: size // 4]
        m["resource_accesses"][0]["access_justification"] = s[: size // 4]
        m["resource_accesses"][0]["id"] = "acc" + s[: size // 8]
        return dumps(card_doc(m, name="x" + s[: size // 8]))

    cases.append(Case("card", "big-strings", "card", card, [Served("/openapi.json", dumps(openapi()))]))

    def card_unknown_op(base: str) -> bytes:
        info = SPEC_KINDS["openapi-json"]
        m = manifest(base + info.path, operation_id="x" * (size // 2))
        return dumps(card_doc(m))

    cases.append(
        Case("card-operation-id", "big-strings", "card", card_unknown_op, [Served("/openapi.json", dumps(openapi()))])
    )
    for kind in SPEC_KINDS:
        doc = base_spec(kind)
        if kind.startswith("openapi"):
            doc["info"]["title"] = s
            doc["components"]["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["scopes"]["items.read"] = s
            doc["paths"]["/items"]["get"]["security"] = [{"oauth": ["items.read", "z" * (size // 4)]}]
        elif kind == "discovery":
            doc["title"] = s
            doc["auth"]["oauth2"]["scopes"]["https://items.example.com/auth/items.readonly"]["description"] = s
        elif kind == "mcp":
            doc["tools"][0]["description"] = s
            doc["tools"].append({"name": "t" + s[: size // 4], "inputSchema": {}})
        else:
            doc["name"] = s
            doc["skills"][0]["description"] = s
        cases.append(spec_case(kind, "big-strings", kind, encode(kind, doc)))
    return cases


def ref_loops_and_chains(chain: int = CHAIN) -> list[Case]:
    cases: list[Case] = []
    for kind in ("openapi-json", "openapi-yaml"):
        # A path item pointing at itself, and a two-step loop through components.
        doc = openapi()
        doc["paths"]["/loop"] = {"$ref": "#/paths/~1loop"}
        doc["paths"]["/loop2"] = {"$ref": "#/components/pathItems/a"}
        doc["components"]["pathItems"] = {
            "a": {"$ref": "#/components/pathItems/b"},
            "b": {"$ref": "#/components/pathItems/a"},
        }
        doc["components"]["securitySchemes"]["loop"] = {"$ref": "#/components/securitySchemes/loop"}
        cases.append(spec_case(f"{kind}-loop", "ref-loops", kind, encode(kind, doc)))
        # A chain of `chain` path-item refs ending in the real one; and of scheme refs.
        doc = openapi()
        items = doc["paths"].pop("/items")
        doc["components"]["pathItems"] = {f"p{i}": {"$ref": f"#/components/pathItems/p{i + 1}"} for i in range(chain)}
        doc["components"]["pathItems"][f"p{chain}"] = items
        doc["paths"]["/items"] = {"$ref": "#/components/pathItems/p0"}
        schemes = {f"s{i}": {"$ref": f"#/components/securitySchemes/s{i + 1}"} for i in range(chain)}
        schemes[f"s{chain}"] = copy.deepcopy(OAUTH)
        schemes["oauth"] = {"$ref": "#/components/securitySchemes/s0"}
        doc["components"]["securitySchemes"] = schemes
        cases.append(spec_case(f"{kind}-chain", "ref-chains", kind, encode(kind, doc)))
        # Refs to an external sibling that points back: a cross-document loop.
        doc = openapi()
        doc["paths"]["/items"] = {"$ref": "other.json#/paths/~1items"}
        other = openapi()
        other["paths"]["/items"] = {"$ref": "openapi.json#/paths/~1items"}
        c = spec_case(f"{kind}-external-loop", "ref-loops", kind, encode(kind, doc))
        c.served.append(Served("/other.json", dumps(other)))
        cases.append(c)
    return cases


def hostile_operation_ids() -> list[Case]:
    """Per kind, one spec holding every hostile id (``HOSTILE_IDS``) and a card with one access to each."""
    cases: list[Case] = []
    for kind, info in SPEC_KINDS.items():
        doc = base_spec(kind)
        if kind.startswith("openapi"):
            for i, hid in enumerate(HOSTILE_IDS):
                doc["paths"][f"/h{i}"] = {"get": {"operationId": hid, "responses": {}}}
        elif kind == "discovery":
            methods = doc["resources"]["items"]["methods"]
            for i, hid in enumerate(HOSTILE_IDS):
                methods[f"h{i}"] = dict(methods["list"], id=hid, path=f"h{i}")
        elif kind == "mcp":
            doc["tools"] += [{"name": hid, "inputSchema": {"type": "object"}} for hid in HOSTILE_IDS]
        else:
            doc["skills"] += [
                {"id": hid, "name": f"skill {i}", "description": "d", "tags": []} for i, hid in enumerate(HOSTILE_IDS)
            ]
        body = encode(kind, doc)

        def card(base: str, info: SpecKindInfo = info) -> bytes:
            m = manifest(base + info.path, protocol=info.protocol, resource_path=info.resource_path)
            r, o, a = m["resources"][0], m["operations"][0], m["resource_accesses"][0]
            by_name = info.operation_id is None  # MCP tools and A2A skills are named in resource_path
            m["resources"] = [
                dict(r, id=f"r{i}", spec=dict(r["spec"], resource_path=hid if by_name else r["spec"]["resource_path"]))
                for i, hid in enumerate(HOSTILE_IDS)
            ]
            m["operations"] = [
                dict(
                    o,
                    id=f"o{i}",
                    resource=f"r{i}",
                    **({} if by_name else {"api_operation_spec": {"operation_id": hid}}),
                )
                for i, hid in enumerate(HOSTILE_IDS)
            ]
            m["resource_accesses"] = [dict(a, id=f"a{i}", operation=f"o{i}") for i in range(len(HOSTILE_IDS))]
            return dumps(card_doc(m))

        served = (
            Served(info.path, mcp_tools_result=body)
            if kind == "mcp"
            else Served(info.path, body=body, content_type=info.content_type)
        )
        cases.append(Case(kind, "hostile-operation-ids", kind, card, [served]))
    return cases


def crlf_urls() -> list[Case]:
    cases: list[Case] = []
    for label, suffix in (
        ("raw-crlf", "/openapi.json\r\nX-Injected: 1"),
        ("encoded-crlf", "/openapi.json%0d%0aX-Injected:%201"),
        ("raw-lf-host", "\nevil.example/openapi.json"),
        ("space-header", "/openapi.json HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
        ("nul", "/openapi.json\x00.evil"),
    ):

        def card(base: str, suffix: str = suffix) -> bytes:
            return dumps(card_doc(manifest(base + suffix)))

        cases.append(Case(f"card-{label}", "crlf-urls", "card", card, [Served("/openapi.json", dumps(openapi()))]))
    # A spec whose server URLs / token URLs carry CRLF (reported as data, never requested).
    doc = openapi(servers=[{"url": "https://items.example.com/\r\nX-Injected: 1"}])
    doc["components"]["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["tokenUrl"] = "https://a/\r\nX: 1"
    cases.append(spec_case("openapi-json", "crlf-urls", "openapi-json", dumps(doc)))
    # An A2A card whose interface URL carries CRLF.
    a = a2a_card()
    a["supportedInterfaces"][0]["url"] = "https://items.example.com/a2a\r\nX-Injected: 1"
    cases.append(spec_case("a2a", "crlf-urls", "a2a", dumps(a)))
    # An MCP answer whose next cursor carries CRLF.
    tools = mcp_tools()
    tools["nextCursor"] = "c\r\nX-Injected: 1"
    cases.append(spec_case("mcp", "crlf-urls", "mcp", dumps(tools)))
    return cases


#: Every case's exact outcome, by (class, case), derived by running each and reviewed one by one; the
#: same at the default and the full sizes. tests/adversarial/README.md shows it (``outcome_table``).
OUTCOMES: dict[tuple[str, str], Outcome] = {
    ("deep-nesting", "card-json"): Outcome(2, "limit-exceeded", ()),
    ("deep-nesting", "card-yaml-flow"): Outcome(2, "limit-exceeded", ()),
    ("deep-nesting", "card-yaml-block"): Outcome(2, "limit-exceeded", ()),
    ("deep-nesting", "openapi-json"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("deep-nesting", "openapi-yaml"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("deep-nesting", "discovery"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("deep-nesting", "mcp"): Outcome(3, "spec-unavailable", ("access-unresolved", "spec-unavailable")),
    ("deep-nesting", "a2a"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("deep-nesting", "discovery-resources-450"): Outcome(
        3, "security-undeclared", ("access-undetermined", "security-undeclared")
    ),
    ("huge-arrays", "card-array"): Outcome(0, None, ()),
    ("huge-arrays", "card-accesses"): Outcome(0, None, ()),
    ("huge-arrays", "openapi-json-ops"): Outcome(0, None, ()),
    ("huge-arrays", "openapi-yaml-ops"): Outcome(0, None, ()),
    ("huge-arrays", "discovery-methods"): Outcome(0, None, ()),
    ("huge-arrays", "mcp-tools"): Outcome(0, None, ("mcp-no-authorization",)),
    ("huge-arrays", "a2a-skills"): Outcome(0, None, ()),
    ("huge-arrays", "openapi-alternatives"): Outcome(0, None, ("ambiguous-scope-choice", "undeclared-scope")),
    ("huge-arrays", "openapi-optimiser"): Outcome(0, None, ("ambiguous-scope-choice", "undeclared-scope")),
    ("huge-arrays", "openapi-unknown-operations"): Outcome(
        3, "operation-not-found", ("access-unresolved", "operation-id-not-found", "operation-not-found")
    ),
    ("big-strings", "card"): Outcome(0, None, ("display-name-mismatch",)),
    ("big-strings", "card-operation-id"): Outcome(0, None, ("operation-id-not-found",)),
    ("big-strings", "openapi-json"): Outcome(0, None, ("display-name-mismatch", "undeclared-scope")),
    ("big-strings", "openapi-yaml"): Outcome(0, None, ("display-name-mismatch", "undeclared-scope")),
    ("big-strings", "discovery"): Outcome(0, None, ("display-name-mismatch",)),
    ("big-strings", "mcp"): Outcome(0, None, ("mcp-no-authorization",)),
    ("big-strings", "a2a"): Outcome(0, None, ("display-name-mismatch",)),
    ("ref-loops", "openapi-json-loop"): Outcome(0, None, ()),
    ("ref-chains", "openapi-json-chain"): Outcome(
        3,
        "operation-not-found",
        ("access-unresolved", "operation-id-not-found", "operation-not-found", "ref-unresolved"),
    ),
    ("ref-loops", "openapi-json-external-loop"): Outcome(
        3, "operation-not-found", ("access-unresolved", "operation-id-not-found", "operation-not-found", "ref-cycle")
    ),
    ("ref-loops", "openapi-yaml-loop"): Outcome(0, None, ()),
    ("ref-chains", "openapi-yaml-chain"): Outcome(
        3,
        "operation-not-found",
        ("access-unresolved", "operation-id-not-found", "operation-not-found", "ref-unresolved"),
    ),
    ("ref-loops", "openapi-yaml-external-loop"): Outcome(
        3,
        "operation-not-found",
        ("access-unresolved", "operation-id-not-found", "operation-not-found", "ref-unresolved"),
    ),
    ("yaml-alias-bomb", "card"): Outcome(2, "limit-exceeded", ()),
    ("yaml-alias-bomb", "openapi-yaml"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("yaml-alias-bomb", "card-recursive"): Outcome(2, "bad-input", ()),
    ("duplicate-keys", "card-json"): Outcome(2, "bad-input", ()),
    ("duplicate-keys", "card-yaml"): Outcome(2, "bad-input", ()),
    ("duplicate-keys", "openapi-json"): Outcome(0, None, ("operation-id-not-found",)),
    ("duplicate-keys", "openapi-yaml"): Outcome(3, "unsupported-spec", ("access-unresolved", "unsupported-spec")),
    ("duplicate-keys", "discovery"): Outcome(
        3, "selector-contradiction", ("access-unresolved", "http-method-mismatch")
    ),
    ("duplicate-keys", "mcp"): Outcome(3, "operation-not-found", ("access-unresolved", "operation-not-found")),
    ("duplicate-keys", "a2a"): Outcome(3, "operation-not-found", ("access-unresolved", "operation-not-found")),
    ("bad-utf8", "card-invalid"): Outcome(2, "bad-input", ()),
    ("bad-utf8", "card-overlong-slash"): Outcome(2, "bad-input", ()),
    ("bad-utf8", "card-overlong-nul"): Outcome(2, "bad-input", ()),
    ("bad-utf8", "card-surrogate"): Outcome(2, "bad-input", ()),
    ("bad-utf8", "card-overlong-3byte"): Outcome(2, "bad-input", ()),
    ("bad-utf8", "openapi-json"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("bad-utf8", "openapi-yaml"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("bad-utf8", "discovery"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("bad-utf8", "mcp"): Outcome(3, "spec-unavailable", ("access-unresolved", "spec-unavailable")),
    ("bad-utf8", "a2a"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("bad-utf8", "card-escaped-surrogate"): Outcome(0, None, ()),
    ("nul-bytes", "card-raw-nul"): Outcome(2, "bad-input", ()),
    ("nul-bytes", "card-escaped-nul"): Outcome(0, None, ("operation-id-not-found",)),
    ("nul-bytes", "card-yaml-nul"): Outcome(2, "bad-input", ()),
    ("nul-bytes", "openapi-json"): Outcome(0, None, ("operation-id-not-found",)),
    ("nul-bytes", "openapi-yaml"): Outcome(0, None, ("operation-id-not-found",)),
    ("nul-bytes", "discovery"): Outcome(0, None, ("operation-id-not-found",)),
    ("nul-bytes", "mcp"): Outcome(3, "operation-not-found", ("access-unresolved", "operation-not-found")),
    ("nul-bytes", "a2a"): Outcome(3, "operation-not-found", ("access-unresolved", "operation-not-found")),
    ("nul-bytes", "openapi-raw-nul"): Outcome(
        3, "spec-invalid", ("access-unresolved", "spec-invalid")
    ),
    ("numbers-as-ids", "card"): Outcome(1, "invalid-type", ("invalid-type",)),
    ("numbers-as-ids", "openapi-json"): Outcome(
        0, None, ("invalid-operation", "operation-id-not-found", "undeclared-scope")
    ),
    ("numbers-as-ids", "openapi-yaml"): Outcome(
        0, None, ("invalid-operation", "operation-id-not-found", "undeclared-scope")
    ),
    ("numbers-as-ids", "discovery"): Outcome(
        3,
        "security-undeclared",
        ("access-undetermined", "invalid-security", "operation-id-not-found", "security-undeclared"),
    ),
    ("numbers-as-ids", "mcp"): Outcome(3, "operation-not-found", ("access-unresolved", "operation-not-found")),
    ("numbers-as-ids", "a2a"): Outcome(
        3, "operation-not-found", ("access-unresolved", "operation-not-found", "security-undeclared")
    ),
    ("casefold-collisions", "card"): Outcome(0, None, ("unused-operation", "unused-resource")),
    ("casefold-collisions", "openapi-json"): Outcome(0, None, ()),
    ("casefold-collisions", "openapi-yaml"): Outcome(0, None, ()),
    ("casefold-collisions", "discovery"): Outcome(0, None, ()),
    ("casefold-collisions", "mcp"): Outcome(0, None, ("mcp-no-authorization",)),
    ("casefold-collisions", "a2a"): Outcome(0, None, ()),
    ("hostile-operation-ids", "openapi-json"): Outcome(0, None, ()),
    ("hostile-operation-ids", "openapi-yaml"): Outcome(0, None, ()),
    ("hostile-operation-ids", "discovery"): Outcome(0, None, ()),
    ("hostile-operation-ids", "mcp"): Outcome(
        0, None, ("ignored-api-operation-spec", "mcp-no-authorization", "mcp-unusual-tool-name")
    ),
    ("hostile-operation-ids", "a2a"): Outcome(0, None, ("ignored-api-operation-spec",)),
    ("crlf-urls", "card-raw-crlf"): Outcome(1, "invalid-spec-url", ("access-unresolved", "invalid-spec-url")),
    ("crlf-urls", "card-encoded-crlf"): Outcome(3, "spec-unavailable", ("access-unresolved", "spec-unavailable")),
    ("crlf-urls", "card-raw-lf-host"): Outcome(1, "invalid-spec-url", ("access-unresolved", "invalid-spec-url")),
    ("crlf-urls", "card-space-header"): Outcome(1, "invalid-spec-url", ("access-unresolved", "invalid-spec-url")),
    ("crlf-urls", "card-nul"): Outcome(1, "invalid-spec-url", ("access-unresolved", "invalid-spec-url")),
    ("crlf-urls", "openapi-json"): Outcome(0, None, ()),
    ("crlf-urls", "a2a"): Outcome(0, None, ()),
    ("crlf-urls", "mcp"): Outcome(3, "spec-unavailable", ("access-unresolved", "spec-unavailable")),
}


def outcome_table(cases: list[Case] | None = None) -> str:
    """The Markdown table of every case's exact outcome, as tests/adversarial/README.md shows it."""
    rows = [
        "| class | case | kind | exit | code | diagnostics |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in cases if cases is not None else all_cases(heavy=False):
        o = c.outcome
        assert o is not None
        code = f"`{o.code}`" if o.code else "-"
        if o.bug:
            code += " (xfail: bug)"
        diags = ", ".join(f"`{d}`" for d in o.diagnostics) or "-"
        rows.append(f"| {c.klass} | {c.name} | {c.kind} | {o.exit} | {code} | {diags} |")
    return "\n".join(rows) + "\n"


def all_cases(*, heavy: bool = True) -> list[Case]:
    """Every case, with its outcome; ``heavy=False`` scales the sizes down for the default run (same shapes)."""
    if heavy:
        groups = [
            deep_nesting(),
            huge_arrays(),
            big_strings(),
            ref_loops_and_chains(),
        ]
    else:
        groups = [deep_nesting(2_000), huge_arrays(20_000), big_strings(256 * 1024), ref_loops_and_chains(300)]
    groups += [yaml_alias_bombs(), duplicate_keys(), bad_utf8(), nul_bytes(), numbers_as_ids(), casefold_collisions()]
    groups += [hostile_operation_ids(), crlf_urls()]
    cases = [c for g in groups for c in g]
    for c in cases:
        c.outcome = OUTCOMES[(c.klass, c.name)]
    return cases


if __name__ == "__main__":
    # Regenerates the outcome table of tests/adversarial/README.md (between its hostile-outcomes markers).
    import pathlib
    import re

    readme = pathlib.Path(__file__).with_name("README.md")
    text = readme.read_text("utf-8")
    begin, end = "<!-- hostile-outcomes:begin -->\n", "<!-- hostile-outcomes:end -->"
    table = outcome_table()
    pattern = re.escape(begin) + ".*?" + re.escape(end)
    readme.write_text(re.sub(pattern, lambda _m: begin + table + end, text, flags=re.S), "utf-8")
