"""Known constraints: vectorized boolean predicates over a batch of points.

A predicate receives a :class:`Columns` mapping from parameter name to a numpy array
holding that parameter's value for every point of the batch, and returns a boolean array
(``True`` = feasible) or a scalar that is broadcast. The same predicate therefore works on
one point or on 100,000::

    Constraint("pe_budget", lambda p: p["rows"] * p["cols"] <= 4096)
    Constraint("pe_budget", "rows * cols <= 4096")          # same, as an expression

Expressions (the form that round-trips through YAML) are parsed once and evaluated by a
small, safe AST interpreter over numpy arrays: names are parameters; literals are numbers,
strings and booleans, and tuples/lists of them on the right of ``in`` / ``not in``;
operators are arithmetic, comparisons (chained ones included), ``and`` / ``or`` / ``not``
(elementwise), ``in`` / ``not in``; functions are ``log``, ``log2``, ``log10``, ``exp``,
``sqrt``, ``abs``, ``ceil``, ``floor``, ``min`` / ``max`` (elementwise over their
arguments) and ``where``. Attribute access, subscripts, lambdas and any other call are
rejected when the constraint is created, and so is an expression longer than
:data:`MAX_EXPRESSION_CHARS`, nested deeper than :data:`MAX_EXPRESSION_DEPTH`, with a
literal list longer than :data:`MAX_LITERAL_ITEMS` or an integer literal outside int64.

Integer arithmetic is int64, as numpy's; a ``+``, ``-``, ``*``, ``**``, ``//``, unary
``-`` or ``abs`` whose exact result leaves int64, and an integer ``//`` or ``%`` by zero,
raise a :class:`SpaceDefinitionError` naming the constraint instead of wrapping around
(``rows ** 64 > 0`` would otherwise be false for every ``rows``). Write a float
(``2.0 ** rows``) to compute in floating point. Arithmetic on strings is refused.

Columns of inactive conditional parameters hold the parameter's default value; guard on
the parent when that matters (``"arch != 'spatial' or rf_kib <= 1"``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from design_space.errors import SpaceDefinitionError
from design_space.references import callable_ref, import_ref

__all__ = ["Columns", "Constraint", "Predicate"]

Predicate = Callable[[Mapping[str, np.ndarray]], Any]


class Columns(Mapping[str, np.ndarray]):
    """Read-only column view of a batch; unknown names raise a ``KeyError`` that lists the
    parameters that exist."""

    def __init__(self, columns: Mapping[str, np.ndarray], n: int) -> None:
        self._columns = columns
        self.n = n

    def __getitem__(self, key: str) -> np.ndarray:
        try:
            return self._columns[key]
        except KeyError:
            raise KeyError(
                f"unknown parameter {key!r} (parameters: {sorted(self._columns)})"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)


_FUNCS: dict[str, Callable[..., Any]] = {
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "ceil": np.ceil,
    "floor": np.floor,
    "where": np.where,
}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.Pow: np.power,
}

_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
}


#: Longest expression accepted, in characters.
MAX_EXPRESSION_CHARS = 10_000
#: Deepest nesting of an expression's syntax tree (``((a + b) * c)`` is 3 levels below
#: the comparison); the interpreter recurses once per level.
MAX_EXPRESSION_DEPTH = 200
#: Most items of one tuple/list literal (the right side of ``in``).
MAX_LITERAL_ITEMS = 1_000
_I64 = np.iinfo(np.int64)


class _Overflow(ArithmeticError):
    """An integer operation whose exact result is not an int64 (or a division by zero)."""


def _isin(a: Any, options: tuple) -> Any:
    arr = np.asarray(a)
    if arr.dtype == object:
        return np.array([x in options for x in arr.ravel()], dtype=bool).reshape(arr.shape)
    return np.isin(arr, np.asarray(list(options)))


def _numeric(v: Any, what: str) -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{what} needs numbers, got {arr.dtype} values")
    return arr


def _ints(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Both operands as int64 when numpy would compute in integers (not bool with bool)."""
    if a.dtype.kind in "biu" and b.dtype.kind in "biu" and not (a.dtype.kind == b.dtype.kind == "b"):
        return a.astype(np.int64), b.astype(np.int64)
    return None


