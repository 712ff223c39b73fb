"""Optuna's samplers (TPE, NSGA-II, random, GP) behind coexplore's ask/tell protocol.

These are the baselines the Bayesian optimizers are compared against. Optuna is an
optional dependency (the ``baselines`` extra: ``pip install -e ".[baselines]"``); this
module imports it only when an :class:`OptunaOptimizer` is built.

Parameters -> Optuna distributions (define-by-run, one ``trial.suggest_*`` per value):

================  =========================================================================
kind              Optuna
================  =========================================================================
``Integer``       ``suggest_int(name, low, high, log=log)``
``Real``          ``suggest_float(name, low, high, log=log)``
``PowerOfTwo``    ``suggest_int(name, log2 low, log2 high)`` over the exponent
``Ordinal``       ``suggest_int(name, 0, n - 1)`` over the index, so TPE's kernels and
                  NSGA-II's crossover keep the order of the values
``Categorical``   ``suggest_categorical(name, choices)`` (over the indices ``0..n-1`` when two
                  choices are ``==`` in Python, e.g. ``1`` and ``True``)
``Permutation``   *random keys*: one ``suggest_float("name[i]", 0, 1)`` per item ``i``; the
                  permutation lists the items by increasing key (stable ``argsort``, ties ->
                  item order). A permutation from the history is told back as the keys
                  ``(position + 0.5) / n``, which sort into that permutation.
``Fixed``         not suggested; the value is added to the point.
================  =========================================================================

Conditional parameters are suggested only when active, deciding on the parents already
suggested (:meth:`DesignSpace.is_active` in :attr:`DesignSpace.dependency_order`), so
Optuna sees exactly the parameters a point has. For a :class:`JointSpace` the hardware
parameters are suggested first, then those of ``space.software_space(hw)``; software
ranges may depend on the hardware (Optuna allows different integer/float ranges under
one name). A software ``Categorical`` whose choices differ from those of the reference
software space is suggested under a name qualified by its choices (Optuna requires one
choice set per name), i.e. as a separate conditional parameter.

Known constraints (``space.validate``): Optuna's samplers do not know them, yet no
infeasible point is ever proposed. A suggestion that violates known constraints is told
to the Optuna study as ``PRUNED`` with Optuna constraint values
(``trial.set_constraint``; Optuna 5's replacement for ``constraints_func``):
``"known:<constraint>" = 1.0`` for each violated constraint (constraints are boolean
predicates, so the violation amount is the number of violated constraints). TPE puts such
trials in its "above" group, ranked by total violation, so it learns to move away from
them while it re-asks; NSGA-II and GP ignore pruned trials and simply draw again (NSGA-II
with a new crossover/mutation; GP re-optimizes its acquisition function, which tends to
return the same point, hence its small default ``max_resample``). Up to ``max_resample``
re-asks (default 100; 2 for GP), then a feasible point from ``space.sample`` (seeded). With
``deduplicate=True`` a suggestion equal to a point already in the history (or earlier in
the batch) is handled the same way, with ``"duplicate" = 1.0``.

History -> Optuna trials: COMPLETE trials with finite values for every objective ->
``COMPLETE`` with the values in objective order (directions ``min``/``max`` ->
``minimize``/``maximize``); their outcome constraints (``Trial.constraints``, ``<= 0``
feasible) -> Optuna constraints ``"outcome:<name>"`` (the same names on every complete
trial, missing ones as 0, as the GP sampler needs), which TPE, NSGA-II (constrained
domination) and GP (constrained EI) all use. INFEASIBLE trials, and FAILED ones with a
positive constraint value -> ``PRUNED`` with their constraint values (plus
``"infeasible" = 1.0`` when none is positive). Other FAILED trials, and COMPLETE ones
with a missing or non-finite objective value -> ``FAIL`` (ignored by the samplers).
RUNNING and WAITING trials -> ``RUNNING`` (TPE runs with ``constant_liar=True``, GP uses
them in its batch acquisition), so ``ask(n)`` proposes n different points.

Determinism and reconstruction: every proposal is a pure function of ``(seed, history)``.
For each proposal (trial number ``i``) the adapter builds a fresh in-memory Optuna study
from the history (``optuna.trial.create_trial`` + ``study.add_trials``, in trial-number
order; earlier proposals of the same batch as RUNNING) and a fresh sampler seeded from
``(seed, i)`` (:func:`optimizer.base.proposal_rng`), then asks until it gets a feasible
point. Nothing carries over from one proposal to the next: the re-asks of rejected
suggestions, the sampler's RNG stream and caches all start anew, so a study resumed from
its stored trials continues exactly as the uninterrupted one, and ``ask(2)`` equals two
``ask(1)`` calls with the first point pending. For NSGA-II the generation of every
history trial (Optuna keeps it in a trial system attribute) is recomputed with Optuna's
own rule, as if the trials had been asked one at a time in number order.
Cost: rebuilding the study is about 0.1 ms per past trial and proposal.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from design_space.joint import JointSpace
from design_space.parameters import (
    Categorical,
    Fixed,
    Integer,
    Ordinal,
    Parameter,
    Permutation,
    PowerOfTwo,
    Real,
)
from design_space.space import DesignSpace
from optimizer.base import Objective, Optimizer, Point, Trial, TrialStatus, proposal_rng

if TYPE_CHECKING:  # pragma: no cover
    import optuna

#: ``sampler=`` value -> registry name
SAMPLER_NAMES = {"tpe": "tpe", "nsga2": "nsga2", "random": "optuna-random", "gp": "optuna-gp"}

_SEED_STREAM = 0x0A7  # proposal_rng stream of the Optuna samplers' seeds
_MAX_RESAMPLE = 100
# GPSampler ignores pruned trials and optimizes its acquisition function (seconds per
# suggestion) to nearly the same optimum on every re-ask: re-asking many times is slow and
# futile, so it falls back to space.sample early.
_GP_MAX_RESAMPLE = 2


def import_optuna() -> Any:
    """``import optuna``, or an ``ImportError`` that says how to install it."""
    try:
        import optuna
    except ImportError as e:
        raise ImportError(
            "the Optuna baselines (tpe, nsga2, optuna-random, optuna-gp) need Optuna, an "
            "optional dependency of coexplore: install the 'baselines' extra, "
            "pip install -c constraints.txt -e \".[baselines]\" (optuna>=5.0,<6)"
        ) from e
    return optuna


@contextlib.contextmanager
def _quiet(optuna: Any) -> Iterator[None]:
    """Silence Optuna's INFO logs (one 'A new study created' line per proposal)."""
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(max(level, optuna.logging.WARNING))
    try:
        yield
    finally:
        optuna.logging.set_verbosity(level)


