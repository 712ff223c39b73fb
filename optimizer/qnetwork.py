"""Q-learning whose Q-function generalizes across states: FlexTensor's Q-network search.

FlexTensor (Zheng et al., ASPLOS 2020; the search HASCO, Xiao et al., ISCA 2021, runs for
its software) explores a schedule space by walking: from the best schedules found so far
it takes one move ("direction") and evaluates where it lands. Which move is chosen by a
Q-function -- a small neural network over the *features* of the schedule (its split
factors, loop order, ...), so what it learns from the rewards of some schedules carries
over to schedules it has never seen. (The tabular :class:`optimizer.qlearning.QLearning`
keys its table on exact points, and in a space of millions of points a state is almost
never seen twice.) This module is that search for any :class:`~design_space.DesignSpace`;
the design follows FlexTensor's ``Scheduler._q_schedule`` and ``model.Walker`` (public at
github.com/pku-liang/FlexTensor, ``flextensor/scheduler.py`` and ``flextensor/model.py``):

States and features
    A state is a point; its features ``phi(point)`` come from the ``features`` option
    (``points -> (n, F)`` array, e.g. :meth:`mappers.schedule.ScheduleProblem.features`:
    tile sizes, loop order, utilization, buffer occupancy), by default the space's own
    encoding (:meth:`~design_space.DesignSpace.encode`, every value scaled to ``[0, 1]``).
    Points with equal ``state_key`` (default: :meth:`~design_space.DesignSpace.point_key`)
    are the same state: a move to a key already proposed or evaluated is never proposed.

Actions
    The fixed move list of the space (:func:`optimizer.qlearning.space_actions`: one
    step of an ordered parameter up or down, a categorical's choice ``k``, an adjacent
    swap in a permutation); the legal ones at a state are its feasible neighbours
    (:meth:`~design_space.DesignSpace.neighbors`). A space may provide moves of its own
    (``extra_actions``, their labels, appended to the list; ``extra_moves(point) ->
    [(label, neighbour)]``, the legal ones at a point): a schedule space gives FlexTensor's
    split moves, which carry a factor from one level of a loop's split to another
    (:meth:`mappers.schedule.ScheduleProblem.transfers`; FlexTensor's ``SplitSpace``
    directions in ``flextensor/space.py``), a change of two parameters at once that
    one-parameter moves only make through the schedule in between.

Q-network
    FlexTensor's ``Judger``: a multilayer perceptron of ``depth`` linear layers, ``width``
    units wide with ReLU between them (FlexTensor: width 64, depth 4), features in, one
    Q-value per action out (FlexTensor has one such network per sub-space -- per loop's
    split, the reorder, the intrinsic choice -- each with that sub-space's directions as
    outputs; here one network has every action as an output). Numpy, trained with Adam.

Walk (rounds)
    The evaluated feasible points form a pool (FlexTensor's ``memory`` heap). Points the
    caller evaluated itself (a random warm-up told before the first ``ask``, or any trial
    this optimizer did not propose) join it as they are; a point reached by a move joins it
    with FlexTensor's simulated-annealing acceptance, probability
    ``exp(-accept * (v - v_best) / |v_best|)``. Each *round* takes the ``parallel`` best
    points out of the pool (each is expanded once; HASCO runs FlexTensor with
    ``parallel=8``) and from each proposes ``moves`` moves, each chosen
    epsilon-greedily among the legal moves to unseen states: with probability
    ``eps_t = max(epsilon_min, epsilon * exp(-epsilon_decay * t))``, ``t`` the round
    number (FlexTensor's and HASCO's schedule: 0.8, 0.01, floor 0.1, per round), a
    uniformly random one, else the one of largest predicted Q (ties at random). When the
    pool is empty, or no move is left from its points, a round proposes fresh random
    samples instead (FlexTensor re-runs its warm-up). With ``keep_starts`` a start goes
    back into the pool while it has unseen moves left (FlexTensor's walk takes one move
    per sub-space from each start in a round; one network choosing ``moves`` moves needs
    several rounds for as many). With ``rewarm_every = k > 0``, every ``k``-th round also
    proposes ``parallel`` fresh random samples, which join the pool like the warm-up
    (FlexTensor's ``_q_schedule`` re-warms with ``parallel`` samples after each of its
    five trainings, every fifth of its trials).

Rewards and training
    A move from value ``v_from`` to a feasible ``v_new`` earns
    ``r = tanh((v_from - v_new) / |v_from|)`` (FlexTensor: ``tanh(max(v_from - v_new, 0))``
    in the metric's units, which saturates at any improvement of more than a few units and
    says nothing of moves that hurt; the relative, signed form is scale-free, as in
    :class:`~optimizer.qlearning.QLearning`); an infeasible result earns ``-1`` and ends
    the transition. The transitions (the last ``memory``; FlexTensor: 1,000) train the
    network before every round that follows new ones: ``epochs`` passes (FlexTensor: 20) in
    minibatches of ``batch_size`` (FlexTensor: 32), squared error of ``Q(s, a)`` against
    ``r + gamma * max_a' Q_target(s', a')`` (FlexTensor: ``gamma = 0.9``), ``Q_target`` a
    copy of the network frozen during the training and refreshed after it (FlexTensor's
    ``post_judger``). FlexTensor trains every fifth of its rounds with Adadelta; with the
    few hundred evaluations of a schedule search here, training every round with Adam is
    what lets the network learn anything before the budget is spent.

Determinism and reconstruction
    Every random choice (initial weights, minibatch order, epsilon draws, acceptance)
    comes from generators derived from the seed and trial numbers (and the count of
    trainings), so a serial run (ask 1, tell 1) is reproducible. The walk's state (the
    pool, the queued moves of the current round, the rounds planned, the transitions and
    the trained network) is a function of ``(seed, history)``: finished trials are
    learned in trial-number order, and one this instance did not ask (a resumed study's,
    told to a fresh instance) gets the plan that made it re-derived -- when every earlier
    trial is learned, the walk takes the step that ``ask`` would have taken for its number
    (the next queued move, or a new round planned, training first, when the queue is
    empty, or a fresh sample); if that step proposes the trial's state, the step is kept
    and the trial is learned as a move (annealing acceptance, a transition), otherwise the
    step is undone and the trial only joins the pool (a warm-up, another driver's point).
    So in serial use an instance rebuilt from the finished history continues with exactly
    the points the uninterrupted one proposes. With several trials in flight (``ask(n)``,
    asynchronous tells) a re-derived step may differ from the one taken when the points
    were asked, and reconstruction is deterministic but not identical to the original.
"""

