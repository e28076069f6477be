"""Per-skill permission sets: an AgentCard extension mapping each skill to the accesses it uses.

The RAM proposal leaves partitioning the manifest by skill to a future proposal; until then
a card declares it as an A2A extension (``capabilities.extensions[]``), the way A2A cards carry
any extension: a URI naming it, and typed params.

.. code-block:: json

    {"uri": "https://github.com/a2aproject/A2A/issues/1426#per-skill-permission-sets/v1",
     "description": "Which resource accesses each skill may use",
     "required": false,
     "params": {"skills": [
        {"skillId": "book-flight", "resourceAccesses": ["create-personal-calendar-event-..."]},
        {"skillId": "small-talk", "resourceAccesses": []}]}}

The params are modelled by frozen dataclasses (:class:`SkillPermissionSets`,
:class:`SkillAccesses`), with a JSON Schema (``ramscope schema skills-extension``) and an exact
round trip (``from_params(x.to_params()) == x``; snake_case ``skill_id`` /
``resource_accesses`` are read too). ``derive`` gives each mapped skill its own cumulative
tiers (the report's ``skills`` section); :func:`restrict_report_dict` and
:func:`restrict_report` turn a report into one skill's (``derive --skill``, ``consent --skill``,
``export --skill``), from the report alone. A card without the extension behaves as before.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, Severity, join_pointer, rule
from ..errors import InputError

if TYPE_CHECKING:
    from ..card import Card
    from ..outputs.report import Report

__all__ = [
    "SKILLS_EXTENSION_URI",
    "SkillAccesses",
    "SkillPermissionSets",
    "find_skill_extension",
    "restrict_report",
    "restrict_report_dict",
    "validate_skill_extension",
]

SKILLS_EXTENSION_URI = "https://github.com/a2aproject/A2A/issues/1426#per-skill-permission-sets/v1"

SKILL_EXTENSION_INVALID = rule(
    "skill-extension-invalid",
    Severity.ERROR,
    "The per-skill permission-set extension is malformed; no skill's permissions can be derived from it.",
    stage="skills",
)
SKILL_UNKNOWN = rule(
    "skill-unknown", Severity.ERROR, "The per-skill extension names a skill the card does not declare.", stage="skills"
)
SKILL_ACCESS_UNKNOWN = rule(
    "skill-access-unknown",
    Severity.ERROR,
    "The per-skill extension gives a skill an access id the manifest does not define.",
    stage="skills",
)
SKILL_DUPLICATE = rule(
    "skill-duplicate", Severity.ERROR, "The per-skill extension maps the same skill twice.", stage="skills"
)
ACCESS_IN_NO_SKILL = rule(
    "access-in-no-skill",
    Severity.WARNING,
    "No skill uses this access, though the card maps its skills to accesses.",
    stage="skills",
)
SKILL_UNMAPPED = rule(
    "skill-unmapped",
    Severity.WARNING,
    "A skill of the card is missing from the per-skill extension: which accesses it uses is unknown.",
    stage="skills",
)
SKILL_USES_NONE = rule(
    "skill-uses-no-access",
    Severity.INFO,
    "A skill is mapped to no access at all: it needs no external resource.",
    stage="skills",
)


@dataclass(frozen=True, slots=True)
class SkillAccesses:
    """One skill and the resource-access ids (of the card's manifest) it may use."""

    skill_id: str
    resource_accesses: tuple[str, ...] = ()
    #: JSON pointer of this entry in the card (outside equality).
    pointer: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"skillId": self.skill_id, "resourceAccesses": list(self.resource_accesses)}


@dataclass(frozen=True, slots=True)
class SkillPermissionSets:
    """The extension's params: every mapped skill, in the card's order."""

    skills: tuple[SkillAccesses, ...] = ()
    pointer: str = field(default="", compare=False)

    def get(self, skill_id: str) -> SkillAccesses | None:
        return next((s for s in self.skills if s.skill_id == skill_id), None)

    @property
    def skill_ids(self) -> list[str]:
        return [s.skill_id for s in self.skills]

    def to_params(self) -> dict[str, Any]:
        return {"skills": [s.to_dict() for s in self.skills]}

    def to_extension(self, *, description: str = "", required: bool = False) -> dict[str, Any]:
        """The ``capabilities.extensions[]`` entry (A2A ``AgentExtension``) carrying these params."""
        out: dict[str, Any] = {"uri": SKILLS_EXTENSION_URI}
        if description:
            out["description"] = description
        out["required"] = required
        out["params"] = self.to_params()
        return out

    @classmethod
    def from_params(cls, params: Any, *, pointer: str = "") -> SkillPermissionSets:
        """Parse the params; raises :class:`InputError` naming the JSON pointer of a bad value."""
        sets, diags = _parse(params, pointer)
        if diags:
            raise InputError(diags[0].message, pointer=diags[0].path)
        return sets


