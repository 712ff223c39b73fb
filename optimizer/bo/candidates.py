"""Initial designs and acquisition maximization over *feasible* candidates.

Known constraints are never violated because candidates only ever come from the space's
own feasible generators: ``space.sample`` (rejection or a structured proposal) and
``space.neighbors`` (one-move local changes that pass every known constraint). The
acquisition is maximized over a large random pool plus the neighbourhoods of the best
observed points, followed by greedy hill climbing with ``neighbors`` from the best few
candidates (BoTorch's mixed optimizers relax and round; on spaces that are mostly
infeasible, sampling feasible points directly is both simpler and safer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from design_space.errors import UnsatisfiableSpaceError


def initial_design(space: Any, n: int, seed: int) -> list[dict]:
    """``n`` distinct feasible points: a scrambled Sobol sequence in ``[0,1]^d`` decoded
    into the space (feasible, unique ones kept in order), topped up by random samples.
    Deterministic in ``seed``; the i-th point does not depend on ``n``."""
    from scipy.stats import qmc

    out: list[dict] = []
    keys: set[str] = set()
    d = max(int(space.dim), 1)
    sob = qmc.Sobol(d=d, scramble=True, seed=seed)
    m = 1
    while (1 << m) < max(4 * n, 16):
        m += 1
    X = sob.random_base2(m)[:, : space.dim]
    pts = space.decode(X) if space.dim else [space.sample(1, seed)[0] for _ in range(len(X))]
    ok = space.feasible_mask(pts)
    for p, good in zip(pts, ok):
        k = space.point_key(p)
        if good and k not in keys:
            keys.add(k)
            out.append(p)
        if len(out) == n:
            return out
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(99,)))
    tries = 0
    while len(out) < n and tries < 50:
        tries += 1
        for p in space.sample(max(n - len(out), 1) * 4, rng):
            k = space.point_key(p)
            if k not in keys:
                keys.add(k)
                out.append(p)
            if len(out) == n:
                break
    return out


def candidate_pool(space: Any, rng: np.random.Generator, size: int,
                   incumbents: Sequence[dict] = ()) -> list[dict]:
    """Random feasible points plus every neighbour of the incumbents."""
    try:
        pool = list(space.sample(size, rng))
    except UnsatisfiableSpaceError:
        pool = []
    for p in incumbents:
        pool.extend(space.neighbors(p))
    return pool


def maximize(score: Callable[[np.ndarray], np.ndarray], space: Any, rng: np.random.Generator,
             pool: Sequence[dict], exclude: set[str], *, n_local: int = 5,
             local_steps: int = 5) -> tuple[dict | None, float]:
    """The best unseen candidate by ``score`` (a function of encoded rows), refined by
    hill climbing over ``space.neighbors``."""
    seen: dict[str, dict] = {}
    for p in pool:
        k = space.point_key(p)
        if k not in exclude and k not in seen:
            seen[k] = p
    if not seen:
        return None, -np.inf
    cands = list(seen.values())
    s = score(space.encode(cands, check=False))
    order = np.argsort(-s, kind="stable")
    best_p, best_s = cands[order[0]], float(s[order[0]])
    for i in order[:n_local]:
        cur, cur_s = cands[i], float(s[i])
        for _ in range(local_steps):
            nb = [q for q in space.neighbors(cur) if space.point_key(q) not in exclude]
            if not nb:
                break
            ns = score(space.encode(nb, check=False))
            j = int(np.argmax(ns))
            if ns[j] <= cur_s:
                break
            cur, cur_s = nb[j], float(ns[j])
        if cur_s > best_s:
            best_p, best_s = cur, cur_s
    return best_p, best_s
