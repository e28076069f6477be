"""Microsoft Graph's permissions classed from their names and Microsoft's consent texts.

A Graph permission is named ``Resource.Operation[.Qualifier...]`` (``Mail.ReadBasic``,
``Sites.Selected``, ``Files.ReadWrite.AppFolder``, ``ChatMember.Read.Chat``). Microsoft's
permissions reference (https://learn.microsoft.com/graph/permissions-overview#permissions-naming-pattern)
gives the parts their meaning, which these rules follow:

- the **operation** sets the level: ``Read*`` reads; ``ReadBasic`` reads a basic property set (a
  limit, said in its own description: "except body, previewBody, attachments"); ``ReadWrite*`` and
  the verbs (``Send``, ``Create``, ``Delete``, ``Upload``, ``EnableDisable`` ...) write; ``Manage``,
  ``FullControl`` and ``AccessAsUser`` (everything the signed-in user may do) manage;
- the **qualifier** narrows or widens the data: ``.All`` = every item the caller may see in the
  organisation; ``.Shared`` = the user's own **and** what others shared or delegated to them
  (broader, not a slice); ``.Selected`` / ``SelectedOperations`` = only the resources granted to this
  app one by one; ``.OwnedBy`` / ``.ManagedBy`` / ``.IdentityParentedBy`` = only objects this app owns
  or manages; ``.CreatedByApp`` = only items this app created; ``.AppFolder`` = only the app's own
  folder; ``.Chat`` / ``.Group`` / ``WhereInstalled`` = resource-specific consent: only the chat or
  team where the Teams app is installed; ``Self`` = only the app itself;
- the **scheme** sets the principal: application permissions are held by the app without a signed-in
  user (``app_only``). Delegated permissions act within the signed-in user's own rights, so none is an
  "administrator's" permission in the sense of :mod:`.reach`, even where an administrator must consent.
"""

from __future__ import annotations

import re

from .reach import Level, Principal, Reach

__all__ = ["classify_graph"]

_SOURCE = "https://learn.microsoft.com/graph/permissions-overview#permissions-naming-pattern"

#: Operations that change data (the rest of the name's verbs, anything not a read, also write).
_MANAGE_OPS = frozenset({"Manage", "FullControl", "AccessAsUser", "PrivilegedOperations"})

#: (test on the parts, slice tag, condition)
_SLICES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"^Files\.Read(?:Write)?\.Selected$"),
        "user-selected",
        "only files the user opens with this app ('Open with'), for a few hours after each selection",
    ),
    (
        re.compile(r"(?:^|\.)(?:Selected|SelectedOperations)(?:\.|$)"),
        "selected",
        "only the resources (site collections, lists, items, files, containers) granted to this app one by one",
    ),
    (re.compile(r"\.OwnedBy$"), "owned-by-app", "only objects this app created or owns"),
    (re.compile(r"\.ManagedBy$"), "managed-by-app", "only objects that name this app as their manager"),
    (re.compile(r"\.IdentityParentedBy$"), "parented-by-app", "only agent identities this app is the parent of"),
    (re.compile(r"\.CreatedByApp$"), "created-by-app", "only items this app created"),
    (re.compile(r"\.AppFolder$"), "app-folder", "only the app's own folder in the user's OneDrive (Apps/<app>)"),
    (
        re.compile(r"\.WhereInstalled$"),
        "where-installed",
        "only chats where the app's Teams app is installed",
    ),
    (
        re.compile(r"\.(?:Chat|Group)$|^Teams[A-Za-z]*\.[A-Za-z]+\.User$"),
        "resource-specific",
        "only the chat, team or user where the Teams app is installed (resource-specific consent)",
    ),
    (
        re.compile(r"^[^.]+\.[A-Za-z]*Self[A-Za-z]*(?:\.|$)"),
        "self",
        "only this app itself (its own installation or its own tabs)",
    ),
    (
        re.compile(r"^[^.]+\.[A-Za-z]*Selected[A-Za-z]*(?:\.|$)"),
        "selected",
        "only the Teams apps selected for this app",
    ),
)

#: The clause of a ReadBasic permission's description that says what it leaves out.
_LEAVES_OUT = re.compile(r"((?:except|excluding|without reading|does not (?:allow|give))\b[^.]*)", re.IGNORECASE)
_DEFUNCT = re.compile(r"\bno longer has any effect\b", re.IGNORECASE)


def _level(op: str) -> tuple[Level, str]:
    if op in _MANAGE_OPS:
        return Level.MANAGE, f"the operation {op!r} says full control or administration"
    if op.startswith("ReadWrite") or op == "WriteWrite":
        return Level.WRITE, f"the operation {op!r} reads and writes"
    if op.startswith("Read"):
        return Level.READ, f"the operation {op!r} reads"
    if op in ("Selected", "SelectedOperations"):
        return Level.WRITE, "what it may do per resource is set when the resource is granted (up to full control)"
    return Level.WRITE, f"the operation {op!r} acts on the data (more than reading)"


def _limits(op: str, description: str) -> tuple[str, ...]:
    if "Basic" not in op:
        return ()
    m = _LEAVES_OUT.search(description)
    said = m.group(1).strip().rstrip(",;") if m else ""
    if said:
        return (f"basic properties only ({said})",)
    return ("basic properties only, as Microsoft defines them per resource",)


def classify_graph(scope: str, name: str, description: str, *, app_only: bool) -> Reach:
    """The class of Graph permission ``name`` (see the module docstring)."""
    parts = name.split(".")
    op = parts[1] if len(parts) > 1 else ""
    level, why = _level(op)
    slice_, condition = "", ""
    for pattern, tag, cond in _SLICES:
        if pattern.search(name):
            slice_, condition = tag, cond
            break
    whys = [why]
    if "Shared" in parts[2:]:
        whys.append("'.Shared' reaches the user's own data and what others shared or delegated to them (broader)")
    elif "All" in parts[2:]:
        whys.append("'.All' reaches every item the caller may see in the organisation")
    principal = Principal.APP if app_only else Principal.USER
    if app_only:
        whys.append("an application permission: the app holds it without a signed-in user")
    deprecated = ""
    if _DEFUNCT.search(description):
        deprecated = "Microsoft: this permission no longer has any effect"
    return Reach(
        scope,
        level,
        principal,
        slice=slice_,
        condition=condition,
        limits=_limits(op, description),
        deprecated=deprecated,
        source=_SOURCE,
        why="; ".join(whys),
    )