def _parse(params: Any, pointer: str) -> tuple[SkillPermissionSets, list[Diagnostic]]:
    diags: list[Diagnostic] = []

    def bad(where: str, what: str) -> None:
        diags.append(SKILL_EXTENSION_INVALID(where, what))

    if not isinstance(params, Mapping):
        bad(pointer, "the extension's params must be an object with a 'skills' list")
        return SkillPermissionSets(pointer=pointer), diags
    raw = params.get("skills")
    if not isinstance(raw, list):
        bad(join_pointer(pointer, "skills"), "'skills' must be a list of {skillId, resourceAccesses}")
        return SkillPermissionSets(pointer=pointer), diags
    out: list[SkillAccesses] = []
    for i, entry in enumerate(raw):
        where = join_pointer(pointer, "skills", i)
        if not isinstance(entry, Mapping):
            bad(where, "each entry must be an object {skillId, resourceAccesses}")
            continue
        id_key = "skillId" if "skillId" in entry else "skill_id"
        acc_key = "resourceAccesses" if "resourceAccesses" in entry else "resource_accesses"
        if "skillId" in entry and "skill_id" in entry:
            bad(join_pointer(where, "skill_id"), "the skill id is given twice (skillId and skill_id)")
        skill_id = entry.get(id_key)
        if not isinstance(skill_id, str) or not skill_id:
            bad(join_pointer(where, id_key), "skillId must be a non-empty string")
            continue
        accesses = entry.get(acc_key, [])
        if not isinstance(accesses, list) or not all(isinstance(x, str) for x in accesses):
            bad(join_pointer(where, acc_key), "resourceAccesses must be a list of access ids (strings)")
            continue
        out.append(SkillAccesses(skill_id, tuple(accesses), where))
    return SkillPermissionSets(tuple(out), pointer), diags


def find_skill_extension(card: Card) -> tuple[SkillPermissionSets | None, list[Diagnostic]]:
    """The card's per-skill extension (``None`` when it carries none) and any parse problems."""
    caps = card.document.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, Mapping) else None
    if not isinstance(exts, list):
        return None, []
    found = [
        (i, ext) for i, ext in enumerate(exts) if isinstance(ext, Mapping) and ext.get("uri") == SKILLS_EXTENSION_URI
    ]
    if not found:
        return None, []
    i, ext = found[0]
    pointer = join_pointer("", "capabilities", "extensions", i, "params")
    sets, diags = _parse(ext.get("params"), pointer)
    for j, _ in found[1:]:
        diags.append(
            SKILL_EXTENSION_INVALID(
                join_pointer("", "capabilities", "extensions", j),
                f"the per-skill extension is given more than once; the one at extensions/{i} is used",
            )
        )
    return sets, diags


def _card_skill_ids(card: Card) -> dict[str, str]:
    """Skill id -> its pointer in the card."""
    out: dict[str, str] = {}
    for i, s in enumerate(card.skills):
        if isinstance(s, Mapping) and isinstance(s.get("id"), str):
            out.setdefault(s["id"], join_pointer("", "skills", i, "id"))
    return out