def _mul_checked(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b`` in int64 and where it wrapped. A wrapped product differs from the exact
    one by a multiple of 2**64 > |a|, so ``r // a == b`` holds exactly where it did not
    wrap, except -1 * INT64_MIN, whose quotient wraps too."""
    r = np.multiply(a, b)
    nz = a != 0
    safe_a = np.where(nz, a, 1)
    bad = nz & ((np.floor_divide(r, safe_a) != b) | (np.remainder(r, safe_a) != 0))
    bad |= (a == -1) & (b == _I64.min) | (b == -1) & (a == _I64.min)
    return r, bad


def _pow_checked(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a ** e`` by squaring, every product checked; a product that is not needed (the
    square after the exponent's last bit) does not count."""
    if np.any(e < 0):
        raise ValueError("integers to negative integer powers are not allowed")
    a, e = np.broadcast_arrays(a, e)
    result = np.ones(a.shape, dtype=np.int64)
    base, e = a.copy(), e.copy()
    bad = np.zeros(a.shape, dtype=bool)
    while np.any(e):
        odd = (e & 1).astype(bool)
        r, o = _mul_checked(result, base)
        bad |= odd & o
        result = np.where(odd, r, result)
        e = e >> 1
        if np.any(e):
            base, o = _mul_checked(base, base)
            bad |= (e > 0) & o
    return result, bad


def _arith(op: type, left: Any, right: Any) -> Any:
    a, b = _numeric(left, "arithmetic"), _numeric(right, "arithmetic")
    ints = _ints(a, b) if op in _CHECKED else None
    if ints is None:
        return _BINOPS[op](a, b)
    a, b = ints
    if op is ast.Add:
        r = np.add(a, b)
        bad = ((a >= 0) == (b >= 0)) & ((r >= 0) != (a >= 0))
    elif op is ast.Sub:
        r = np.subtract(a, b)
        bad = ((a >= 0) != (b >= 0)) & ((r >= 0) != (a >= 0))
    elif op is ast.Mult:
        r, bad = _mul_checked(a, b)
    elif op is ast.Pow:
        r, bad = _pow_checked(a, b)
    else:  # FloorDiv, Mod
        if np.any(b == 0):
            raise _Overflow(f"integer {'//' if op is ast.FloorDiv else '%'} by zero")
        r = _BINOPS[op](a, b)
        bad = (a == _I64.min) & (b == -1) if op is ast.FloorDiv else np.zeros(r.shape, bool)
    if np.any(bad):
        i = np.flatnonzero(np.broadcast_to(bad, np.shape(r)))[0]
        x, y = np.broadcast_to(a, np.shape(r)).flat[i], np.broadcast_to(b, np.shape(r)).flat[i]
        sym = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Pow: "**", ast.FloorDiv: "//"}[op]
        raise _Overflow(f"integer overflow: {x} {sym} {y} is outside int64; write a float "
                        "(e.g. 2.0 instead of 2) to compute in floating point")
    return r


def _neg(v: Any) -> Any:
    a = _numeric(v, "unary minus")
    if a.dtype.kind in "iu" and np.any(a.astype(np.int64) == _I64.min):
        raise _Overflow(f"integer overflow: -({_I64.min}) is outside int64")
    return np.negative(a.astype(np.int64) if a.dtype.kind == "b" else a)


def _abs(v: Any) -> Any:
    a = _numeric(v, "abs")
    if a.dtype.kind in "iu" and np.any(a.astype(np.int64) == _I64.min):
        raise _Overflow(f"integer overflow: abs({_I64.min}) is outside int64")
    return np.abs(a)


_CHECKED = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.FloorDiv, ast.Mod})
_ARITY = {"where": (3, 3), "min": (1, None), "max": (1, None)}


def _depth(tree: ast.AST) -> int:
    """Depth of a syntax tree, without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        todo.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return deepest


def _literal(node: ast.AST) -> bool:
    """A number, string or boolean constant, or a negated number."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
            and not isinstance(node.value, bool)
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool)


