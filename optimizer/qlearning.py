"""Tabular Q-learning over any design space: a sequential-decision optimizer.

The search is a walk through the space (as in HASCO's and FlexTensor's Q-learning
mapping/schedule optimizers): a *state* is a design point, an *action* moves one
parameter one step, and the agent learns which moves improve the objective.

Actions
    A fixed list per space, built from the parameters (for a ``JointSpace``: the
    hardware parameters, then the software parameters of its reference software space;
    every software space has the same names, kinds and widths). ``Fixed`` parameters
    get none. Ordered kinds (``Integer``, ``PowerOfTwo``, ``Ordinal``, ``Real``) get
    ``(name, -1)`` and ``(name, +1)``: one step to the adjacent value in encoding order
    (``Real``: +-5 % of the range in encoded space, as ``Real.neighbors``).
    ``Categorical`` gets ``(name, k)``, "switch to choice k"; ``Permutation`` gets
    ``(name, i)``, "swap positions i and i + 1".

Legal actions
    The legal moves at a point are exactly the space's own ``neighbors(point)``, each
    mapped back to the action that produced it (the first parameter, hardware before
    software, present in both points whose value changed). ``neighbors`` already keeps
    only valid points that satisfy every known constraint, repairs conditional
    parameters (children activated by a changed parent take their defaults, deactivated
    ones are dropped) and, on a ``JointSpace``, carries the software point over to the
    new hardware. So a proposal never violates a known constraint, and the same code
    serves ``DesignSpace`` and ``JointSpace``.

State and Q table
    ``Q[(point_key(state), action)]`` (default 0): tabular, with points hashed by
    ``space.point_key``. See :attr:`QLearning.q_table`.

Walk
    Episodes of ``episode_length`` moves. A new episode starts, with probability
    ``restart_best``, at the best feasible point seen so far (that point is already
    evaluated, so the first proposal is one move away from it), otherwise at a fresh
    random sample (``space.sample``), which is itself the episode's first proposal and,
    having no ``(state, action)``, gets no Q update. Each move is epsilon-greedy among
    the legal actions whose resulting point has not been evaluated (nor proposed) in the
    study yet: with probability ``eps_t`` uniformly at random, else the action of largest
    Q, ties broken at random; all random choices use the proposal's generator.
    ``eps_t = max(epsilon_min, epsilon * exp(-epsilon_decay * t))`` with ``t`` the trial
    number of the proposal (the number of proposals made before it), as HASCO/FlexTensor
    decay it. When every legal move from the walker's state leads to an evaluated point,
    the walker starts a new episode at a fresh sample (re-drawn up to ``max_redraws``
    times until unevaluated).

Reward and update (when a trial finishes)
    For the first objective, with ``v = sign * y`` (``Objective.sign``; smaller is
    better): ``r = tanh((v_from - v_new) / |v_from|)`` where ``from`` is the state the
    move started from. HASCO uses ``tanh(max(v_from - v_new, 0))``, which depends on the
    metric's units (an EDP in pJ*cycles saturates at +1 for any improvement) and gives no
    signal for getting worse; dividing by ``|v_from|`` makes the reward scale-free (a 10 %
    improvement is worth ``tanh(0.1)`` whatever the unit) and keeping the sign lets the
    agent learn which moves hurt. (``|v_from|`` is floored at ``1e-12``.) INFEASIBLE or
    FAILED trials, COMPLETE ones that violate an outcome constraint and ones without a
    finite objective value get ``r = -1``, are treated as terminal (the target is ``r``,
    no bootstrap: the move leads to no state) and the walker stays where it was.
    Otherwise ``Q(s,a) += alpha * (r + gamma * max_a' Q(s',a') - Q(s,a))`` (the max over
    the legal actions at ``s'``, unvisited ones counting 0) and the walker moves to
    ``s'`` (even when it is worse: it is a walk, not a hill climb; the restarts at the
    best point provide the ratchet).

Reconstruction and batches
    Each proposal is a pure function of the generator ``proposal_rng(seed, i)`` of its
    trial number ``i``, the agent state (Q table, walkers, best point) and the points
    already in the study. For each proposal the optimizer remembers the *plan* that made
    it (walker, state, action, episode step). Finished trials are processed in trial
    number order (if one arrives with a number below an already processed one, the agent
    state is rebuilt from scratch by replaying every finished trial in number order, so
    it does not depend on the order of arrival). A finished trial this process did not
    propose (a resumed study) gets its plan re-derived by re-running the proposal logic
    for its number from the agent state after all earlier numbers were processed; if
    that plan does not yield the trial's point (a history written by another optimizer,
    or in batch mode), the trial only updates the best point. In serial use (ask 1,
    tell 1, repeat) this re-derivation is exact: an optimizer rebuilt by telling it the
    finished history continues with exactly the points the uninterrupted one would have
    proposed. With several trials in flight (batch or asynchronous use) the re-derived
    plans may differ from the original ones, so reconstruction is then deterministic but
    not identical to the uninterrupted run.

    ``ask(n)`` with ``n > 1`` uses ``n`` independent walkers: walker ``w`` has its own
    episode (position, step count); all share the Q table and the best point. Each
    proposal goes to the lowest-numbered walker that has no proposal in flight (a new
    walker, which starts with a new episode, when all are busy), so in serial use only
    walker 0 exists, and asking 4 points at a time keeps walkers 0-3 busy, each taking
    one step per round.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer._validation import check_int, check_real
from optimizer.base import Objective, Optimizer, Point, Trial, proposal_rng

Action = tuple[str, int]

_ORDERED_KINDS = ("integer", "power_of_two", "ordinal", "real")
_LEGAL_CACHE = 4096
_V_FLOOR = 1e-12


@dataclass(frozen=True)
class _Walker:
    """One walker's episode: where it stands (``None``: needs a new episode)."""

    point: Point | None = None
    key: str | None = None
    value: float = math.nan
    steps: int = 0