def _finite_constraint(v: Any) -> float:
    """Optuna refuses NaN constraint values; a NaN constraint counts as violated."""
    v = float(v)
    if math.isnan(v):
        return 1.0
    return float(np.clip(v, -1e12, 1e12))


class OptunaOptimizer(Optimizer):
    """An Optuna sampler as an ask/tell optimizer (see the module docstring).

    Args:
        space: a ``DesignSpace`` or ``JointSpace``.
        objectives: one or more :class:`~optimizer.base.Objective` (``min``/``max``).
        seed: study-derived seed.
        sampler: ``"tpe"`` (``TPESampler(multivariate=True, constant_liar=True)``),
            ``"nsga2"`` (``NSGAIISampler``; with one objective it is a plain GA),
            ``"random"`` (``RandomSampler``) or ``"gp"`` (``GPSampler``).
        sampler_options: extra keyword arguments of the Optuna sampler
            (``n_startup_trials``, ``population_size``, ...); they override the defaults
            above.
        max_resample: how many times a suggestion that violates a known constraint (or
            duplicates a known point) is re-asked before falling back to
            ``space.sample``; default 100, and 2 for ``"gp"`` (GP learns nothing from the
            rejected suggestion and would spend seconds re-deriving nearly the same one).
        deduplicate: reject suggestions equal to a point already in the study.

    Attributes:
        resample_count: suggestions rejected by this instance so far (diagnostic only;
            not part of the reconstructible state).
        fallback_count: proposals that fell back to ``space.sample`` (diagnostic only).
    """

    name = "optuna"

    def __init__(
        self,
        space: Any,
        objectives: Sequence[Objective] | None = None,
        seed: int = 0,
        *,
        sampler: str = "tpe",
        sampler_options: Mapping[str, Any] | None = None,
        max_resample: int | None = None,
        deduplicate: bool = True,
    ) -> None:
        super().__init__(space, objectives, seed)
        if sampler not in SAMPLER_NAMES:
            raise ValueError(
                f"optuna: unknown sampler {sampler!r} (known: {sorted(SAMPLER_NAMES)})"
            )
        if not self.objectives:
            raise ValueError("optuna: at least one objective is required")
        if max_resample is None:
            max_resample = _GP_MAX_RESAMPLE if sampler == "gp" else _MAX_RESAMPLE
        if max_resample < 0:
            raise ValueError(f"optuna: max_resample must be >= 0, got {max_resample}")
        self._optuna = import_optuna()
        if sampler == "gp" and not hasattr(self._optuna.samplers, "GPSampler"):
            raise ImportError(
                f"optuna {self._optuna.__version__} has no GPSampler (needs optuna>=5.0)"
            )
        self.sampler = sampler
        self.name = SAMPLER_NAMES[sampler]
        self.sampler_options = dict(sampler_options or {})
        self.max_resample = int(max_resample)
        self.deduplicate = bool(deduplicate)
        self.resample_count = 0
        self.fallback_count = 0
        self._directions = [
            "minimize" if o.direction == "min" else "maximize" for o in self.objectives
        ]
        self._ref_choices: dict[str, tuple[Any, ...]] = {}
        if isinstance(space, JointSpace):
            ref = space.software_space(space.hardware.sample(1, seed=0)[0])
            self._ref_choices = {p.name: p.choices for p in ref if isinstance(p, Categorical)}
            self._check_names(space.hardware, ref)
        elif isinstance(space, DesignSpace):
            self._check_names(space)
        else:
            raise TypeError(
                f"optuna: space must be a DesignSpace or JointSpace, got {type(space).__name__}"
            )
        # building one sampler now turns bad sampler_options into a TypeError here (which
        # make_optimizer reports as bad options), not at the first ask
        self._make_sampler(0)
        self._converted: dict[int, tuple[Trial, dict[str, Any], dict[str, Any]] | None] = {}

    # ------------------------------------------------------------------ samplers
    def _make_sampler(self, seed: int) -> Any:
        s = self._optuna.samplers
        opts = dict(self.sampler_options)
        if self.sampler == "tpe":
            kw: dict[str, Any] = {"multivariate": True, "constant_liar": True}
            return s.TPESampler(seed=seed, **{**kw, **opts})
        if self.sampler == "nsga2":
            return s.NSGAIISampler(seed=seed, **opts)
        if self.sampler == "random":
            return s.RandomSampler(seed=seed, **opts)
        return s.GPSampler(seed=seed, **{"warn_independent_sampling": False, **opts})

    # ------------------------------------------------------------------ parameter mapping
    def _check_names(self, *spaces: DesignSpace) -> None:
        seen: dict[str, str] = {}
        for ds in spaces:
            for p in ds.params:
                for n in self._distributions(p, software=False):
                    if n in seen:
                        raise ValueError(
                            f"optuna: parameters {seen[n]!r} and {p.name!r} both map to the "
                            f"Optuna parameter name {n!r}; rename one"
                        )
                    seen[n] = p.name

    @staticmethod
    def _categorical_values(p: Categorical) -> tuple[Any, ...]:
        """The choices, or their indices when two of them are ``==`` (``1`` and ``True``),
        which Optuna's index lookup could not tell apart."""
        try:
            distinct = len(set(p.choices)) == len(p.choices)
        except TypeError:  # pragma: no cover - choices are scalars
            distinct = False
        return p.choices if distinct else tuple(range(len(p.choices)))

    def _distributions(self, p: Parameter, *, software: bool) -> dict[str, Any]:
        """Optuna name -> distribution for the values of ``p`` (empty for ``Fixed``)."""
        d = self._optuna.distributions
        if isinstance(p, Integer):
            return {p.name: d.IntDistribution(p.low, p.high, log=p.log)}
        if isinstance(p, Real):
            return {p.name: d.FloatDistribution(p.low, p.high, log=p.log)}
        if isinstance(p, PowerOfTwo):
            return {p.name: d.IntDistribution(p.low.bit_length() - 1, p.high.bit_length() - 1)}
        if isinstance(p, Ordinal):
            return {p.name: d.IntDistribution(0, len(p.values) - 1)}
        if isinstance(p, Categorical):
            name = p.name
            ref = self._ref_choices.get(p.name)
            if software and ref is not None and ref != p.choices:
                name = f"{p.name}{{{'|'.join(repr(c) for c in p.choices)}}}"
            return {name: d.CategoricalDistribution(self._categorical_values(p))}
        if isinstance(p, Permutation):
            return {f"{p.name}[{i}]": d.FloatDistribution(0.0, 1.0) for i in range(len(p.items))}
        if isinstance(p, Fixed):
            return {}
        raise TypeError(f"optuna: no Optuna mapping for parameter kind {p.kind!r}")

    def _from_optuna(self, p: Parameter, values: Mapping[str, Any]) -> Any:
        """Our value of ``p`` from its Optuna values (keyed as in :meth:`_distributions`)."""
        vs = list(values.values())
        if isinstance(p, Integer):
            return int(vs[0])
        if isinstance(p, Real):
            return float(vs[0])
        if isinstance(p, PowerOfTwo):
            return 1 << int(vs[0])
        if isinstance(p, Ordinal):
            return p.values[int(vs[0])]
        if isinstance(p, Categorical):
            choices = self._categorical_values(p)
            if choices is p.choices:
                return p.normalize(vs[0])
            return p.choices[int(vs[0])]
        if isinstance(p, Permutation):
            order = np.argsort(np.asarray(vs, dtype=np.float64), kind="stable")
            return tuple(p.items[i] for i in order)
        raise TypeError(f"optuna: no Optuna mapping for parameter kind {p.kind!r}")

    def _to_optuna(self, p: Parameter, value: Any, names: Sequence[str]) -> dict[str, Any]:
        """Optuna values of a legal, normalized ``value`` of ``p``."""
        if isinstance(p, Integer | Real):
            return {names[0]: value}
        if isinstance(p, PowerOfTwo):
            return {names[0]: int(value).bit_length() - 1}
        if isinstance(p, Ordinal):
            return {names[0]: p.index_of(value)}
        if isinstance(p, Categorical):
            choices = self._categorical_values(p)
            return {names[0]: value if choices is p.choices else p.index_of(value)}
        if isinstance(p, Permutation):
            k = len(p.items)
            pos = {(type(v), v): i for i, v in enumerate(value)}
            return {
                n: (pos[(type(item), item)] + 0.5) / k for n, item in zip(names, p.items)
            }
        raise TypeError(f"optuna: no Optuna mapping for parameter kind {p.kind!r}")

    def _walk(
        self, choose: Callable[[Parameter, dict[str, Any]], Any], *, stop_if_hw_infeasible: bool
    ) -> Point:
        """Build a point parameter by parameter; ``choose(p, distributions)`` gives the value
        of each active, non-fixed parameter. With ``stop_if_hw_infeasible``, a joint point
        whose hardware part violates a known hardware constraint stops there: the hardware
        point alone is returned (the software space of such hardware is never built)."""

        def walk(ds: DesignSpace, software: bool) -> Point:
            pt: Point = {}
            for p in ds.dependency_order:
                if not ds.is_active(p, pt):
                    continue
                if isinstance(p, Fixed):
                    pt[p.name] = p.value
                else:
                    pt[p.name] = choose(p, self._distributions(p, software=software))
            return ds.normalize(pt)

        if not isinstance(self.space, JointSpace):
            return walk(self.space, False)
        hw = walk(self.space.hardware, False)
        if stop_if_hw_infeasible and self.space.hardware.validate(hw):
            return hw
        return {**hw, **walk(self.space.software_space(hw), True)}

    def suggest(self, trial: optuna.Trial) -> Point:
        """Ask a live Optuna trial for a point (define-by-run). For a joint space whose
        suggested hardware already violates a known constraint, only the hardware point."""

        def choose(p: Parameter, dists: dict[str, Any]) -> Any:
            d = self._optuna.distributions
            vals: dict[str, Any] = {}
            for n, dist in dists.items():
                if isinstance(dist, d.IntDistribution):
                    vals[n] = trial.suggest_int(n, dist.low, dist.high, log=dist.log)
                elif isinstance(dist, d.FloatDistribution):
                    vals[n] = trial.suggest_float(n, dist.low, dist.high, log=dist.log)
                else:
                    vals[n] = trial.suggest_categorical(n, dist.choices)
            return self._from_optuna(p, vals)

        return self._walk(choose, stop_if_hw_infeasible=True)

    def to_optuna_params(self, point: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(params, distributions)`` of a valid point, as Optuna stores a trial.

        Raises:
            ValueError: the point is not in the space (unknown, missing or illegal values).
        """
        bad = self.space.validate(point, constraints=False)
        if bad:
            raise ValueError("optuna: " + "; ".join(map(str, bad)))
        norm = self.space.normalize(point)
        params: dict[str, Any] = {}
        dists: dict[str, Any] = {}

        def choose(p: Parameter, ds: dict[str, Any]) -> Any:
            v = norm[p.name]
            params.update(self._to_optuna(p, v, list(ds)))
            dists.update(ds)
            return v

        self._walk(choose, stop_if_hw_infeasible=False)
        return params, dists

    def from_optuna_params(self, params: Mapping[str, Any]) -> Point:
        """The point of Optuna ``params`` (inverse of :meth:`to_optuna_params`)."""

        def choose(p: Parameter, ds: dict[str, Any]) -> Any:
            return self._from_optuna(p, {n: params[n] for n in ds})

        return self._walk(choose, stop_if_hw_infeasible=False)

    # ------------------------------------------------------------------ history
    def _converted_params(self, t: Trial) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """Cached :meth:`to_optuna_params` of a history trial; ``None`` if not in the space."""
        hit = self._converted.get(t.number)
        if hit is not None and hit[0] is t:
            return hit[1], hit[2]
        try:
            params, dists = self.to_optuna_params(t.params)
        except ValueError:
            self._converted[t.number] = None
            return None
        self._converted[t.number] = (t, params, dists)
        return params, dists

    def _state_values_constraints(
        self, t: Trial, outcome_names: Sequence[str]
    ) -> tuple[Any, list[float] | None, dict[str, float]]:
        """Optuna state, values and constraints of a history trial (module docstring)."""
        ts = self._optuna.trial.TrialState
        cons = {f"outcome:{k}": _finite_constraint(v) for k, v in sorted(t.constraints.items())}
        if not t.status.finished:
            return ts.RUNNING, None, {}
        if t.status is TrialStatus.COMPLETE:
            vals = [t.metrics.get(o.name) for o in self.objectives]
            if all(v is not None and math.isfinite(float(v)) for v in vals):
                full = {f"outcome:{k}": 0.0 for k in outcome_names}
                full.update(cons)
                return ts.COMPLETE, [float(v) for v in vals], full  # type: ignore[arg-type]
            return ts.FAIL, None, {}
        positive = any(v > 0 for v in cons.values())
        if t.status is TrialStatus.INFEASIBLE or positive:
            if not positive:
                cons["infeasible"] = 1.0
            return ts.PRUNED, None, cons
        return ts.FAIL, None, {}

    def _history(self, extra_running: Sequence[Trial]) -> list[Any]:
        """The history (plus ``extra_running`` pending points) as Optuna ``FrozenTrial``s,
        in trial-number order."""
        create = self._optuna.trial.create_trial
        trials = self.trials + list(extra_running)
        outcome_names = sorted(
            {k for t in trials if t.status is TrialStatus.COMPLETE for k in t.constraints}
        )
        rows = []
        for t in trials:
            conv = self._converted_params(t)
            if conv is None:
                continue  # a point outside the space (e.g. from an older space definition)
            state, values, cons = self._state_values_constraints(t, outcome_names)
            rows.append((t, conv, state, values, cons))
        generations = self._generations([r[2] for r in rows])
        out = []
        for i, (_t, (params, dists), state, values, cons) in enumerate(rows):
            sys_attrs = generations[i] if generations else None
            out.append(
                create(
                    state=state,
                    values=values,
                    params=params,
                    distributions=dists,
                    system_attrs=sys_attrs,
                    constraints=cons or None,
                )
            )
        return out

    def _generations(self, states: Sequence[Any]) -> list[dict[str, int]] | None:
        """For genetic samplers: the generation system attribute of each history trial,
        by Optuna's own rule (``BaseGASampler.get_trial_generation``) applied in trial-number
        order: a trial joins the newest generation among the earlier COMPLETE trials, or
        opens the next one when that generation already holds ``population_size``."""
        if self.sampler != "nsga2":
            return None
        ga = self._optuna.samplers.BaseGASampler
        proto = self._make_sampler(0)
        assert isinstance(proto, ga)
        key = type(proto)._get_generation_key()
        pop = int(proto.population_size)
        complete = self._optuna.trial.TrialState.COMPLETE
        max_gen, count = 0, 0
        out = []
        for st in states:
            gen = max_gen if count < pop else max_gen + 1
            out.append({key: gen})
            if st == complete:
                if gen > max_gen:
                    max_gen, count = gen, 1
                elif gen == max_gen:
                    count += 1
        return out

    # ------------------------------------------------------------------ proposals
    def _propose(self, n: int, first_number: int) -> list[Point]:
        optuna = self._optuna
        seen = {self.space.point_key(t.params) for t in self.trials} if self.deduplicate else set()
        out: list[Point] = []
        with _quiet(optuna):
            for k in range(n):
                number = first_number + k
                pending = [Trial(first_number + j, p, TrialStatus.RUNNING) for j, p in enumerate(out)]
                point = self._propose_one(number, pending, seen)
                if self.deduplicate:
                    seen.add(self.space.point_key(point))
                out.append(point)
        return out

    def _propose_one(self, number: int, pending: Sequence[Trial], seen: set[str]) -> Point:
        optuna = self._optuna
        rng = proposal_rng(self.seed, number, stream=_SEED_STREAM)
        sampler = self._make_sampler(int(rng.integers(2**32)))
        study = optuna.create_study(directions=self._directions, sampler=sampler)
        study.add_trials(self._history(pending))
        for _ in range(self.max_resample + 1):
            trial = study.ask()
            point = self.suggest(trial)
            reasons = self._violations(point)
            if not reasons and self.deduplicate and self.space.point_key(point) in seen:
                reasons = {"duplicate": 1.0}
            if not reasons:
                # (the accepted trial stays RUNNING in this throw-away study)
                return point
            self.resample_count += 1
            for key, v in reasons.items():
                trial.set_constraint(key, v)
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        self.fallback_count += 1
        point = self.space.sample(1, rng)[0]
        for _ in range(_MAX_RESAMPLE):
            if not self.deduplicate or self.space.point_key(point) not in seen:
                break
            point = self.space.sample(1, rng)[0]
        return point

    def _violations(self, point: Mapping[str, Any]) -> dict[str, float]:
        """Optuna constraint values (``> 0`` = violated) of a point's known-constraint
        violations; empty when the point is feasible."""
        space = self.space
        if isinstance(space, JointSpace) and set(point) <= set(space.hardware.names):
            viol = space.hardware.validate(point)
        else:
            viol = space.validate(point)
        out: dict[str, float] = {}
        for v in viol:
            key = f"known:{v.name}" if v.kind == "constraint" else f"{v.kind}:{v.name}"
            out[key] = 1.0
        return out
