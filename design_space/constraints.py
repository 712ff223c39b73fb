"""Known constraints: vectorized boolean predicates over a batch of points.

A predicate receives a :class:`Columns` mapping from parameter name to a numpy array
holding that parameter's value for every point of the batch, and returns a boolean array
(``True`` = feasible) or a scalar that is broadcast. The same predicate therefore works on
one point or on 100,000::

    Constraint("pe_budget", lambda p: p["rows"] * p["cols"] <= 4096)
    Constraint("pe_budget", "rows * cols <= 4096")          # same, as an expression

Expressions (the form that round-trips through YAML) are parsed once and evaluated by a
small, safe AST interpreter over numpy arrays: names are parameters; literals are numbers,
strings, booleans and tuples/lists (for ``in``); operators are arithmetic, comparisons
(chained ones included), ``and`` / ``or`` / ``not`` (elementwise), ``in`` / ``not in``;
functions are ``log``, ``log2``, ``log10``, ``exp``, ``sqrt``, ``abs``, ``ceil``,
``floor``, ``min`` / ``max`` (elementwise over their arguments) and ``where``.
Attribute access, subscripts, lambdas and any other call are rejected when the constraint
is created.

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


def _isin(a: Any, options: Any) -> Any:
    arr = np.asarray(a)
    if arr.dtype == object:
        return np.array([x in options for x in arr.ravel()], dtype=bool).reshape(arr.shape)
    return np.isin(arr, np.asarray(list(options)))


class _Expr:
    """A parsed, validated constraint expression."""

    def __init__(self, source: str, constraint_name: str) -> None:
        self.source = source
        try:
            self.tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError as e:
            raise SpaceDefinitionError(
                f"constraint {constraint_name!r}: cannot parse expression {source!r}: {e.msg}",
                field="expr",
            ) from None
        self.names: set[str] = set()
        self._validate(self.tree.body, constraint_name)

    def _validate(self, node: ast.AST, cname: str) -> None:
        ok = (
            ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Name, ast.Constant,
            ast.Call, ast.Tuple, ast.List, ast.Load, ast.And, ast.Or, ast.Not, ast.USub,
            ast.UAdd, ast.In, ast.NotIn, *_BINOPS, *_CMPOPS,
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
            for a in node.args:
                self._validate(a, cname)
            return
        if isinstance(node, ast.Name):
            if node.id not in ("True", "False"):
                self.names.add(node.id)
            return
        if isinstance(node, ast.Constant) and not isinstance(
            node.value, int | float | str | bool
        ):
            raise SpaceDefinitionError(
                f"constraint {cname!r}: literal {node.value!r} is not allowed", field="expr"
            )
        for child in ast.iter_child_nodes(node):
            self._validate(child, cname)

    def __call__(self, cols: Mapping[str, np.ndarray]) -> Any:
        return self._eval(self.tree.body, cols)

    def _eval(self, node: ast.AST, cols: Mapping[str, np.ndarray]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return cols[node.id]
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self._eval(e, cols) for e in node.elts)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, cols)
            if isinstance(node.op, ast.Not):
                return np.logical_not(v)
            return np.negative(v) if isinstance(node.op, ast.USub) else np.positive(v)
        if isinstance(node, ast.BinOp):
            return _BINOPS[type(node.op)](self._eval(node.left, cols), self._eval(node.right, cols))
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
