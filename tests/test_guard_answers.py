"""What a stranger's DNS may answer for a spec URL's host, and what the address guard does with it: an IPv6
zone never hides an address's class, an answer that is not an IP address and an empty answer are refused
before any connection, whatever ``--allow-private-network`` says. A fake resolver answers; nothing leaves
the machine (the connector is a spy that connects nowhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ramscope.errors import BlockedURLError, FetchError
from ramscope.store import AddressPolicy
from ramscope.store.guard import AddressBlockedError
from tests.test_store_guard import _store  # the spy resolver and connector, refusing every connection

URL = "https://specs.attacker.test/openapi.json"
HINT = " (--allow-private-network lifts this check)"


ZONED = [
    ("fe80::1%eth0", "fe80::1%eth0", "a link-local address (fe80::/10)"),
    ("::1%lo", "::1%lo", "the loopback address (::1)"),
    ("fd00::7%2", "fd00::7%2", "a unique local address (fc00::/7)"),
    (
        "::ffff:169.254.169.254%eth0",
        "::ffff:a9fe:a9fe%eth0",
        "an IPv4-mapped form of 169.254.169.254, "
        "a link-local address (169.254.0.0/16, where cloud metadata services live)",
    ),
]


@pytest.mark.parametrize(("answer", "shown", "reason"), ZONED, ids=[z[0] for z in ZONED])
def test_a_zone_does_not_hide_the_class_of_an_address(tmp_path: Path, answer: str, shown: str, reason: str) -> None:
    """`fe80::1%eth0` is judged as fe80::1: refused with its class, before any connection."""
    store, resolver, connector = _store(tmp_path, [answer], allow=False)
    with store, pytest.raises(BlockedURLError) as info:
        store.get(URL)
    assert str(info.value) == f"{URL}: host specs.attacker.test resolves to {shown}, {reason}; refused{HINT}"
    assert resolver.calls == [("specs.attacker.test", 443)]
    assert connector.calls == []


def test_a_zone_on_a_public_address_is_connected_to_as_answered(tmp_path: Path) -> None:
    """A public IPv6 address with a zone passes (the zone only picks an interface) and is used as answered."""
    store, _resolver, connector = _store(tmp_path, ["2606:4700:4700::1111%eth0"], allow=False)
    with store, pytest.raises(FetchError, match="spy: no real connection"):
        store.get(URL)
    assert connector.calls == [("2606:4700:4700::1111%eth0", 443)]


NOT_IP = ["localhost", "", "1.2.3", "93.184.215.14 ", "::1%", "2606:4700::1/64", "0x7f000001"]


@pytest.mark.parametrize("allow", [False, True], ids=["strict", "allow-private-network"])
@pytest.mark.parametrize("answer", NOT_IP)
def test_an_answer_that_is_not_an_ip_address_is_refused(tmp_path: Path, answer: str, allow: bool) -> None:
    """A resolver answering a name, a partial or decorated address: refused, never connected, with or
    without --allow-private-network (which lifts the address classes, not the syntax)."""
    store, _resolver, connector = _store(tmp_path, ["93.184.215.14", answer], allow=allow)
    with store, pytest.raises(BlockedURLError) as info:
        store.get(URL)
    assert str(info.value) == (
        f"{URL}: host specs.attacker.test resolves to {answer}, not an IP address; refused{HINT}"
    )
    assert connector.calls == []


@pytest.mark.parametrize("allow", [False, True], ids=["strict", "allow-private-network"])
def test_an_empty_answer_is_refused(tmp_path: Path, allow: bool) -> None:
    """No address at all is a refusal naming the host, not a connection to nothing or a crash."""
    store, resolver, connector = _store(tmp_path, [], allow=allow)
    with store, pytest.raises(BlockedURLError) as info:
        store.get(URL)
    assert str(info.value) == (
        f"{URL}: host specs.attacker.test resolves to (nothing), no address to connect to; refused{HINT}"
    )
    assert info.value.code == "url-blocked"
    assert resolver.calls == [("specs.attacker.test", 443)]
    assert connector.calls == []


def test_vet_checks_every_answer_in_order() -> None:
    """AddressPolicy.vet: the first bad answer is the one named; good answers are kept in their order."""
    policy = AddressPolicy()
    assert policy.vet("h", ["93.184.215.14", "2606:4700:4700::1111"]) == ["93.184.215.14", "2606:4700:4700::1111"]
    with pytest.raises(AddressBlockedError) as info:
        policy.vet("h", ["93.184.215.14", "bogus", "10.0.0.1"])
    assert (info.value.host, info.value.address, info.value.reason) == ("h", "bogus", "not an IP address")
    with pytest.raises(AddressBlockedError) as info:
        policy.vet("h", [])
    assert (info.value.address, info.value.reason) == ("(nothing)", "no address to connect to")
