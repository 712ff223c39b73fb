"""Errors and violation records of the design-space layer.

Every error names the offending parameter, constraint or config key, so that a user who
mistyped a bound or an expression can fix it from the message alone.
"""

from __future__ import annotations

from dataclasses import dataclass


class SpaceDefinitionError(ValueError):
    """A parameter, constraint or space is defined inconsistently (``low > high`` ...).

    Attributes:
        field: the offending field of the parameter/constraint (``"low"``), if known; the
            YAML loader turns it into a key path and line.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnsatisfiableSpaceError(ValueError):
    """No feasible point could be found (``sample``) or exists (``grid``).

    Attributes:
        rejections: constraint name -> number of raw samples it rejected.
    """

    def __init__(self, message: str, rejections: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.rejections = dict(rejections or {})


class ConfigError(ValueError):
    """A YAML/dict configuration is malformed.

    Attributes:
        key: dotted path of the offending key (``parameters[2].low``), if known.
        line: 1-based line in the source file, if known.
        source: file name, if known.
    """

    def __init__(
        self, message: str, key: str | None = None, line: int | None = None, source: str | None = None
    ) -> None:
        self.key, self.line, self.source, self.detail = key, line, source, message
        where = ""
        if source and line is not None:
            where = f"{source}:{line}: "
        elif source:
            where = f"{source}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(f"{where}{key}: {message}" if key else f"{where}{message}")


@dataclass(frozen=True)
class Violation:
    """One reason a point is not in the space.

    ``kind`` is one of ``unknown_parameter``, ``missing_parameter``,
    ``inactive_parameter``, ``out_of_range``, ``constraint``; ``name`` is the parameter or
    constraint concerned.
    """

    kind: str
    name: str
    message: str

    def __str__(self) -> str:
        return self.message
