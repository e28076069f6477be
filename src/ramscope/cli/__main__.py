"""``python -m ramscope.cli``: the ``ramscope`` program."""

from . import run

run()