@dataclass(frozen=True)
class _Plan:
    """How a proposal was made: by walker ``walker``, moving ``action`` from ``state``
    (``state is None``: a fresh sample that starts an episode)."""

    walker: int
    key: str
    state: str | None = None
    action: Action | None = None
    origin: Point | None = None
    origin_value: float = math.nan
    step: int = 0


@dataclass(frozen=True)
class _Best:
    point: Point
    key: str
    value: float


def _is_joint(space: Any) -> bool:
    return hasattr(space, "hardware") and hasattr(space, "software_space") and hasattr(
        space, "split"
    )


def _space_params(space: Any) -> list[Any]:
    if _is_joint(space):
        hw = space.hardware
        ref = space.software_space(hw.sample(1, seed=0)[0])
        return list(hw.params) + list(ref.params)
    params = getattr(space, "params", None)
    if params is None:
        raise ValueError(
            f"space: expected a DesignSpace or JointSpace, got {type(space).__name__}"
        )
    return list(params)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def space_actions(params: Sequence[Any]) -> tuple[Action, ...]:
    """The fixed action list of a space's parameters (see the module docstring):
    ``(name, -1)`` / ``(name, +1)`` for ordered kinds, ``(name, k)`` "switch to choice k"
    for a categorical, ``(name, i)`` "swap positions i and i + 1" for a permutation."""
    actions: list[Action] = []
    for p in params:
        if p.kind in _ORDERED_KINDS:
            actions += [(p.name, -1), (p.name, +1)]
        elif p.kind == "categorical":
            actions += [(p.name, k) for k in range(len(p.choices))]
        elif p.kind == "permutation":
            actions += [(p.name, i) for i in range(len(p.items) - 1)]
    return tuple(actions)


def action_between(names: Sequence[str], params: dict[str, Any], base: Point, new: Point) -> Action | None:
    """The action that moves ``base`` to its neighbour ``new``: the first parameter of
    ``names`` present in both whose value changed (``None`` if no action explains it)."""
    for name in names:
        if name not in base or name not in new or _same(base[name], new[name]):
            continue
        p = params[name]
        old, val = base[name], new[name]
        if p.kind == "categorical":
            k = p.index_of(val)
            return None if k is None else (name, k)
        if p.kind == "permutation":
            for i in range(len(old) - 1):
                if not _same(old[i], val[i]):
                    return (name, i)
            return None
        if p.kind == "ordinal":
            i, j = p.index_of(old), p.index_of(val)
            if i is None or j is None or i == j:
                return None
            return (name, 1 if j > i else -1)
        if p.kind in _ORDERED_KINDS:
            return (name, 1 if float(val) > float(old) else -1)
        return None
    return None


