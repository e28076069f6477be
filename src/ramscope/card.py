"""Loading an agent card (or a bare manifest) and finding its manifest.

Accepted shapes (``docs/cli.md``):

1. an A2A AgentCard (v0.3 or v1.0) with a top-level ``resourceAccessManifest``
   (or ``resource_access_manifest``);
2. an AgentCard whose ``capabilities.extensions[]`` entry carries the manifest
   in ``params``;
3. a bare manifest (``resources`` / ``operations`` / ``resource_accesses``).

The rest of the card is kept as it was read, for later stages (name, skills,
security schemes) and for the report.
"""

from __future__ import annotations

import enum
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ._parse import CARD_LIMITS, Limits, ParsedDocument, parse_bytes, read_bytes
from .diagnostics import Diagnostic, Severity, join_pointer, rule
from .errors import InputError
from .manifest import ResourceAccessManifest, parse_manifest

__all__ = ["MANIFEST_KEYS", "RAM_EXTENSION_URI", "Card", "CardShape", "load_card"]

#: The URI ramscope writes for the RAM extension entry. Any extension whose
#: params carry a manifest is accepted on input; the proposal names no URI yet.
RAM_EXTENSION_URI = "https://github.com/a2aproject/A2A/issues/1426#resource-access-manifest"

CARD_KEYS = ("resourceAccessManifest", "resource_access_manifest")
MANIFEST_KEYS = frozenset({"resources", "operations", "resource_accesses", "resourceAccesses"})

NO_MANIFEST = rule("no-manifest", Severity.ERROR, "The document carries no Resource Access Manifest.", stage="parse")
MULTIPLE_MANIFESTS = rule(
    "multiple-manifests",
    Severity.ERROR,
    "The card carries more than one manifest (top level and/or extensions); which one applies is unclear.",
    stage="parse",
)


class CardShape(enum.Enum):
    AGENT_CARD = "agent-card"
    EXTENSION = "extension"
    MANIFEST = "manifest"


@dataclass(frozen=True, slots=True)
class Card:
    """A loaded card: its manifest, where it was found, and the whole document."""

    manifest: ResourceAccessManifest
    shape: CardShape
    #: JSON pointer of the manifest object within ``document`` ("" for a bare manifest).
    manifest_pointer: str
    #: The whole input document, as read (a read-only view; do not mutate nested values).
    document: Mapping[str, Any]
    source: str
    sha256: str
    #: Problems found while loading (unknown fields, wrong types ...); see ``ramscope.validate``.
    load_diagnostics: tuple[Diagnostic, ...] = ()
    #: False when the document carries no manifest at all (``manifest`` is then empty).
    manifest_found: bool = True
    _parsed: ParsedDocument | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        v = self.document.get("name") if self.shape is not CardShape.MANIFEST else None
        return v if isinstance(v, str) else ""

    @property
    def description(self) -> str:
        v = self.document.get("description") if self.shape is not CardShape.MANIFEST else None
        return v if isinstance(v, str) else ""

    @property
    def version(self) -> str:
        v = self.document.get("version") if self.shape is not CardShape.MANIFEST else None
        return v if isinstance(v, str) else ""

    @property
    def card_version(self) -> str | None:
        """``"1.0"``, ``"0.3"`` (both when a card serves both shapes, 1.0 wins), or None."""
        if self.shape is CardShape.MANIFEST:
            return None
        if "supportedInterfaces" in self.document or "securityRequirements" in self.document:
            return "1.0"
        pv = self.document.get("protocolVersion")
        if isinstance(pv, str):
            return pv
        return None

    @property
    def skills(self) -> list[Any]:
        v = self.document.get("skills")
        return list(v) if isinstance(v, list) else []

    @property
    def security_schemes(self) -> Mapping[str, Any]:
        v = self.document.get("securitySchemes")
        return v if isinstance(v, dict) else {}

    def position(self, pointer: str) -> tuple[int, int] | None:
        """1-based (line, column) in the source file of the value at ``pointer``."""
        return self._parsed.position(pointer) if self._parsed else None


