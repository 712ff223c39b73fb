"""YAML loading that remembers where every key came from.

:func:`load_yaml` returns the plain data (as ``yaml.safe_load`` would) plus a
:class:`LineMap` from key paths (``("parameters", 2, "low")``) to 1-based line numbers,
so configuration errors can say *which key on which line* is wrong. Duplicate keys,
which PyYAML silently collapses, are reported as errors.

Hostile or broken input ends in a :class:`ConfigError` naming the file and line, fast:
a file over :data:`MAX_CONFIG_BYTES`, a document that expands (aliases counted as the
copies they stand for: "billion laughs") to more than :data:`MAX_NODES` nodes, nesting
deeper than :data:`MAX_DEPTH`, an alias inside the collection it names (a cycle), text
that is not UTF-8. The text is parsed once, by libyaml where PyYAML has it.
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


#: A config (or space, or architecture spec) longer than this many bytes is refused before
#: it is parsed: hand-written configs are kilobytes; megabytes are a mistake or an attack.
MAX_CONFIG_BYTES = 4 * 2**20
#: Most nodes (scalars and collections) a document may expand to, each alias counted as
#: a full copy of what it names: a "billion laughs" of nested aliases is refused while it
#: is read, long before its expansion could exhaust memory.
MAX_NODES = 1_000_000
#: Deepest nesting of collections; deeper documents would exhaust the recursion of what
#: reads them afterwards (the constructor's keys, pydantic, json).
MAX_DEPTH = 100

# libyaml's parser (C, a state machine without recursion) where PyYAML was built with it,
# else the pure-Python one; both construct with SafeConstructor (no object tags).
_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SafeLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The loader :func:`load_yaml` constructs with: PyYAML's safe constructor (libyaml's
    parser where present). Subclass it to add constructors for a format's own tags (the
    Timeloop importer keeps ``!Component`` ...) and pass the subclass as ``loader``."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # a value that looks like a YAML type but is not one (2001-13-45 resolved as a
        # date, `!!int x`; `!!timestamp x` an AttributeError) makes its constructor raise a
        # bare error: give it its line
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, OverflowError, AttributeError) as e:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {_short(node)} as {node.tag}: {e}", node.start_mark
            ) from None


def _short(node: yaml.Node) -> str:
    if isinstance(node, yaml.ScalarNode):
        v = node.value
        return repr(v if len(v) <= 40 else v[:40] + "...")
    return "a " + ("sequence" if isinstance(node, yaml.SequenceNode) else "mapping")


class _Frame:
    """A collection being composed: its node, expanded size so far, pending mapping key."""

    __slots__ = ("anchor", "key", "node", "size")

    def __init__(self, node: yaml.Node, anchor: str | None) -> None:
        self.node, self.anchor = node, anchor
        self.size = 1
        self.key: yaml.Node | None = None


def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def _compose(loader: Any, source: str | None, max_nodes: int, max_depth: int) -> yaml.Node | None:
    """The node graph of the stream's one document, composed without recursion.

    The graph PyYAML's composer builds (tags resolved the same way; a second document or
    a repeated anchor refused as it refuses them), except that an alias naming a
    collection still open around it (a cycle) is refused, and so is a document that
    expands to more than ``max_nodes`` nodes or nests deeper than ``max_depth``: each a
    :class:`ConfigError` with the line where it happens.
    """
    ev = yaml.events

    def fail(message: str, mark: Any) -> ConfigError:
        return ConfigError(message, line=_line(mark), source=source)

    def define(anchor: str | None, node: yaml.Node, size: int, mark: Any) -> None:
        if anchor is None:
            return
        if anchor in anchors and anchors[anchor][0] is not node:
            raise fail(f"duplicate anchor &{anchor} (first on line "
                       f"{_line(anchors[anchor][0].start_mark)})", mark)
        anchors[anchor] = (node, size)

    loader.get_event()  # StreamStart
    if loader.check_event(ev.StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()  # DocumentStart
    anchors: dict[str, tuple[yaml.Node, int]] = {}  # name -> (node, expanded size; 0: open)
    stack: list[_Frame] = []
    tags: dict[tuple[str, Any], str] = {}           # resolved tags of plain scalars
    get_event, resolve = loader.get_event, loader.resolve
    Alias, Scalar, SeqStart, MapStart = ev.AliasEvent, ev.ScalarEvent, ev.SequenceStartEvent, ev.MappingStartEvent
    Scalar_n, Seq_n, Map_n = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
    while True:
        e = get_event()
        t = type(e)
        if t is Scalar:
            tag = e.tag
            if tag is None or tag == "!":
                k = (e.value, e.implicit)
                tag = tags.get(k)
                if tag is None:
                    tag = tags[k] = resolve(Scalar_n, e.value, e.implicit)
            node, size = Scalar_n(tag, e.value, e.start_mark, e.end_mark, style=e.style), 1
            if e.anchor is not None:
                define(e.anchor, node, size, e.start_mark)
        elif t is Alias:
            if e.anchor not in anchors:
                raise fail(f"found undefined alias *{e.anchor}", e.start_mark)
            node, size = anchors[e.anchor]
            if size == 0:
                raise fail(f"alias *{e.anchor} is inside the collection it names (anchored on "
                           f"line {_line(node.start_mark)}): recursive data is not allowed",
                           e.start_mark)
        elif t is SeqStart or t is MapStart:
            if len(stack) >= max_depth:
                raise fail(f"collections nested deeper than {max_depth} levels", e.start_mark)
            kind = Seq_n if t is SeqStart else Map_n
            tag = e.tag
            if tag is None or tag == "!":
                tag = resolve(kind, None, e.implicit)
            node = kind(tag, [], e.start_mark, None, flow_style=e.flow_style)
            define(e.anchor, node, 0, e.start_mark)
            stack.append(_Frame(node, e.anchor))
            continue
        elif t is ev.SequenceEndEvent or t is ev.MappingEndEvent:
            frame = stack.pop()
            node, size = frame.node, frame.size
            node.end_mark = e.end_mark
            define(frame.anchor, node, size, e.start_mark)
        else:  # pragma: no cover - a parser emits nothing else inside a document
            raise fail(f"unexpected YAML event {t.__name__}", getattr(e, "start_mark", None))
        if not stack:
            root = node
            break
        parent = stack[-1]
        parent.size += size
        if parent.size > max_nodes:
            raise fail(f"the document expands to more than {max_nodes} nodes (each alias "
                       "counted as a copy of what it names)", e.start_mark)
        pnode = parent.node
        if type(pnode) is Seq_n:
            pnode.value.append(node)
        elif parent.key is None:
            parent.key = node
        else:
            pnode.value.append((parent.key, node))
            parent.key = None
    loader.get_event()  # DocumentEnd
    if not loader.check_event(ev.StreamEndEvent):
        raise fail("expected a single document, but found another", loader.get_event().start_mark)
    loader.get_event()
    return root


def _walk(root: yaml.Node, lines: dict[PathT, int], source: str | None) -> None:
    """Record the line of every key path and refuse duplicate keys, iteratively.

    A node reached again through an alias is not walked again (it was checked where it
    was anchored); paths below an alias fall back to the alias's own line.
    """
    seen_nodes: set[int] = set()
    todo: list[tuple[yaml.Node, PathT]] = [(root, ())]
    while todo:
        node, path = todo.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        children: list[tuple[yaml.Node, PathT]] = []
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
                children.append((vnode, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*path, i)] = item.start_mark.line + 1
                children.append((item, (*path, i)))
        todo.extend(reversed(children))


def load_yaml(text: str, source: str | None = None, *, max_nodes: int = MAX_NODES,
              max_depth: int = MAX_DEPTH, loader: type[SafeLoader] = SafeLoader) -> tuple[Any, LineMap]:
    """Parse ``text`` once; every problem is a :class:`ConfigError` with the line.

    See the module docstring for the limits (``max_nodes`` and ``max_depth`` lower them);
    ``loader``: a :class:`SafeLoader` subclass to construct with.
    """
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{len(text)} characters is more than a config may have "
                          f"({MAX_CONFIG_BYTES} bytes)", source=source)
    if not (isinstance(loader, type) and issubclass(loader, SafeLoader)):
        raise TypeError(f"loader must be a subclass of design_space.yamlio.SafeLoader, got {loader!r}")
    opened = None
    try:
        opened = loader(text)
        node = _compose(opened, source, max_nodes, max_depth)
        lines: dict[PathT, int] = {}
        if node is None:
            return None, LineMap(lines, source)
        lines[()] = node.start_mark.line + 1
        _walk(node, lines, source)
        data = opened.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise ConfigError(f"malformed YAML: {e.problem or e}", line=_line(mark),
                          source=source) from None
    except yaml.reader.ReaderError as e:   # a control character, not marked with a line
        line = text[: e.position].count("\n") + 1 if isinstance(e.position, int) else None
        char = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
        raise ConfigError(f"malformed YAML: unacceptable character {char}: {e.reason}",
                          line=line, source=source) from None
    except yaml.YAMLError as e:
        first = str(e).strip().splitlines()
        raise ConfigError(f"malformed YAML: {first[0] if first else type(e).__name__}",
                          source=source) from None
    except UnicodeError as e:  # a str with lone surrogates cannot be handed to libyaml
        raise ConfigError(f"not valid text: {e}", source=source) from None
    except RecursionError:   # merge keys (<<) chained through thousands of anchors
        raise ConfigError("malformed YAML: merge keys (<<) or keys nested too deeply",
                          source=source) from None
    finally:
        if opened is not None:
            opened.dispose()
    return data, LineMap(lines, source)


def load_yaml_file(path: str | Path, *, loader: type[SafeLoader] = SafeLoader) -> tuple[Any, LineMap]:
    """Read and parse a YAML file (at most :data:`MAX_CONFIG_BYTES`; UTF-8, or UTF-16
    with a byte-order mark); every problem is a :class:`ConfigError` naming the file.
    ``loader`` as in :func:`load_yaml`."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)   # bounded: a FIFO or /dev/zero ends too
    except OSError as e:
        raise ConfigError(f"cannot read {p}: {e.strerror or e}", source=str(p)) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"the file is larger than {MAX_CONFIG_BYTES} bytes, the most a config "
                          "may have", source=str(p))
    encoding = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(f"not {encoding.removesuffix('-sig').upper()} text: byte "
                          f"0x{raw[e.start]:02x} at offset {e.start} cannot be decoded ({e.reason})",
                          line=line, source=str(p)) from None
    return load_yaml(text, source=str(p), loader=loader)
