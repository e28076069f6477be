"""A command's option given before the command is said as such (issue 22, item 19), not as
"unrecognized arguments: --no-reuse (did you mean '--no-reuse'?)"."""

from __future__ import annotations

import pytest

from ramscope.cli import main


def test_a_command_option_before_the_command_says_where_it_belongs(capsys: pytest.CaptureFixture[str]) -> None:
    """`ramscope --no-reuse derive CARD`: exit 2, naming the command it belongs to."""
    with pytest.raises(SystemExit) as exc:
        main(["--no-reuse", "derive", "card.json"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        "ramscope: error: unrecognized arguments: --no-reuse ('--no-reuse' is an option of 'derive': "
        "give it after the command, e.g. 'ramscope derive --no-reuse ...')"
    )


def test_a_mistyped_option_still_gets_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    """A typo is still answered with the nearest real option."""
    with pytest.raises(SystemExit):
        main(["--no-reus", "derive", "card.json"])
    assert capsys.readouterr().err.splitlines()[-1].endswith("(did you mean '--no-reuse'?)")
