"""Which of a spec's diagnostics bear on one operation: the indexed look-up (issue 36) answers exactly
what the plain scan of every diagnostic answered, in the same order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.diagnostics import Diagnostic, Severity
from ramscope.specs import relevant_diagnostics
from ramscope.specs.model import OperationEntry, SchemeRequirement, SpecIndex, SpecKind

_INHERITED = frozenset({"root", "server", "card"})


def _scan(index: SpecIndex, entry: OperationEntry | None) -> tuple[Diagnostic, ...]:
    """The reference: every diagnostic tested against the entry, as ramscope did before the index."""
    if entry is None:
        return tuple(d for d in index.diagnostics if d.data.get("affects") == "all" or "skipped_path" in d.data)
    terms = {t for alt in entry.requirements or () for t in alt}
    schemes = {t.scheme for t in terms}
    out = []
    for d in index.diagnostics:
        data, affects = d.data, d.data.get("affects")
        if affects == "all" or (affects == "root-security" and entry.security_source in _INHERITED):
            out.append(d)
        elif "scheme" in data:
            scheme = data["scheme"]
            if scheme in schemes and (
                "scope" not in data or any(t.scheme == scheme and data["scope"] in t.scopes for t in terms)
            ):
                out.append(d)
        elif (
            "skipped_path" not in data
            and entry.pointer
            and (d.path == entry.pointer or d.path.startswith(entry.pointer + "/"))
        ):
            out.append(d)
    return tuple(out)


_names = st.sampled_from(["a", "b", "c"])
_scopes = st.sampled_from(["r", "w", "x"])
_paths = st.sampled_from(["", "/paths/~1a", "/paths/~1a/get", "/paths/~1ab", "/paths/~1a-b", "/paths/~1a/get/x", "/x"])
_data = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"affects": st.sampled_from(["all", "root-security", "other"])}),
    st.fixed_dictionaries({"scheme": _names}),
    st.fixed_dictionaries({"scheme": _names, "scope": _scopes}),
    st.fixed_dictionaries({"skipped_path": _paths}),
    st.fixed_dictionaries({"affects": st.just("all"), "skipped_path": _paths}),
)
_diagnostics = st.lists(
    st.builds(lambda p, d, i: Diagnostic(f"c{i}", Severity.WARNING, p, "m", data=d), _paths, _data, st.integers(0, 9)),
    max_size=30,
)
_requirements = st.lists(
    st.lists(st.builds(SchemeRequirement.of, _names, st.lists(_scopes, max_size=3)), max_size=3).map(tuple),
    max_size=4,
).map(tuple)
_entries = st.one_of(
    st.none(),
    st.builds(
        lambda reqs, src, ptr: OperationEntry(
            key="k", operation_id="k", requirements=reqs, security_source=src, pointer=ptr
        ),
        st.one_of(st.none(), _requirements),
        st.sampled_from(["operation", "root", "server", "card", "undeclared"]),
        _paths,
    ),
)


@settings(max_examples=400, deadline=None)
@given(_diagnostics, st.lists(_entries, min_size=1, max_size=4))
def test_the_indexed_look_up_answers_what_the_scan_did(diagnostics: list[Diagnostic], entries: list) -> None:
    index = SpecIndex(kind=SpecKind.OPENAPI, url="https://a.example/s", sha256="0" * 64, diagnostics=tuple(diagnostics))
    for entry in entries:  # several look-ups share the one index built on the first
        assert relevant_diagnostics(index, entry) == _scan(index, entry)