class QLearning(Optimizer):
    """Epsilon-greedy tabular Q-learning walk over a ``DesignSpace`` or ``JointSpace``
    (HASCO / FlexTensor style); see the module docstring for the full design.

    Single-objective: it optimizes the first of ``objectives`` (in its direction).

    Args:
        space: a ``DesignSpace`` or ``JointSpace``.
        objectives: at least one; only the first is used.
        seed: study-derived seed.
        episode_length: moves per episode (>= 1) before the walker restarts.
        restart_best: probability in ``[0, 1]`` that a new episode starts at the best
            feasible point found so far instead of at a fresh random sample.
        epsilon: initial exploration probability ``eps0`` in ``[0, 1]``.
        epsilon_min: floor ``eps_min`` in ``[0, 1]`` of the exploration probability.
        epsilon_decay: decay rate (>= 0) per proposal:
            ``eps_t = max(epsilon_min, epsilon * exp(-epsilon_decay * t))``, ``t`` the
            trial number.
        alpha: learning rate in ``(0, 1]`` of the Q update.
        gamma: discount factor in ``[0, 1]`` (HASCO uses 0.9).
        max_redraws: how many times (>= 0) a fresh sample is re-drawn to avoid a point
            already in the study (on an exhausted space it is proposed anyway).

    Raises:
        ValueError: no objective, or a hyperparameter out of range (the message names it).
    """

    name = "qlearning"

    def __init__(
        self,
        space: Any,
        objectives: Sequence[Objective] | None = None,
        seed: int = 0,
        *,
        episode_length: int = 10,
        restart_best: float = 0.5,
        epsilon: float = 0.8,
        epsilon_min: float = 0.1,
        epsilon_decay: float = 0.01,
        alpha: float = 0.5,
        gamma: float = 0.9,
        max_redraws: int = 100,
    ) -> None:
        super().__init__(space, objectives, seed)
        if not self.objectives:
            raise ValueError("objectives: qlearning needs at least one objective")
        self.episode_length = check_int("episode_length", episode_length, 1)
        self.restart_best = check_real("restart_best", restart_best, 0.0, 1.0)
        self.epsilon = check_real("epsilon", epsilon, 0.0, 1.0)
        self.epsilon_min = check_real("epsilon_min", epsilon_min, 0.0, 1.0)
        self.epsilon_decay = check_real("epsilon_decay", epsilon_decay, 0.0, math.inf)
        self.alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True)
        self.gamma = check_real("gamma", gamma, 0.0, 1.0)
        self.max_redraws = check_int("max_redraws", max_redraws, 0)
        self._objective = self.objectives[0]

        params = _space_params(space)
        self._names = [p.name for p in params]
        self._actions: tuple[Action, ...] = space_actions(params)
        self._action_index = {a: i for i, a in enumerate(self._actions)}
        self._fixed_params = None if _is_joint(space) else {p.name: p for p in params}

        # bookkeeping (pure memoization or records of this process's proposals)
        self._plans: dict[int, _Plan] = {}  # proposals made by this process
        self._derived: dict[int, _Plan] = {}  # canonical re-derived plans
        self._key_of: dict[int, str] = {}
        self._seen: set[str] = set()
        self._legal_cache: OrderedDict[str, list[tuple[Action, Point, str]]] = OrderedDict()
        self._n_legal: dict[str, int] = {}
        self._reset_agent()

    # ------------------------------------------------------------------ public views
    @property
    def actions(self) -> tuple[Action, ...]:
        """The fixed action list of this space."""
        return self._actions

    @property
    def q_table(self) -> dict[tuple[str, Action], float]:
        """A copy of the Q table: ``{(state_key, action): value}`` for visited pairs."""
        return {(s, a): q for s, row in self._q.items() for a, q in row.items()}

    def q_value(self, point: Point, action: Action) -> float:
        """``Q(point, action)`` (0 if never updated)."""
        return self._q.get(self.space.point_key(point), {}).get(action, 0.0)

    def legal_actions(self, point: Point) -> dict[Action, Point]:
        """The legal actions at ``point`` and the point each leads to."""
        return {a: dict(p) for a, p, _ in self._legal(self.space.normalize(point))}

    def epsilon_at(self, t: int) -> float:
        """Exploration probability of the proposal with trial number ``t``."""
        return max(self.epsilon_min, self.epsilon * math.exp(-self.epsilon_decay * t))

    @property
    def n_walkers(self) -> int:
        """How many walkers exist (1 in serial use; up to the number in flight)."""
        return len(self._walkers)

    @property
    def best(self) -> Point | None:
        """The best feasible point among the processed trials."""
        return dict(self._best.point) if self._best is not None else None

    # ------------------------------------------------------------------ agent state
    def _reset_agent(self) -> None:
        self._q: dict[str, dict[Action, float]] = {}
        self._walkers: list[_Walker] = []
        self._best: _Best | None = None
        self._processed: dict[int, tuple[Any, ...]] = {}
        self._max_processed = -1
        self._inflight: dict[int, int] = {
            n: p.walker for n, p in self._plans.items() if not self._finished(n)
        }

    def _finished(self, number: int) -> bool:
        t = self._trials.get(number)
        return t is not None and t.status.finished

    def _walker(self, w: int) -> _Walker:
        return self._walkers[w] if w < len(self._walkers) else _Walker()

    def _set_walker(self, w: int, walker: _Walker) -> None:
        while len(self._walkers) <= w:
            self._walkers.append(_Walker())
        self._walkers[w] = walker

    # ------------------------------------------------------------------ legal moves
    def _params_at(self, point: Point) -> dict[str, Any]:
        if self._fixed_params is not None:
            return self._fixed_params
        hw, _ = self.space.split(point)
        sw = self.space.software_space(hw)
        return {**{p.name: p for p in self.space.hardware.params}, **{p.name: p for p in sw.params}}

    def _action_of(self, base: Point, new: Point, params: dict[str, Any]) -> Action | None:
        return action_between(self._names, params, base, new)

    def _legal(self, point: Point) -> list[tuple[Action, Point, str]]:
        """``[(action, point, key)]`` in action-list order (cached per state)."""
        key = self.space.point_key(point)
        hit = self._legal_cache.get(key)
        if hit is not None:
            self._legal_cache.move_to_end(key)
            return hit
        try:
            neighbors = self.space.neighbors(point)
        except ValueError:
            neighbors = []
        params = self._params_at(point) if neighbors else {}
        moves: dict[Action, tuple[Point, str]] = {}
        for nb in neighbors:
            nb = self.space.normalize(nb)
            a = self._action_of(point, nb, params)
            if a is not None and a in self._action_index and a not in moves:
                moves[a] = (nb, self.space.point_key(nb))
        out = [(a, *moves[a]) for a in sorted(moves, key=self._action_index.__getitem__)]
        self._legal_cache[key] = out
        self._n_legal[key] = len(out)
        if len(self._legal_cache) > _LEGAL_CACHE:
            self._legal_cache.popitem(last=False)
        return out

    def _max_q(self, point: Point, key: str) -> float:
        n = self._n_legal.get(key)
        if n is None:
            n = len(self._legal(point))
        if n == 0:
            return 0.0
        row = self._q.get(key, {})
        m = max(row.values()) if row else 0.0
        return max(m, 0.0) if len(row) < n else m

    # ------------------------------------------------------------------ proposals
    def _fresh(self, rng: Any, seen: set[str]) -> tuple[Point, str]:
        point = self.space.sample(1, rng)[0]
        key = self.space.point_key(point)
        for _ in range(self.max_redraws):
            if key not in seen:
                break
            point = self.space.sample(1, rng)[0]
            key = self.space.point_key(point)
        return self.space.normalize(point), key

    def _plan(self, number: int, w: int, seen: set[str]) -> tuple[_Plan, Point]:
        """The proposal for trial ``number`` by walker ``w``: a pure function of the
        generator of ``number``, the agent state and ``seen``."""
        rng = proposal_rng(self.seed, number)
        walker = self._walker(w)
        origin: _Walker | None = walker
        if walker.point is None or walker.steps >= self.episode_length:
            origin = None
            if self._best is not None and rng.random() < self.restart_best:
                b = self._best
                origin = _Walker(b.point, b.key, b.value, 0)
        if origin is not None and origin.point is not None:
            moves = [m for m in self._legal(origin.point) if m[2] not in seen]
            if moves:
                if rng.random() < self.epsilon_at(number):
                    k = int(rng.integers(len(moves)))
                else:
                    row = self._q.get(origin.key, {})  # type: ignore[arg-type]
                    qs = [row.get(a, 0.0) for a, _, _ in moves]
                    top = max(qs)
                    ties = [i for i, q in enumerate(qs) if q == top]
                    k = ties[int(rng.integers(len(ties)))]
                a, point, key = moves[k]
                plan = _Plan(w, key, origin.key, a, origin.point, origin.value, origin.steps)
                return plan, dict(point)
        point, key = self._fresh(rng, seen)
        return _Plan(w, key), point

    def _idle_walker(self, busy: Iterable[int]) -> int:
        busy = set(busy)
        w = 0
        while w in busy:
            w += 1
        return w

    def _propose(self, n: int, first_number: int) -> list[Point]:
        seen = set(self._seen)
        out: list[Point] = []
        for i in range(n):
            number = first_number + i
            w = self._idle_walker(self._inflight.values())
            plan, point = self._plan(number, w, seen)
            self._plans[number] = plan
            self._derived.pop(number, None)
            self._inflight[number] = w
            self._key_of[number] = plan.key
            self._seen.add(plan.key)
            seen.add(plan.key)
            out.append(point)
        return out

    # ------------------------------------------------------------------ results
    def tell(self, trials: Iterable[Trial]) -> None:
        told = list(trials)
        super().tell(told)
        rebuild = False
        todo: set[int] = set()
        for t in told:
            key = self._key(t.params)
            self._key_of[t.number] = key
            self._seen.add(key)
            t = self._trials[t.number]
            done = self._processed.get(t.number)
            if done is not None:
                if done != self._snapshot(t):
                    rebuild = True
            elif t.status.finished:
                todo.add(t.number)
        if rebuild or (todo and min(todo) < self._max_processed):
            self._reset_agent()
            todo = {n for n, t in self._trials.items() if t.status.finished}
        self._process(sorted(todo))

    def _key(self, params: Point) -> str:
        try:
            return self.space.point_key(params)
        except Exception:  # a point outside the space: still a distinct key
            return json.dumps(dict(params), sort_keys=True, default=str)

    def _outcome(self, t: Trial) -> tuple[bool, float]:
        """(feasible, sign-adjusted objective value)."""
        if not t.feasible:
            return False, math.nan
        y = t.metrics.get(self._objective.name)
        try:
            v = self._objective.sign * float(y)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False, math.nan
        return (True, v) if math.isfinite(v) else (False, math.nan)

    def _snapshot(self, t: Trial) -> tuple[Any, ...]:
        feasible, v = self._outcome(t)
        return (t.status, self._key_of.get(t.number), feasible, v if feasible else None)

    def _reward(self, v_from: float, v_new: float) -> float:
        return math.tanh((v_from - v_new) / max(abs(v_from), _V_FLOOR))

    def _process(self, numbers: list[int]) -> None:
        """Process finished trials ``numbers`` (ascending, above every processed one)."""
        seen: set[str] | None = None
        upto = 0
        for j in numbers:
            t = self._trials[j]
            key = self._key_of[j]
            plan = self._plans.get(j)
            if plan is None or plan.key != key:
                plan = self._derived.get(j)
            if plan is None:
                # re-run the proposal logic for j from the state after all earlier numbers
                if seen is None:
                    seen = {k for m, k in self._key_of.items() if m < j}
                else:
                    for m in range(upto, j):
                        if m in self._key_of:
                            seen.add(self._key_of[m])
                upto = j
                busy = [p.walker for m, p in self._plans.items()
                        if m < j and m not in self._processed]
                plan, _ = self._plan(j, self._idle_walker(busy), seen)
                if len(self._processed) == j:  # every earlier number processed: canonical
                    self._derived[j] = plan
            self._apply(t, plan if plan.key == key else None)
            self._processed[j] = self._snapshot(t)
            self._max_processed = max(self._max_processed, j)
            self._inflight.pop(j, None)

    def _apply(self, t: Trial, plan: _Plan | None) -> None:
        feasible, v = self._outcome(t)
        point = key = None
        if feasible:
            point = self.space.normalize(t.params)
            key = self._key_of[t.number]
            if self._best is None or v < self._best.value:
                self._best = _Best(point, key, v)
        if plan is None:  # not reproducible from our plans: only the best point learns
            return
        w = plan.walker
        if plan.state is None:
            self._set_walker(w, _Walker(point, key, v, 0) if feasible else _Walker())
            return
        assert plan.action is not None
        if feasible:
            r = self._reward(plan.origin_value, v)
            target = r + self.gamma * self._max_q(point, key)  # type: ignore[arg-type]
        else:
            r = target = -1.0
        row = self._q.setdefault(plan.state, {})
        q = row.get(plan.action, 0.0)
        row[plan.action] = q + self.alpha * (target - q)
        if feasible:
            self._set_walker(w, _Walker(point, key, v, plan.step + 1))
        else:
            self._set_walker(
                w, _Walker(plan.origin, plan.state, plan.origin_value, plan.step + 1)
            )
