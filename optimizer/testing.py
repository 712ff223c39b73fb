"""The optimizer conformance suite: checks every ask/tell optimizer must pass.

Like ``optuna.testing``, this is library code so that a plugin's author runs the same
checks on their optimizer as coexplore runs on its own (``tests/conformance``). In the
plugin's own tests (``tests/experiments/test_plugins.py`` does this for its toy plugin)::

    from optimizer.testing import check_optimizer

    def test_my_optimizer_conforms():
        check_optimizer(MyOptimizer, options={"n_init": 3})   # the class (or any factory)

Each check raises :class:`ConformanceError` (an ``AssertionError``) that names the check
and what differed. The protocol (:mod:`optimizer.base`):

* :func:`check_ask_tell` -- ``ask(n)`` returns at most ``n`` points of the space (each
  valid under :meth:`DesignSpace.validate`), numbered in order; ``tell`` takes COMPLETE,
  INFEASIBLE and FAILED trials.
* :func:`check_state_is_seed_and_history` -- two instances built with the same
  ``(space, objectives, seed, options)`` and told the same history ask the same points
  (an optimizer drawing from unseeded randomness, wall-clock time or global state fails).
* :func:`check_resume` -- an instance built fresh and told the history of a serial run
  (the study's resume after a kill) continues with the points the original asks next (an
  optimizer whose proposals depend on how many times ``ask`` was called fails).

The space (:func:`conformance_space`) is small and discrete (a power of two, a
categorical, an integer, under one known constraint) so that every kind of optimizer
(grid, local walks, BO, Optuna samplers) applies; the objectives are cheap closed forms.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from design_space import Categorical, Constraint, DesignSpace, Integer, PowerOfTwo
from optimizer.base import Objective, Optimizer, Point, Trial, TrialStatus

__all__ = ["ConformanceError", "check_ask_tell", "check_optimizer", "check_resume",
           "check_state_is_seed_and_history", "conformance_objectives", "conformance_space", "run_history"]


class ConformanceError(AssertionError):
    """An entry broke its registry's protocol (the message names the check)."""


def conformance_space() -> DesignSpace:
    """48 points less a known constraint: ``a`` in 1..16 (powers of two), ``b`` in x/y/z,
    ``c`` in 0..3, with ``a * (c + 1) <= 32``."""
    return DesignSpace(PowerOfTwo("a", 1, 16), Categorical("b", ["x", "y", "z"]), Integer("c", 0, 3),
                       constraints=[Constraint("budget", "a * (c + 1) <= 32")], name="conformance")


def conformance_objectives(k: int = 1) -> tuple[Objective, ...]:
    """``k`` (1 or 2) minimized objectives ``f0``, ``f1``."""
    return tuple(Objective(f"f{i}", "min") for i in range(k))


def _score(p: Point) -> dict[str, float]:
    la = math.log2(p["a"])
    f0 = (la - 2.0) ** 2 + (p["c"] - 2) ** 2 + (0.0 if p["b"] == "y" else 1.5)
    f1 = (la - 4.0) ** 2 + p["c"] ** 2 + (0.0 if p["b"] == "x" else 1.0)
    return {"f0": f0, "f1": f1}


def _trial(number: int, p: Point, objectives: Sequence[Objective]) -> Trial:
    """COMPLETE with the objectives, except: ``c == 3`` is INFEASIBLE (an unknown
    constraint) and every seventh trial FAILED, so every status is told."""
    if number % 7 == 6:
        return Trial(number, dict(p), TrialStatus.FAILED, reason="conformance: a failed evaluation")
    if p["c"] == 3:
        return Trial(number, dict(p), TrialStatus.INFEASIBLE, reason="conformance: c == 3")
    s = _score(p)
    return Trial(number, dict(p), TrialStatus.COMPLETE, {o.name: s[o.name] for o in objectives})


Factory = Callable[..., Optimizer]


def _build(factory: Factory, seed: int, options: Mapping[str, Any], objectives: Sequence[Objective]) -> Optimizer:
    return factory(conformance_space(), tuple(objectives), seed, **dict(options))


