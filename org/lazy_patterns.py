"""Regular expressions compiled on first use, not when their module is imported.

The pack's modules hold about two hundred patterns; compiled at import, they were a quarter of
the instructions of ``import org.a0.hooks``, paid by every process (the doctor, the installer,
the XO, each command) whether it matches anything or not. ``lazy_pattern(pattern, flags)``
stands for ``re.compile(pattern, flags)``: its ``pattern`` is there at once (some patterns are
built from others' text), and the first use of a method compiles it. From then on its methods
are the compiled pattern's own, bound, in slots of a class without ``__getattr__``: a call costs
what it costs on the compiled pattern.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr

#: The compiled pattern's methods, bound into the lazy pattern when it compiles.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class LazyPattern:
    """``re.compile(pattern, flags)``, once compiled: the compiled pattern's methods, bound."""

    __slots__ = ("pattern", "_flags", "_compiled", *_METHODS)

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiled on the first call)."""
        try:
            return self._compiled
        except AttributeError:
            pass
        compiled = re.compile(self.pattern, self._flags)
        for name in _METHODS:
            setattr(self, name, getattr(compiled, name))
        self._compiled = compiled
        self.__class__ = LazyPattern  # no __getattr__ from now on: nothing is missing
        return compiled

    @property
    def is_compiled(self) -> bool:
        return hasattr(self, "_compiled")

    # what else a compiled pattern has (``flags`` holds the pattern's inline flags: only compiling finds them)
    flags = property(lambda self: self.compiled().flags)
    groups = property(lambda self: self.compiled().groups)
    groupindex = property(lambda self: self.compiled().groupindex)

    def __repr__(self) -> str:
        return repr(self.compiled())

    def __eq__(self, other: object) -> bool:
        return self.compiled() == (other.compiled() if isinstance(other, LazyPattern) else other)

    def __hash__(self) -> int:
        return hash(self.compiled())

    def __copy__(self) -> LazyPattern:
        return self

    def __deepcopy__(self, memo: dict) -> LazyPattern:
        return self

    def __reduce__(self) -> tuple:
        return lazy_pattern, (self.pattern, self._flags)


class _Uncompiled(LazyPattern):
    """A lazy pattern before its first use: reading a method compiles it."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:  # called only for the empty method slots
        if name not in _METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.compiled()
        return getattr(self, name)


def lazy_pattern(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled when first used. Typed as the compiled pattern it
    stands for (the same methods and attributes), though it is not an instance of :class:`re.Pattern`."""
    return _Uncompiled(pattern, flags)  # type: ignore[return-value]