from __future__ import annotations

import copy
import heapq
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optimizer._validation import check_int, check_real
from optimizer.base import Objective, Optimizer, Point, Trial, proposal_rng
from optimizer.qlearning import action_between, space_actions

__all__ = ["MLP", "QNetwork"]

_V_FLOOR = 1e-12


# ------------------------------------------------------------------------ the network
@dataclass
class MLP:
    """A multilayer perceptron ``sizes[0] -> ... -> sizes[-1]`` with ReLU between the
    linear layers, trained by Adam on the squared error of one output per row."""

    sizes: tuple[int, ...]
    seed: int = 0
    weights: list[np.ndarray] = field(default_factory=list)
    biases: list[np.ndarray] = field(default_factory=list)
    _m: list[np.ndarray] = field(default_factory=list, repr=False)
    _v: list[np.ndarray] = field(default_factory=list, repr=False)
    _steps: int = 0

    def __post_init__(self) -> None:
        if len(self.sizes) < 2 or any(int(s) < 1 for s in self.sizes):
            raise ValueError(f"MLP sizes must be at least two positive integers, got {self.sizes!r}")
        if not self.weights:
            rng = np.random.default_rng(self.seed)
            for a, b in zip(self.sizes[:-1], self.sizes[1:]):
                lim = math.sqrt(6.0 / a)  # He-uniform for ReLU layers
                self.weights.append(rng.uniform(-lim, lim, size=(a, b)))
                self.biases.append(np.zeros(b))
        params = self.weights + self.biases
        self._m = [np.zeros_like(p) for p in params]
        self._v = [np.zeros_like(p) for p in params]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Outputs ``(n, sizes[-1])`` and every layer's input (for :meth:`step`)."""
        h = np.asarray(x, dtype=float)
        acts = [h]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        return h, acts

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)[0]

    def step(self, x: np.ndarray, column: np.ndarray, target: np.ndarray, lr: float) -> float:
        """One Adam step on ``mean((out[i, column[i]] - target[i])^2)``; returns the loss."""
        out, acts = self.forward(x)
        n = len(out)
        rows = np.arange(n)
        err = out[rows, column] - target
        g = np.zeros_like(out)
        g[rows, column] = 2.0 * err / n
        gw: list[np.ndarray] = [np.empty(0)] * len(self.weights)
        gb: list[np.ndarray] = [np.empty(0)] * len(self.weights)
        for i in range(len(self.weights) - 1, -1, -1):
            gw[i] = acts[i].T @ g
            gb[i] = g.sum(axis=0)
            if i:
                g = (g @ self.weights[i].T) * (acts[i] > 0)
        self._steps += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k, (p, gp) in enumerate(zip(self.weights + self.biases, gw + gb)):
            self._m[k] = b1 * self._m[k] + (1 - b1) * gp
            self._v[k] = b2 * self._v[k] + (1 - b2) * gp * gp
            mh = self._m[k] / (1 - b1 ** self._steps)
            vh = self._v[k] / (1 - b2 ** self._steps)
            p -= lr * mh / (np.sqrt(vh) + eps)
        return float(np.mean(err * err))

    def copy(self) -> MLP:
        return MLP(self.sizes, self.seed, [w.copy() for w in self.weights], [b.copy() for b in self.biases])