def run_history(opt: Optimizer, rounds: int, batch: int, objectives: Sequence[Objective]) -> list[list[Point]]:
    """Drive ``opt`` ``rounds`` times: ask ``batch`` points, tell them scored; returns the
    asked batches (checking the ask side of the protocol on the way)."""
    space = opt.space
    asked: list[list[Point]] = []
    for _ in range(rounds):
        first = opt.next_number
        pts = opt.ask(batch)
        if not isinstance(pts, list) or len(pts) > batch:
            raise ConformanceError(f"ask({batch}) must return a list of at most {batch} points, got {pts!r}")
        for p in pts:
            bad = space.validate(p)
            if bad:
                raise ConformanceError(f"ask proposed {p!r}, not a valid point of the space: {bad}")
        if opt.next_number != first + len(pts):
            raise ConformanceError(f"ask returned {len(pts)} points but next_number went {first} -> "
                                   f"{opt.next_number}")
        opt.tell([_trial(first + i, p, objectives) for i, p in enumerate(pts)])
        asked.append([dict(p) for p in pts])
        if not pts:
            break
    return asked


def check_ask_tell(factory: Factory, options: Mapping[str, Any] | None = None, *, objectives: int = 1,
                   rounds: int = 6, batch: int = 2, seed: int = 0) -> None:
    """``ask``/``tell`` over :func:`conformance_space` (see the module docstring)."""
    objs = conformance_objectives(objectives)
    opt = _build(factory, seed, options or {}, objs)
    if opt.ask(0) != []:
        raise ConformanceError("ask(0) must return []")
    asked = run_history(opt, rounds, batch, objs)
    if not any(asked):
        raise ConformanceError("the optimizer proposed nothing on a fresh 48-point space")
    told = [t.number for t in opt.trials]
    if told != list(range(len(told))) or any(not t.status.finished for t in opt.trials):
        raise ConformanceError(f"after tell, the history should hold finished trials 0..n-1, got {told}")


def check_state_is_seed_and_history(factory: Factory, options: Mapping[str, Any] | None = None, *,
                                    objectives: int = 1, rounds: int = 5, batch: int = 2, seed: int = 3) -> None:
    """Same seed and same history -> same next points (two independent instances)."""
    objs = conformance_objectives(objectives)
    a = _build(factory, seed, options or {}, objs)
    b = _build(factory, seed, options or {}, objs)
    for r in range(rounds):
        pa, pb = a.ask(batch), b.ask(batch)
        if pa != pb:
            raise ConformanceError(f"state is not f(seed, history): two instances with seed {seed} and the "
                                   f"same history asked different points in round {r}: {pa!r} vs {pb!r}")
        first = a.next_number - len(pa)
        told = [_trial(first + i, p, objs) for i, p in enumerate(pa)]
        a.tell(told)
        b.tell(told)
        if not pa:
            break


def check_resume(factory: Factory, options: Mapping[str, Any] | None = None, *, objectives: int = 1,
                 rounds: int = 6, batch: int = 1, seed: int = 5, after: int = 3) -> None:
    """A fresh instance told the history of ``rounds`` rounds asks what the original asks
    next, for ``after`` more rounds. ``batch=1`` (serial use, a study with one worker) is
    the case every optimizer reconstructs exactly; an optimizer that also resumes batch
    runs exactly may be checked with a larger ``batch`` (Q-learning's walkers do not:
    :mod:`optimizer.qlearning`, "Reconstruction and batches")."""
    objs = conformance_objectives(objectives)
    a = _build(factory, seed, options or {}, objs)
    run_history(a, rounds, batch, objs)
    b = _build(factory, seed, options or {}, objs)
    b.tell(a.trials)
    for r in range(after):
        pa, pb = a.ask(batch), b.ask(batch)
        if pa != pb:
            raise ConformanceError(f"resume: an instance rebuilt from (seed {seed}, the history of {rounds} "
                                   f"rounds) asked {pb!r} where the original asked {pa!r} (round {r} after)")
        first = a.next_number - len(pa)
        told = [_trial(first + i, p, objs) for i, p in enumerate(pa)]
        a.tell(told)
        b.tell(told)


def check_optimizer(factory: Factory, options: Mapping[str, Any] | None = None, *, objectives: int = 1) -> None:
    """Every check of this suite."""
    check_ask_tell(factory, options, objectives=objectives)
    check_state_is_seed_and_history(factory, options, objectives=objectives)
    check_resume(factory, options, objectives=objectives)