def load_card(
    source: str | os.PathLike[str] | bytes | Mapping[str, Any],
    *,
    name: str | None = None,
    limits: Limits = CARD_LIMITS,
) -> Card:
    """Load a card from a path (``-`` for stdin), raw bytes, or an already parsed mapping.

    Raises :class:`~ramscope.errors.InputError` when the input cannot be read or is not
    a JSON/YAML object; everything else is reported in ``Card.load_diagnostics``.
    """
    parsed: ParsedDocument | None = None
    if isinstance(source, Mapping):
        document: Any = source
        label = name or "<dict>"
        import orjson  # noqa: PLC0415 - only this path needs a canonical encoding

        try:
            digest = hashlib.sha256(orjson.dumps(dict(source), option=orjson.OPT_SORT_KEYS)).hexdigest()
        except TypeError as exc:
            raise InputError(f"not JSON-compatible: {exc}", source=label) from None
    else:
        if isinstance(source, bytes):
            data, label = source, name or "<bytes>"
        else:
            data, label = read_bytes(source, max_bytes=limits.max_bytes)
            label = name or label
        digest = hashlib.sha256(data).hexdigest()
        fmt = None
        lower = label.lower()
        if lower.endswith((".yaml", ".yml")):
            fmt = "yaml"
        elif lower.endswith(".json"):
            fmt = "json"
        parsed = parse_bytes(data, source=label, limits=limits, fmt=fmt)  # type: ignore[arg-type]
        document = parsed.value
    if not isinstance(document, Mapping):
        kind = "an array" if isinstance(document, list) else f"a {type(document).__name__}"
        raise InputError(f"top level is {kind}; expected an object (an agent card or a manifest)", source=label)

    diags: list[Diagnostic] = []
    shape, pointer, raw = _locate(document, diags)
    if raw is None:
        manifest = ResourceAccessManifest()
    else:
        manifest, parse_diags = parse_manifest(raw, pointer=pointer)
        diags.extend(parse_diags)
    return Card(
        manifest=manifest,
        shape=shape,
        manifest_pointer=pointer,
        document=MappingProxyType(dict(document)),
        source=label,
        sha256=digest,
        load_diagnostics=tuple(diags),
        manifest_found=raw is not None,
        _parsed=parsed,
    )


def _locate(doc: Mapping[str, Any], diags: list[Diagnostic]) -> tuple[CardShape, str, Any]:
    found: list[tuple[CardShape, str, Any]] = []
    for key in CARD_KEYS:
        if key in doc:
            found.append((CardShape.AGENT_CARD, join_pointer("", key), doc[key]))
    caps = doc.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, Mapping) else None
    if isinstance(exts, list):
        for i, ext in enumerate(exts):
            params = ext.get("params") if isinstance(ext, Mapping) else None
            if not isinstance(params, Mapping):
                continue
            for key in CARD_KEYS:
                if key in params:
                    ptr = join_pointer("", "capabilities", "extensions", i, "params", key)
                    found.append((CardShape.EXTENSION, ptr, params[key]))
    if not found:
        if MANIFEST_KEYS & doc.keys():
            return CardShape.MANIFEST, "", doc
        diags.append(
            NO_MANIFEST(
                "",
                "no Resource Access Manifest found",
                hint="expected a top-level 'resourceAccessManifest', an entry of 'capabilities.extensions' "
                "whose 'params' carry one, or a bare manifest with 'resources', 'operations' and "
                "'resource_accesses'",
            )
        )
        return CardShape.AGENT_CARD, "", None
    if len(found) > 1:
        first = found[0]
        others = ", ".join(ptr for _, ptr, _ in found[1:])
        same = all(v == first[2] for _, _, v in found[1:])
        diags.append(
            MULTIPLE_MANIFESTS(
                first[1],
                f"the card carries {len(found)} manifests (also at {others}); the one at {first[1]} is used",
                severity=Severity.WARNING if same else Severity.ERROR,
                hint="identical copies" if same else "they differ: keep exactly one",
            )
        )
    return found[0]