# ------------------------------------------------------------------------ the search
@dataclass(frozen=True)
class _Plan:
    """A proposal: a move ``action`` (index into the action list) from ``origin``, or a
    fresh sample (``origin is None``)."""

    point: Point
    key: Any
    origin: Point | None = None
    origin_value: float = math.nan
    action: int = -1


class QNetwork(Optimizer):
    """FlexTensor-style Q-network walk over a ``DesignSpace`` (see the module docstring).

    Single-objective: it minimizes (or maximizes) the first of ``objectives``.

    Args:
        space: a ``DesignSpace``.
        objectives: at least one; only the first is used.
        seed: study-derived seed.
        features: ``points -> (n, F)`` state features (default: ``space.encode``).
        state_key: ``points -> keys``, equal for points that are the same state
            (default: ``space.point_key`` of each).
        parallel: points expanded per round (HASCO: 8).
        moves: moves proposed from each expanded point per round.
        width, depth: the Q-network's hidden width and number of linear layers
            (FlexTensor: 64, 4).
        epsilon, epsilon_min, epsilon_decay: the exploration schedule per round
            (FlexTensor / HASCO: 0.8, 0.1, 0.01).
        gamma: discount (FlexTensor: 0.9).
        learning_rate: Adam's step size.
        epochs, batch_size, memory: passes over the transitions per training, minibatch
            size, transitions kept (FlexTensor: 20, 32, 1000).
        accept: the pool's annealing acceptance rate (FlexTensor: 0.5).
        max_redraws: re-draws of a random sample whose state was seen.
        keep_starts: a start stays in the pool while it has unseen moves left.
        extra_actions, extra_moves: the space's own moves, their labels (hashable, unlike
            the space's one-parameter actions) and ``point -> [(label, neighbour)]``,
            the legal ones at a point (give both or neither).
        rewarm_every: every this many rounds, ``parallel`` fresh random samples (0: never).

    Raises:
        ValueError: no objective, a space without parameters to move, or an option out
            of range (the message names it).
    """

    name = "qnetwork"

    def __init__(
        self,
        space: Any,
        objectives: Sequence[Objective] | None = None,
        seed: int = 0,
        *,
        features: Callable[[Sequence[Point]], np.ndarray] | None = None,
        state_key: Callable[[Sequence[Point]], Sequence[Any]] | None = None,
        parallel: int = 8,
        moves: int = 1,
        width: int = 64,
        depth: int = 4,
        epsilon: float = 0.8,
        epsilon_min: float = 0.1,
        epsilon_decay: float = 0.01,
        gamma: float = 0.9,
        learning_rate: float = 1e-3,
        epochs: int = 20,
        batch_size: int = 32,
        memory: int = 1000,
        accept: float = 0.5,
        max_redraws: int = 100,
        keep_starts: bool = False,
        extra_actions: Sequence[Hashable] = (),
        extra_moves: Callable[[Point], Sequence[tuple[Hashable, Point]]] | None = None,
        rewarm_every: int = 0,
    ) -> None:
        super().__init__(space, objectives, seed)
        if not self.objectives:
            raise ValueError("objectives: qnetwork needs at least one objective")
        params = getattr(space, "params", None)
        if params is None or not hasattr(space, "neighbors"):
            raise ValueError(f"space: qnetwork needs a DesignSpace, got {type(space).__name__}")
        self.parallel = check_int("parallel", parallel, 1)
        self.moves = check_int("moves", moves, 1)
        self.width = check_int("width", width, 1)
        self.depth = check_int("depth", depth, 2)
        self.epsilon = check_real("epsilon", epsilon, 0.0, 1.0)
        self.epsilon_min = check_real("epsilon_min", epsilon_min, 0.0, 1.0)
        self.epsilon_decay = check_real("epsilon_decay", epsilon_decay, 0.0, math.inf)
        self.gamma = check_real("gamma", gamma, 0.0, 1.0)
        self.learning_rate = check_real("learning_rate", learning_rate, 0.0, 1.0, low_open=True)
        self.epochs = check_int("epochs", epochs, 0)
        self.batch_size = check_int("batch_size", batch_size, 1)
        self.memory = check_int("memory", memory, 1)
        self.accept = check_real("accept", accept, 0.0, math.inf)
        self.max_redraws = check_int("max_redraws", max_redraws, 0)
        self.keep_starts = bool(keep_starts)
        self.rewarm_every = check_int("rewarm_every", rewarm_every, 0)
        extra = tuple(extra_actions)
        if bool(extra) != (extra_moves is not None):
            raise ValueError("extra_actions, extra_moves: give both (the moves' labels and the function "
                             "that makes them) or neither")
        self._extra_moves = extra_moves
        self._objective = self.objectives[0]
        self._params = {p.name: p for p in params}
        self._names = [p.name for p in params]
        self._actions: tuple[Hashable, ...] = space_actions(params) + extra
        if len(set(self._actions)) != len(self._actions):
            raise ValueError("extra_actions: labels must be unique and differ from the space's own moves")
        if not self._actions:
            raise ValueError(f"space {getattr(space, 'name', '')!r}: qnetwork needs a parameter it can move")
        self._action_index = {a: i for i, a in enumerate(self._actions)}
        self._features = features if features is not None else space.encode
        self._state_key = state_key if state_key is not None else (
            lambda pts: [space.point_key(p) for p in pts])
        n_features = int(np.asarray(self._features([space.sample(1, seed=0)[0]])).shape[1])
        sizes = (n_features,) + (self.width,) * (self.depth - 1) + (len(self._actions),)
        self._net = MLP(sizes, seed=int(np.random.SeedSequence(entropy=self.seed, spawn_key=(7,)).generate_state(1)[0]))
        self._target = self._net.copy()
        self._pool: list[tuple[float, int, Point]] = []        # (value, number, point): a min-heap
        self._queue: deque[_Plan] = deque()
        self._plans: dict[int, _Plan] = {}
        self._seen: set[Any] = set()
        self._done: set[int] = set()
        self._prefix = 0                                        # trials 0.._prefix-1 are all learned
        self._transitions: deque[tuple[np.ndarray, int, np.ndarray | None, float]] = deque(maxlen=self.memory)
        self._fresh_transitions = 0
        self._trainings = 0
        self._rounds = 0
        self._best: tuple[float, Point] | None = None
        self._legal_cache: dict[int, list[tuple[int, Point, Any]]] = {}

    # ------------------------------------------------------------------ views
    @property
    def actions(self) -> tuple[Hashable, ...]:
        """The fixed action list (the network's outputs, in order)."""
        return self._actions

    @property
    def network(self) -> MLP:
        """The current Q-network."""
        return self._net

    @property
    def rounds(self) -> int:
        """Rounds planned so far (the ``t`` of the exploration schedule)."""
        return self._rounds

    @property
    def best(self) -> Point | None:
        return dict(self._best[1]) if self._best is not None else None

    def epsilon_at(self, t: int) -> float:
        """Exploration probability of round ``t``."""
        return max(self.epsilon_min, self.epsilon * math.exp(-self.epsilon_decay * t))

    def q_values(self, points: Sequence[Point]) -> np.ndarray:
        """The network's ``(n, actions)`` Q-values at ``points``."""
        return self._net.predict(np.asarray(self._features(list(points)), dtype=float))

    # ------------------------------------------------------------------ proposals
    def _propose(self, n: int, first_number: int) -> list[Point]:
        out: list[Point] = []
        for i in range(n):
            number = first_number + i
            plan = self._next_plan(number)
            if plan is None:
                break
            self._plans[number] = plan
            self._seen.add(plan.key)
            out.append(dict(plan.point))
        return out

    def _next_plan(self, number: int) -> _Plan | None:
        """The proposal for trial ``number``: the next queued move, after planning a round
        when the queue is empty, else a fresh sample (mutates the walk's state)."""
        if not self._queue:
            self._plan_round(number)
        return self._queue.popleft() if self._queue else self._fresh(number)

    def _derive(self, number: int, key: Any) -> _Plan | None:
        """The plan that made trial ``number`` if this walk, in its state after every
        earlier trial, proposes a point of state ``key`` for it (a trial asked by an
        earlier process of a resumed study); else ``None`` with the state untouched (a
        trial proposed by someone else)."""
        if self._queue:  # the next queued move, or nothing: no round is planned
            if self._queue[0].key != key:
                return None
            return self._queue.popleft()
        saved = (list(self._pool), self._rounds, copy.deepcopy(self._net), self._target,
                 self._fresh_transitions, self._trainings)
        plan = self._next_plan(number)
        if plan is not None and plan.key == key:
            return plan
        (self._pool, self._rounds, self._net, self._target, self._fresh_transitions,
         self._trainings) = saved
        self._queue.clear()
        return None

    def _fresh(self, number: int) -> _Plan | None:
        return self._sample(proposal_rng(self.seed, number), ())

    def _sample(self, rng: np.random.Generator, planned: Iterable[Any]) -> _Plan | None:
        """A random sample whose state is neither seen nor in ``planned``."""
        for _ in range(self.max_redraws + 1):
            p = self.space.sample(1, rng)[0]
            key = self._state_key([p])[0]
            if key not in self._seen and key not in planned:
                return _Plan(self.space.normalize(p), key)
        return None

    def _plan_round(self, number: int) -> None:
        """Queue the next round's moves (see the module docstring)."""
        if self._fresh_transitions:
            self._train()
        if not self._pool:
            return
        rng = proposal_rng(self.seed, number, stream=1)
        eps = self.epsilon_at(self._rounds)
        self._rounds += 1
        starts = [heapq.heappop(self._pool) for _ in range(min(self.parallel, len(self._pool)))]
        q = self.q_values([p for _, _, p in starts])
        planned: set[Any] = set()
        for row, (v, num, point) in enumerate(starts):
            cand = [(a, m, k) for a, m, k in self._legal(num, point) if k not in self._seen and k not in planned]
            if len(cand) > self.moves and self.keep_starts:
                heapq.heappush(self._pool, (v, num, point))
            for _ in range(self.moves):
                if not cand:
                    break
                if rng.random() < eps:
                    pick = int(rng.integers(len(cand)))
                else:
                    qs = q[row, [a for a, _, _ in cand]]
                    ties = np.flatnonzero(qs == qs.max())
                    pick = int(ties[int(rng.integers(len(ties)))])
                a, m, k = cand[pick]
                cand = [c for c in cand if c[2] != k]   # another move to the same state is spent too
                planned.add(k)
                self._queue.append(_Plan(m, k, point, v, a))
        if self.rewarm_every and self._rounds % self.rewarm_every == 0:
            # FlexTensor's re-warm-up: ``parallel`` fresh random samples join the pool
            fresh = proposal_rng(self.seed, number, stream=3)
            for _ in range(self.parallel):
                plan = self._sample(fresh, planned)
                if plan is None:
                    break
                planned.add(plan.key)
                self._queue.append(plan)

    def _legal(self, number: int, point: Point) -> list[tuple[int, Point, Any]]:
        """``[(action index, neighbour, its state key)]`` of the point of trial ``number``."""
        hit = self._legal_cache.get(number)
        if hit is not None:
            return hit
        out = []
        for nb in self.space.neighbors(point):
            nb = self.space.normalize(nb)
            a = action_between(self._names, self._params, point, nb)
            if a is not None and a in self._action_index:
                out.append((self._action_index[a], nb))
        if self._extra_moves is not None:
            for label, nb in self._extra_moves(point):
                if label in self._action_index:
                    out.append((self._action_index[label], self.space.normalize(nb)))
        keys = self._state_key([m for _, m in out]) if out else []
        res = [(a, m, k) for (a, m), k in zip(out, keys)]
        self._legal_cache[number] = res
        return res

    # ------------------------------------------------------------------ results
    def tell(self, trials: Iterable[Trial]) -> None:
        super().tell(trials)
        for number in sorted(n for n, t in self._trials.items() if t.status.finished and n not in self._done):
            canonical = number == self._prefix  # every earlier trial is learned
            self._done.add(number)
            while self._prefix in self._done:
                self._prefix += 1
            self._learn(number, self._trials[number], canonical)

    def _value(self, t: Trial) -> float:
        """Sign-adjusted objective (smaller is better), NaN when not usable."""
        if not t.feasible:
            return math.nan
        try:
            v = self._objective.sign * float(t.metrics.get(self._objective.name))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return math.nan
        return v if math.isfinite(v) else math.nan

    def _learn(self, number: int, t: Trial, canonical: bool = False) -> None:
        v = self._value(t)
        point = self.space.normalize(t.params)
        plan = self._plans.get(number)
        key = self._state_key([point])[0]
        if plan is None and canonical:  # not asked of this instance: re-derive its plan
            plan = self._derive(number, key)
            if plan is not None:
                self._plans[number] = plan
        self._seen.add(key)
        if plan is not None and plan.key != key:
            plan = None
        feasible = not math.isnan(v)
        if feasible:
            if self._best is None or v < self._best[0]:
                self._best = (v, point)
            moved = plan is not None and plan.origin is not None
            best = self._best[0]
            keep = True
            if moved:  # FlexTensor's annealing acceptance into the pool
                rng = proposal_rng(self.seed, number, stream=2)
                keep = rng.random() <= math.exp(-self.accept * (v - best) / max(abs(best), _V_FLOOR))
            if keep:
                heapq.heappush(self._pool, (v, number, point))
        if plan is None or plan.origin is None:
            return
        phi = np.asarray(self._features([plan.origin]), dtype=float)[0]
        if feasible:
            r = math.tanh((plan.origin_value - v) / max(abs(plan.origin_value), _V_FLOOR))
            nxt = np.asarray(self._features([point]), dtype=float)[0]
        else:
            r, nxt = -1.0, None
        self._transitions.append((phi, plan.action, nxt, r))
        self._fresh_transitions += 1

    def _train(self) -> None:
        """``epochs`` passes of minibatch Adam over the transitions (see the docstring)."""
        self._fresh_transitions = 0
        data = list(self._transitions)
        if not data or not self.epochs:
            return
        x = np.stack([d[0] for d in data])
        a = np.array([d[1] for d in data], dtype=np.int64)
        r = np.array([d[3] for d in data])
        live = np.array([d[2] is not None for d in data])
        y = r.copy()
        if live.any():
            nxt = np.stack([d[2] for d in data if d[2] is not None])
            y[live] += self.gamma * self._target.predict(nxt).max(axis=1)
        rng = np.random.default_rng(np.random.SeedSequence(entropy=self.seed, spawn_key=(8, self._trainings)))
        self._trainings += 1
        for _ in range(self.epochs):
            order = rng.permutation(len(data))
            for s in range(0, len(order), self.batch_size):
                idx = order[s:s + self.batch_size]
                self._net.step(x[idx], a[idx], y[idx], self.learning_rate)
        self._target = self._net.copy()