def validate_skill_extension(card: Card) -> list[Diagnostic]:
    """The extension's problems: malformed, unknown skills or accesses, accesses or skills left out."""
    sets, diags = find_skill_extension(card)
    if sets is None:
        return diags
    card_skills = _card_skill_ids(card)
    access_ids = {a.id for a in card.manifest.resource_accesses if a.id}
    seen: set[str] = set()
    used: set[str] = set()
    for s in sets.skills:
        if s.skill_id in seen:
            diags.append(SKILL_DUPLICATE(s.pointer, f"skill {s.skill_id!r} is mapped twice"))
        seen.add(s.skill_id)
        if s.skill_id not in card_skills:
            known = ", ".join(sorted(card_skills)) or "none"
            diags.append(
                SKILL_UNKNOWN(
                    join_pointer(s.pointer, "skillId"),
                    f"skill {s.skill_id!r} is not among the card's skills",
                    hint=f"the card's skills: {known}",
                )
            )
        if not s.resource_accesses:
            diags.append(SKILL_USES_NONE(s.pointer, f"skill {s.skill_id!r} uses no resource access"))
        for k, aid in enumerate(s.resource_accesses):
            used.add(aid)
            if aid not in access_ids:
                diags.append(
                    SKILL_ACCESS_UNKNOWN(
                        join_pointer(s.pointer, "resourceAccesses", k),
                        f"skill {s.skill_id!r} names access {aid!r}, which the manifest does not define",
                    )
                )
    for skill_id, ptr in card_skills.items():
        if skill_id not in seen:
            diags.append(SKILL_UNMAPPED(ptr, f"skill {skill_id!r} is not in the per-skill extension"))
    for a in card.manifest.resource_accesses:
        if a.id and a.id not in used:
            diags.append(ACCESS_IN_NO_SKILL(a.loc.pointer, f"no skill uses access {a.id!r}"))
    return diags


def skill_members(sets: SkillPermissionSets, access_ids: Iterable[str]) -> dict[str, list[str]]:
    """Each mapped skill's accesses that the manifest defines, in manifest order."""
    ids = list(access_ids)
    return {s.skill_id: [a for a in ids if a in set(s.resource_accesses)] for s in sets.skills}


def _unknown_skill(skill: str, known: Sequence[str], source: str) -> InputError:
    if not known:
        return InputError(
            f"--skill {skill!r}: the card carries no per-skill permission sets (extension {SKILLS_EXTENSION_URI})",
            source=source or None,
        )
    return InputError(
        f"--skill {skill!r}: no such skill in the card's per-skill extension; known: {', '.join(known)}",
        source=source or None,
    )


_ACCESS_POINTER = re.compile(r"/(?:resource_accesses|resourceAccesses)/(\d+)(?:/|$)")


def _other_access(path: str, all_ids: Sequence[str], members: set[str]) -> bool:
    """Whether a diagnostic at ``path`` concerns an access outside the skill (reports list every
    access in manifest order, so the index in the pointer names it)."""
    m = _ACCESS_POINTER.search(path or "")
    if m is None:
        return False
    i = int(m.group(1))
    return i < len(all_ids) and all_ids[i] not in members


def restrict_report_dict(report: Mapping[str, Any], skill: str) -> dict[str, Any]:
    """One skill's report: its accesses only, its own cumulative tiers (from the ``skills`` section)."""
    skills = report.get("skills")
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    source = str(card.get("source", "")) if isinstance(card, Mapping) else ""
    if not isinstance(skills, Mapping) or skill not in skills:
        raise _unknown_skill(skill, list(skills) if isinstance(skills, Mapping) else [], source)
    entry = skills[skill]
    members = set(entry.get("accesses") or [])
    out = dict(report)
    all_ids = [str(a.get("id")) for a in report.get("accesses") or [] if isinstance(a, Mapping)]
    out["accesses"] = [a for a in report.get("accesses") or [] if isinstance(a, Mapping) and a.get("id") in members]
    out["diagnostics"] = [
        d
        for d in report.get("diagnostics") or []
        if not (isinstance(d, Mapping) and _other_access(str(d.get("path", "")), all_ids, members))
    ]
    out["tiers"] = entry["tiers"]
    out["complete"] = all(a.get("complete") is not False for a in out["accesses"])
    out["skills"] = {skill: entry}
    out["skill"] = skill
    return out


def restrict_report(report: Report, skill: str) -> Report:
    """:func:`restrict_report_dict` for the typed report (``derive --format text``, ``consent``)."""
    skills = report.skills or {}
    if skill not in skills:
        raise _unknown_skill(skill, list(skills), report.card_source)
    entry = skills[skill]
    members = set(entry.accesses)
    all_ids = [a.id for a in report.accesses]
    return dataclasses.replace(
        report,
        accesses=[a for a in report.accesses if a.id in members],
        diagnostics=[(d, src) for d, src in report.diagnostics if not _other_access(d.path, all_ids, members)],
        tiers=entry.tiers,
        skills={skill: entry},
        skill=skill,
    )