class _Expr:
    """A parsed, validated constraint expression."""

    def __init__(self, source: str, constraint_name: str) -> None:
        self.source = source
        self._cname = constraint_name

        def fail(problem: str) -> SpaceDefinitionError:
            return SpaceDefinitionError(f"constraint {constraint_name!r}: {problem}", field="expr")

        if len(source) > MAX_EXPRESSION_CHARS:
            raise fail(f"the expression has {len(source)} characters, more than the "
                       f"{MAX_EXPRESSION_CHARS} allowed")
        shown = source if len(source) <= 200 else source[:200] + "..."
        try:
            self.tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError as e:
            raise fail(f"cannot parse expression {shown!r}: {e.msg}") from None
        except (RecursionError, MemoryError, ValueError) as e:   # CPython's own limits
            raise fail(f"cannot parse expression {shown!r}: nested too deeply "
                       f"({type(e).__name__})") from None
        if _depth(self.tree) > MAX_EXPRESSION_DEPTH:
            raise fail(f"the expression is nested more than {MAX_EXPRESSION_DEPTH} levels deep "
                       f"({shown!r})")
        self.names: set[str] = set()
        self._validate(self.tree.body, constraint_name)

    def _validate(self, node: ast.AST, cname: str) -> None:
        ok = (
            ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Name, ast.Constant,
            ast.Call, ast.Load, ast.And, ast.Or, ast.Not, ast.USub,
            ast.UAdd, ast.In, ast.NotIn, *_BINOPS, *_CMPOPS,
        )
        if isinstance(node, ast.Tuple | ast.List):
            raise SpaceDefinitionError(
                f"constraint {cname!r}: a tuple/list literal ({ast.unparse(node)[:80]!r}) is only "
                f"allowed right of 'in' / 'not in' ({self.source!r})",
                field="expr",
            )
        if not isinstance(node, ok):
            raise SpaceDefinitionError(
                f"constraint {cname!r}: {type(node).__name__} is not allowed in an expression "
                f"({self.source!r})",
                field="expr",
            )
        if isinstance(node, ast.Call):
            fname = node.func.id if isinstance(node.func, ast.Name) else None
            if fname not in (*_FUNCS, "min", "max") or node.keywords:
                raise SpaceDefinitionError(
                    f"constraint {cname!r}: call of {ast.unparse(node.func)!r} is not allowed "
                    f"(functions: {sorted([*_FUNCS, 'min', 'max'])})",
                    field="expr",
                )
            lo, hi = _ARITY.get(fname, (1, 1))
            if len(node.args) < lo or (hi is not None and len(node.args) > hi) or any(
                    isinstance(a, ast.Starred) for a in node.args):
                want = f"{lo}" if lo == hi else f"at least {lo}"
                raise SpaceDefinitionError(
                    f"constraint {cname!r}: {fname}() takes {want} argument(s), got "
                    f"{len(node.args)} ({self.source!r})",
                    field="expr",
                )
            for a in node.args:
                self._validate(a, cname)
            return
        if isinstance(node, ast.Compare):
            self._validate(node.left, cname)
            for i, (op, comp) in enumerate(zip(node.ops, node.comparators)):
                if isinstance(op, ast.In | ast.NotIn):
                    self._validate_options(comp, cname, last=i == len(node.ops) - 1)
                else:
                    self._validate(comp, cname)
            return
        if isinstance(node, ast.Name):
            if node.id not in ("True", "False"):
                self.names.add(node.id)
            return
        if isinstance(node, ast.Constant):
            v = node.value
            if not isinstance(v, int | float | str | bool):
                raise SpaceDefinitionError(
                    f"constraint {cname!r}: literal {v!r} is not allowed", field="expr"
                )
            if isinstance(v, int) and not isinstance(v, bool) and not _I64.min <= v <= _I64.max:
                raise SpaceDefinitionError(
                    f"constraint {cname!r}: integer literal {v} is outside int64; write it as a "
                    f"float ({float(v):g})", field="expr"
                )
            return
        for child in ast.iter_child_nodes(node):
            self._validate(child, cname)

    def _validate_options(self, node: ast.AST, cname: str, last: bool) -> None:
        """The right side of ``in``: a flat tuple/list of literals."""
        if not isinstance(node, ast.Tuple | ast.List) or not last:
            raise SpaceDefinitionError(
                f"constraint {cname!r}: 'in' / 'not in' needs a tuple or list of literals on its "
                f"right, as the last comparison, e.g. \"d in ('OS', 'WS')\" ({self.source!r})",
                field="expr",
            )
        if len(node.elts) > MAX_LITERAL_ITEMS:
            raise SpaceDefinitionError(
                f"constraint {cname!r}: a literal list of {len(node.elts)} items, more than the "
                f"{MAX_LITERAL_ITEMS} allowed", field="expr"
            )
        for e in node.elts:
            if not _literal(e):
                raise SpaceDefinitionError(
                    f"constraint {cname!r}: the list right of 'in' may hold only numbers, strings "
                    f"and booleans, got {ast.unparse(e)[:80]!r} ({self.source!r})", field="expr"
                )
            self._validate(e, cname)

    def __call__(self, cols: Mapping[str, np.ndarray]) -> Any:
        return self._eval(self.tree.body, cols)

    def _eval(self, node: ast.AST, cols: Mapping[str, np.ndarray]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return cols[node.id]
        if isinstance(node, ast.Tuple | ast.List):   # only right of `in` (validated)
            return tuple(self._eval(e, cols) for e in node.elts)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, cols)
            if isinstance(node.op, ast.Not):
                return np.logical_not(v)
            return _neg(v) if isinstance(node.op, ast.USub) else np.positive(_numeric(v, "unary plus"))
        if isinstance(node, ast.BinOp):
            return _arith(type(node.op), self._eval(node.left, cols), self._eval(node.right, cols))
        if isinstance(node, ast.BoolOp):
            fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = self._eval(node.values[0], cols)
            for v in node.values[1:]:
                out = fn(out, self._eval(v, cols))
            return out
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, cols)
            out: Any = True
            for op, comp in zip(node.ops, node.comparators):
                right = self._eval(comp, cols)
                if isinstance(op, ast.In | ast.NotIn):
                    r = _isin(left, right)
                    r = np.logical_not(r) if isinstance(op, ast.NotIn) else r
                else:
                    r = _CMPOPS[type(op)](left, right)
                out = np.logical_and(out, r)
                left = right
            return out
        if isinstance(node, ast.Call):
            fname = node.func.id  # type: ignore[attr-defined]
            args = [self._eval(a, cols) for a in node.args]
            if fname in ("min", "max"):
                fn = np.minimum if fname == "min" else np.maximum
                out = args[0]
                for a in args[1:]:
                    out = fn(out, a)
                return out
            if fname == "abs":
                return _abs(args[0])
            if fname != "where":
                args = [_numeric(a, f"{fname}()") for a in args]
            return _FUNCS[fname](*args)
        raise AssertionError(f"unhandled node {node!r}")  # pragma: no cover


