"""Start-up: the package and the CLI import what a command uses, and the public API is whole.

``import ramscope`` imports its public names when first used (PEP 562), and each CLI command imports
what it needs, so ``ramscope --version`` and ``ramscope validate`` do not load the derivation, the
network stack or the governance code (issue 17; the times are in bench/, not here). These tests
check the imports themselves, in a fresh interpreter each, and that nothing of the API was lost.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ramscope

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "travel-agent.card.json"

#: Modules a command must not import when it has no use for them.
HEAVY = ("ramscope.derive", "ramscope.store", "ramscope.governance", "ramscope.derive.privilege", "httpx", "rich")


def _modules_after(code: str) -> set[str]:
    """The modules loaded once ``code`` has run in a fresh interpreter."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(k for k, v in sys.modules.items() if v is not None)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(HEAVY))


def test_importing_the_package_imports_no_stage() -> None:
    loaded = _modules_after("import ramscope")
    assert sorted(m for m in loaded if m.startswith("ramscope")) == ["ramscope", "ramscope._lazy", "ramscope._version"]


def test_version_imports_no_stage() -> None:
    loaded = _modules_after(
        "from ramscope.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    )
    assert _heavy(loaded) == []
    assert "ramscope.card" not in loaded
    assert "ramscope.manifest" not in loaded


def test_validate_imports_no_network_stack_and_no_derivation() -> None:
    loaded = _modules_after(
        f"from ramscope.cli import main\ntry:\n    main(['validate', {str(EXAMPLE)!r}])\nexcept SystemExit:\n    pass"
    )
    assert [m for m in _heavy(loaded) if not m.startswith("ramscope.governance")] == []


def test_the_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from ramscope.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"ramscope {ramscope.__version__}"


@pytest.mark.parametrize("name", ramscope.__all__)
def test_every_public_name_is_there(name: str) -> None:
    assert getattr(ramscope, name) is not None
    assert name in dir(ramscope)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ramscope.nope  # noqa: B018


@pytest.mark.parametrize(("name", "module"), [("derive", "ramscope.derive.engine"), ("validate", "ramscope.validate")])
def test_a_function_named_as_its_module_is_callable_whichever_is_imported_first(name: str, module: str) -> None:
    """``ramscope.derive`` and ``ramscope.validate`` are both a submodule and a public function: once
    the submodule is imported, the import system binds the name to it, and the module answers the call."""
    module_first = (
        f"import {module}, ramscope\n"
        f"from ramscope import {name}\n"
        f"print(callable(ramscope.{name}), callable({name}), ramscope.{name}.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", module_first], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", f"ramscope.{name}"]
    function_first = f"import ramscope\nprint(ramscope.{name}.__module__, ramscope.{name}.__name__)"
    out = subprocess.run([sys.executable, "-c", function_first], capture_output=True, text=True, check=True).stdout
    assert out.split() == [module, name]


def test_the_callable_module_answers_as_the_function() -> None:
    import importlib

    # Not ``import ramscope.validate as module``: that binds the package's attribute, which is the
    # function once ``ramscope.validate`` (the public name) has been looked up by an earlier test.
    module: Any = importlib.import_module("ramscope.validate")
    assert module(EXAMPLE) == module.validate(EXAMPLE)


def test_every_rule_is_listed_without_importing_the_package_first() -> None:
    code = "from ramscope.diagnostics import all_rules\nprint(len(all_rules()))"
    fresh = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    from ramscope.diagnostics import all_rules

    assert fresh == len(all_rules()) > 50


def test_governance_names_are_there_and_derive_does_not_load_its_rules() -> None:
    import ramscope.governance as governance

    assert all(getattr(governance, name) is not None for name in governance.__all__)
    loaded = _modules_after("import ramscope.governance.skills")
    assert "ramscope.governance.check" not in loaded
    assert "ramscope.governance.rules" not in loaded


def test_the_program_exits_with_the_commands_code_and_its_output_flushed(tmp_path: Path) -> None:
    """``run()`` (the console script, ``python -m ramscope``) ends the process without the
    interpreter's teardown: the exit code and everything written must still come out."""
    missing = tmp_path / "missing.json"
    code = f"import sys\nsys.argv = ['ramscope', 'validate', {str(missing)!r}]\nfrom ramscope.cli import run\nrun()"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 2
    assert "no such file" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "ramscope", "validate", "--format", "json", str(EXAMPLE)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)  # all of it: the last line is flushed before the process ends


def test_every_module_declaring_rules_is_imported_by_all_rules() -> None:
    """all_rules() imports the stages that declare rules (the package no longer imports them)."""
    from ramscope import diagnostics

    src = Path(ramscope.__file__).parent
    declaring = {
        "ramscope." + ".".join(p.relative_to(src).with_suffix("").parts)
        for p in src.rglob("*.py")
        if "= rule(" in p.read_text(encoding="utf-8")
    }
    assert declaring == set(diagnostics._RULE_MODULES)


def test_every_command_is_found_in_the_group_that_defines_it() -> None:
    """``COMMAND_GROUPS`` (what a run imports) names each command's own group, and every command."""
    import importlib

    from ramscope.cli import COMMAND_GROUPS, GROUPS

    defined = {cmd.name: group for group in GROUPS for cmd in importlib.import_module(f"ramscope.cli.{group}").COMMANDS}
    assert defined == COMMAND_GROUPS


def test_a_run_imports_only_the_group_of_its_command() -> None:
    groups = {f"ramscope.cli.{g}" for g in ("card", "derive", "governance", "providers", "evidence", "service")}
    run = "from ramscope.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _modules_after(run.format(argv=["--version"])) & groups == set()
    assert _modules_after(run.format(argv=["validate", str(EXAMPLE)])) & groups == {"ramscope.cli.card"}
    assert _modules_after(run.format(argv=["derive", "--help"])) & groups == {"ramscope.cli.derive"}
    assert _modules_after(run.format(argv=["--help"])) & groups == groups


@pytest.mark.parametrize("argv", [["--version"], ["derive", "--help"]])
def test_a_parser_is_built_without_pathlib_or_shutil(argv: list[str]) -> None:
    """Paths are made when a path option is given, and the help width is read without shutil (its
    compression modules): together a sixth of ``--version``'s instructions (issue 36)."""
    loaded = _modules_after(f"from ramscope.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass")
    assert {"pathlib", "shutil", "bz2", "lzma"} & loaded == set()


def test_path_options_still_give_paths() -> None:
    from pathlib import Path

    from ramscope.cli import build_parser

    args = build_parser(["--cache-dir", "/tmp/x", "derive", "-o", "r.json", "c.json"]).parse_args(
        ["--cache-dir", "/tmp/x", "derive", "-o", "r.json", "c.json"]
    )
    assert args.cache_dir == Path("/tmp/x")
    assert args.output == Path("r.json")


def test_validate_of_a_json_card_imports_no_spec_machinery() -> None:
    """A card is read by the stdlib's json (it reports duplicate keys); orjson, tempfile (rapidyaml's
    stderr capture), difflib (suggestions) and pathlib wait until a command needs them (issue 36)."""
    loaded = _modules_after(
        f"from ramscope.cli import main\ntry:\n    main(['validate', {str(EXAMPLE)!r}])\nexcept SystemExit:\n    pass"
    )
    assert {"orjson", "tempfile", "difflib", "pathlib", "shutil", "uuid"} & loaded == set()
