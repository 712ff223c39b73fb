"""Every figure by name: the records it is rendered from and its renderer.

A renderer is ``render(root) -> markdown``: it reads only the records it names (paths
relative to the repository root ``root``) and returns the text of the block.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import experiments.figures.cost_model as cost_model
import experiments.figures.guides as guides
from experiments.figures import benchmarks, d2nn, hasco, meloppr, reproductions, scale_out, shi2020

__all__ = ["FIGURES", "Figure", "UnknownFigure", "figure"]


@dataclass(frozen=True)
class Figure:
    name: str
    records: tuple[str, ...]
    render: Callable[[Path], str]


class UnknownFigure(KeyError):
    """A marker names a figure no renderer makes."""

    def __str__(self) -> str:
        return str(self.args[0])


def _collect() -> dict[str, Figure]:
    out: dict[str, Figure] = {}
    for module in (shi2020, hasco, d2nn, meloppr, benchmarks, cost_model, reproductions, scale_out, guides):
        for name, (records, render) in module.FIGURES.items():
            if name in out:
                raise RuntimeError(f"figure {name!r} is defined twice")
            out[name] = Figure(name, tuple(records), render)
    return out


FIGURES: dict[str, Figure] = _collect()


def figure(name: str) -> Figure:
    """The figure ``name``; an unknown name is an error with the closest known names."""
    try:
        return FIGURES[name]
    except KeyError:
        close = difflib.get_close_matches(name, FIGURES, n=3)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise UnknownFigure(f"unknown figure {name!r}{hint} (known: {sorted(FIGURES)})") from None
