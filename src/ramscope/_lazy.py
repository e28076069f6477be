"""Importing names when first used, for a fast start (issue 17).

``ramscope`` and ``ramscope.governance`` import their public names on first use (PEP 562), so
``ramscope --version`` and a warm ``derive`` import only what they use. Two of ramscope's public
functions share their name with the module that defines them (``ramscope.derive``,
``ramscope.validate``): once that module is imported, the import system binds the package's
attribute to the module, so the module is made callable as the function.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any, cast

__all__ = ["callable_module", "lazy_attributes"]


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``names[name]`` (relative to ``package``) when asked."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # once: later look-ups do not come here
        return value

    return __getattr__


class _CallableModule(types.ModuleType):
    __function__: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__function__(*args, **kwargs)


def callable_module(name: str, function: Callable[..., Any]) -> None:
    """Make the module ``name`` answer a call as ``function`` does (see the module docstring)."""
    module = sys.modules[name]
    module.__class__ = _CallableModule
    cast(_CallableModule, module).__function__ = function
