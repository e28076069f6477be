"""A delegation cycle A -> B -> A from a cassette: each agent's index exposes its card (with the manifest naming
the other) and the URL the card finally came from, which is what identifies an agent when following manifests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ramscope import InteractionProtocol, load_card
from ramscope.config import Settings
from ramscope.derive.resolve import Target, resolve
from ramscope.specs import SchemeRequirement, SpecIndex, SpecKind, load_index
from ramscope.store import SpecStore

MakeSettings = Callable[..., Settings]
CASSETTE = Path(__file__).parent / "fixtures" / "cassettes" / "a2a-cycle.yaml"
A_CARD = "https://agent-a.example.com/.well-known/agent-card.json"
B_BASE = "https://agent-b.example.com"
B_CARD = "https://agent-b.example.com/.well-known/agent-card.json"


def _settings(make_settings: MakeSettings) -> Settings:
    return make_settings(cassette=CASSETTE, allow_private_network=False)


def _remote_a2a_urls(index: SpecIndex) -> list[str]:
    """The A2A spec URLs named by the manifest the remote card carries (as the derive engine reads them)."""
    card = load_card(index.extra["card"], name=index.extra["card_url"])
    return [r.spec_url for r in card.manifest.resources if r.interaction_protocol is InteractionProtocol.A2A]


def test_each_index_exposes_the_other_agents_url(make_settings: MakeSettings) -> None:
    """A's card names B (by base URL), B's names A (by card URL, in a capabilities extension)."""
    with SpecStore(_settings(make_settings)) as store:
        a = load_index(A_CARD, store, kind_hint=SpecKind.A2A)
        b = load_index(B_BASE, store, kind_hint=SpecKind.A2A)
    assert (a.extra["card_url"], a.extra["has_manifest"]) == (A_CARD, True)
    assert (b.extra["card_url"], b.extra["has_manifest"]) == (B_CARD, True)
    assert _remote_a2a_urls(a) == [B_BASE]
    assert _remote_a2a_urls(b) == [A_CARD]


def test_following_the_manifests_comes_back_to_a(make_settings: MakeSettings) -> None:
    """From A, fetching each named agent gives B, then A again: the final card URL closes the cycle."""
    seen: list[str] = []
    url = A_CARD
    with SpecStore(_settings(make_settings)) as store:
        for _ in range(3):
            index = load_index(url, store, kind_hint=SpecKind.A2A)
            if index.extra["card_url"] in seen:
                break
            seen.append(index.extra["card_url"])
            (url,) = _remote_a2a_urls(index)
    assert seen == [A_CARD, B_CARD]
    assert index.extra["card_url"] == A_CARD


def test_the_delegated_skill_resolves_in_the_remote_index(make_settings: MakeSettings) -> None:
    """A's access to B's "summarize" skill resolves in B's index with B's requirement."""
    with SpecStore(_settings(make_settings)) as store:
        a = load_index(A_CARD, store, kind_hint=SpecKind.A2A)
        b = load_index(B_BASE, store, kind_hint=SpecKind.A2A)
    manifest = load_card(a.extra["card"]).manifest
    resource = manifest.resources[0]
    got = resolve(resource, manifest.operations[0], b)
    assert isinstance(got, Target)
    assert (got.matched_by, got.entry.operation_id) == ("skill", "summarize")
    assert got.entry.requirements == ((SchemeRequirement("b_oauth", ("summarize",)),),)