@dataclass(frozen=True)
class Constraint:
    """A named known constraint.

    Args:
        name: shown in every error and rejection count.
        predicate: a callable ``columns -> bool array`` or an expression string (see the
            module docstring).
    """

    name: str
    predicate: Predicate | str
    _expr: _Expr | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise SpaceDefinitionError(f"constraint name must be a non-empty string, got {self.name!r}")
        if isinstance(self.predicate, str):
            object.__setattr__(self, "_expr", _Expr(self.predicate, self.name))
        elif not callable(self.predicate):
            raise SpaceDefinitionError(
                f"constraint {self.name!r}: predicate must be callable or an expression string, "
                f"got {self.predicate!r}",
                field="predicate",
            )

    @classmethod
    def from_ref(cls, name: str, ref: str) -> Constraint:
        """A constraint whose predicate is the importable function ``"module:function"``."""
        return cls(name, import_ref(ref, f"constraint {name!r}"))

    @property
    def expression(self) -> str | None:
        return self._expr.source if self._expr else None

    @property
    def names(self) -> set[str] | None:
        """Parameter names an expression refers to (``None`` for callables)."""
        return set(self._expr.names) if self._expr else None

    def evaluate(self, columns: Columns) -> np.ndarray:
        """Boolean feasibility of every row; errors name the constraint."""
        fn = self._expr if self._expr is not None else self.predicate
        try:
            with np.errstate(all="ignore"):
                out = fn(columns)  # type: ignore[operator]
        except KeyError as e:
            raise SpaceDefinitionError(f"constraint {self.name!r}: {e.args[0]}") from None
        except _Overflow as e:
            raise SpaceDefinitionError(f"constraint {self.name!r}: {e}") from None
        except Exception as e:
            raise SpaceDefinitionError(
                f"constraint {self.name!r} raised {type(e).__name__}: {e}"
            ) from e
        arr = np.asarray(out)
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise SpaceDefinitionError(
                f"constraint {self.name!r} returned {arr.dtype} values; expected booleans"
            )
        if arr.ndim == 0:
            return np.full(columns.n, bool(arr))
        if arr.shape != (columns.n,):
            raise SpaceDefinitionError(
                f"constraint {self.name!r} returned shape {arr.shape} for a batch of "
                f"{columns.n} points; expected ({columns.n},)"
            )
        return arr.astype(bool)

    def to_dict(self) -> dict[str, Any]:
        if self._expr is not None:
            return {"name": self.name, "expr": self._expr.source}
        ref = callable_ref(self.predicate)
        if ref is None:
            raise SpaceDefinitionError(
                f"constraint {self.name!r}: its predicate {self.predicate!r} cannot be saved "
                "(a lambda, closure or __main__ function); write it as an expression string "
                "or a module-level function"
            )
        return {"name": self.name, "function": ref}
