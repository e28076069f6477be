"""Opt-in strict validation of an OpenAPI spec, in a sandbox (``pip install 'ramscope[validate]'``).

Indexing never validates: it reads only what it needs, fast, and reports what
it cannot read. Strict validation (openapi-spec-validator, against the OpenAPI
meta-schemas) is for a reviewer who wants to know whether a spec is well formed
at all. It costs seconds to minutes on large specs (15 s on GitHub's), so it is
opt-in.

The validator must never do I/O on a stranger's behalf. Measured: its stack
(jsonschema-path) reads ``file:`` URLs and opens sockets for any ``$ref`` it
cannot resolve locally, and falls back to ``urlopen`` for every URL scheme it
has no handler for. So, before and during validation:

1. a spec with any ``$ref`` that is not a same-document ``#...`` ref is not
   validated at all (a ``spec-validation-refused`` diagnostic lists them);
2. the validator gets a handler table that claims every URL scheme and refuses
   each retrieval, so a ref rebased by ``$id`` or anything else that reaches for
   a URL fails inside the validator instead of fetching.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any, NoReturn

from ..diagnostics import Diagnostic, Severity, escape_pointer_token, rule
from ..documents import FetchedSpec
from ._doc import parse_spec_body

__all__ = ["external_refs", "validate_spec"]

_S = "spec"
SPEC_VALIDATION_FAILED = rule(
    "spec-validation-failed",
    Severity.WARNING,
    "Strict validation (--validate-specs) found the spec not to conform to its OpenAPI version.",
    stage=_S,
)
SPEC_VALIDATION_REFUSED = rule(
    "spec-validation-refused",
    Severity.WARNING,
    "Strict validation was not run: the spec has $refs to other documents, which the validator would fetch.",
    stage=_S,
)
SPEC_VALIDATION_UNAVAILABLE = rule(
    "spec-validation-unavailable",
    Severity.INFO,
    "Strict validation was asked for but is not installed (pip install 'ramscope[validate]'), or does not apply.",
    stage=_S,
)

SANDBOX_BASE_URI = "urn:ramscope:sandbox"


class RefusedRetrieval(Exception):
    """Raised inside the validator when it reaches for any URL."""


def _refuse(uri: str) -> NoReturn:
    raise RefusedRetrieval(f"retrieval of {uri!r} refused by ramscope's sandbox")


class _RefuseEveryScheme(dict[str, Any]):
    """A handler table that claims every URL scheme, so jsonschema-path never falls back to urlopen."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        return _refuse

    def get(self, key: str, default: Any = None) -> Any:
        return _refuse


def external_refs(doc: Any, limit: int = 20) -> list[tuple[str, str]]:
    """(pointer, ref) of ``$ref`` values that leave the document, at most ``limit``; an iterative walk."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack and len(out) < limit:
        node, ptr = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not (isinstance(ref, str) and ref.startswith("#")):
                out.append((ptr + "/$ref", str(ref)))
            stack.extend((v, f"{ptr}/{escape_pointer_token(k)}") for k, v in node.items() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, f"{ptr}/{i}") for i, v in enumerate(node) if isinstance(v, dict | list))
    return out


def _errors(doc: Any) -> Iterator[Any]:
    # Imported by name: an optional dependency (the `validate` extra), absent from a plain install.
    schema_path = importlib.import_module("jsonschema_path").SchemaPath
    get_validator_cls = importlib.import_module("openapi_spec_validator.shortcuts").get_validator_cls
    cls = get_validator_cls(doc)
    path = schema_path.from_dict(doc, base_uri=SANDBOX_BASE_URI, handlers=_RefuseEveryScheme())
    yield from cls(path).iter_errors()


def _short(text: str, limit: int = 300) -> str:
    """Validator messages quote whole subtrees of the spec; keep them readable."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_spec(spec: FetchedSpec, *, max_errors: int = 20) -> tuple[Diagnostic, ...]:
    """Strictly validate an OpenAPI spec, sandboxed; the findings as diagnostics (``()``: valid)."""
    from . import ADAPTERS, SpecKind, _gc_paused  # noqa: PLC0415 - the package imports this module

    url = spec.final_url or spec.url
    with _gc_paused():
        doc = parse_spec_body(spec.body, source=url, media_type=spec.media_type)
    if ADAPTERS[SpecKind.OPENAPI].sniff(doc) is None:
        return (SPEC_VALIDATION_UNAVAILABLE("", f"{url}: strict validation applies to OpenAPI specs only"),)
    refs = external_refs(doc)
    if refs:
        shown = "; ".join(f"{ptr}: {ref!r}" for ptr, ref in refs[:5])
        return (
            SPEC_VALIDATION_REFUSED(
                refs[0][0],
                f"{url}: not validated strictly, it has $refs to other documents ({shown})",
                data={"refs": [r for _, r in refs]},
            ),
        )
    try:
        errors = _errors(doc)
        out: list[Diagnostic] = []
        for err in errors:
            where = "".join("/" + escape_pointer_token(p) for p in getattr(err, "absolute_path", ()))
            out.append(SPEC_VALIDATION_FAILED(where, f"{url}: {_short(str(getattr(err, 'message', err)))}"))
            if len(out) >= max_errors:
                break
    except ImportError:
        return (
            SPEC_VALIDATION_UNAVAILABLE(
                "", "strict validation needs openapi-spec-validator: pip install 'ramscope[validate]'"
            ),
        )
    except RefusedRetrieval as exc:
        return (SPEC_VALIDATION_REFUSED("", f"{url}: {exc}"),)
    except Exception as exc:
        return (SPEC_VALIDATION_FAILED("", f"{url}: the validator failed: {type(exc).__name__}: {_short(str(exc))}"),)
    return tuple(out)
