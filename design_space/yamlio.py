"""YAML loading that remembers where every key came from.

:func:`load_yaml` returns the plain data (as ``yaml.safe_load`` would) plus a
:class:`LineMap` from key paths (``("parameters", 2, "low")``) to 1-based line numbers,
so configuration errors can say *which key on which line* is wrong. Duplicate keys,
which PyYAML silently collapses, are reported as errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from design_space.errors import ConfigError

PathT = tuple[str | int, ...]


class LineMap:
    """Key path -> line number (1-based). Unknown paths fall back to their nearest parent.

    ``prefix`` makes a view of a sub-document: paths are given relative to it, but lines
    and error keys are those of the whole document (``space.parameters[0].low``).
    """

    def __init__(self, lines: dict[PathT, int], source: str | None = None,
                 prefix: PathT = ()) -> None:
        self._lines = lines
        self.source = source
        self.prefix = tuple(prefix)

    def line(self, path: Sequence[str | int]) -> int | None:
        p = self.prefix + tuple(path)
        while True:
            if p in self._lines:
                return self._lines[p]
            if not p:
                return None
            p = p[:-1]

    def error(self, path: Sequence[str | int], message: str) -> ConfigError:
        full = self.prefix + tuple(path)
        return ConfigError(message, key=format_path(full) or None, line=self.line(path),
                           source=self.source)

    def sub(self, prefix: Sequence[str | int]) -> LineMap:
        """A view of the sub-document at ``prefix`` (relative to this view)."""
        return LineMap(self._lines, self.source, self.prefix + tuple(prefix))


def format_path(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _walk(node: yaml.Node, path: PathT, lines: dict[PathT, int], source: str | None) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode.value)
            kline = knode.start_mark.line + 1
            if key in seen:
                raise ConfigError(
                    f"duplicate key {key!r} (first on line {seen[key]})",
                    key=format_path((*path, key)), line=kline, source=source,
                )
            seen[key] = kline
            lines[(*path, key)] = kline
            _walk(vnode, (*path, key), lines, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _walk(item, (*path, i), lines, source)


def load_yaml(text: str, source: str | None = None) -> tuple[Any, LineMap]:
    """Parse ``text``; syntax errors become :class:`ConfigError` with the line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(f"malformed YAML: {e.problem or e}", line=line, source=source) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"malformed YAML: {e}", source=source) from None
    lines: dict[PathT, int] = {}
    if node is not None:
        lines[()] = node.start_mark.line + 1
        _walk(node, (), lines, source)
    return data, LineMap(lines, source)


def load_yaml_file(path: str | Path) -> tuple[Any, LineMap]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read {p}: {e.strerror}", source=str(p)) from None
    return load_yaml(text, source=str(p))
