"""Constrained BO and MOBO: constraints, feasibility learning, determinism, resume."""

from __future__ import annotations

import numpy as np
import pytest

from design_space import (
    Categorical,
    Constraint,
    DesignSpace,
    Integer,
    Ordinal,
    Permutation,
    PowerOfTwo,
)
from optimizer import RandomSearch, Trial, TrialStatus, make_optimizer, parse_objectives
from optimizer.constrained_bo import ConstrainedBO
from optimizer.mobo import MOBO


def run(opt, f, n, start=0):
    """Serial ask/tell loop; f(point) -> (status, metrics, constraints)."""
    out = []
    for i in range(start, start + n):
        p = opt.ask(1)[0]
        status, metrics, cons = f(p)
        t = Trial(i, p, status, metrics, cons)
        opt.tell([t])
        out.append(t)
    return out


def space_constrained():
    return DesignSpace(
        PowerOfTwo("rows", 2, 64), PowerOfTwo("cols", 2, 64), Categorical("arch", ["a", "b"]),
        Integer("rf", 1, 8, active_if={"arch": "b"}), Permutation("order", ["K", "C", "P"]),
        constraints=[Constraint("pe", "rows * cols <= 256"), Constraint("rf_small", "arch != 'b' or rf * rows <= 64")],
    )


def f_constrained(p):
    y = (np.log2(p["rows"]) - 3) ** 2 + (np.log2(p["cols"]) - 4) ** 2 + (p.get("rf", 4) - 4) ** 2 * 0.1
    y += 0.5 * (p["order"] != ("C", "K", "P")) + 1.0
    return TrialStatus.COMPLETE, {"y": float(y)}, {}


def test_proposals_never_violate_known_constraints():
    space = space_constrained()
    opt = ConstrainedBO(space, parse_objectives({"y": "min"}), seed=3, n_init=5, pool_size=300)
    trials = run(opt, f_constrained, 20)
    for t in trials:
        assert space.validate(t.params) == [], t.params
    # batches too
    pts = opt.ask(4)
    assert len(pts) == 4 and all(space.validate(p) == [] for p in pts)
    assert len({space.point_key(p) for p in pts}) == 4


def test_same_seed_same_sequence_and_serial_resume():
    space = space_constrained()
    objs = parse_objectives({"y": "min"})
    a = run(ConstrainedBO(space, objs, seed=1, n_init=4, pool_size=300), f_constrained, 12)
    b = run(ConstrainedBO(space, objs, seed=1, n_init=4, pool_size=300), f_constrained, 12)
    assert [t.params for t in a] == [t.params for t in b]
    resumed = ConstrainedBO(space, objs, seed=1, n_init=4, pool_size=300)
    resumed.tell(a[:8])
    rest = run(resumed, f_constrained, 4, start=8)
    assert [t.params for t in rest] == [t.params for t in a[8:]]


def _disk_problem():
    space = DesignSpace(Integer("x", 0, 30), Integer("y", 0, 30))

    def f(p):
        if (p["x"] - 12) ** 2 + (p["y"] - 14) ** 2 < 110:   # ~35 % of the space is infeasible
            return TrialStatus.INFEASIBLE, {}, {}
        return TrialStatus.COMPLETE, {"f": float((p["x"] - 14) ** 2 + (p["y"] - 17) ** 2 + 1)}, {}

    return space, f


def test_feasibility_model_halves_infeasible_proposals():
    space, f = _disk_problem()
    pts = space.sample(20000, seed=0)
    random_share = np.mean([f(p)[0] is TrialStatus.INFEASIBLE for p in pts])
    assert 0.25 < random_share < 0.45
    n_init, budget, shares = 8, 30, []
    for seed in range(3):
        opt = ConstrainedBO(space, parse_objectives({"f": "min"}), seed=seed, n_init=n_init, pool_size=500)
        trials = run(opt, f, budget)
        after = trials[n_init:]
        shares.append(np.mean([t.status is TrialStatus.INFEASIBLE for t in after]))
    assert np.mean(shares) <= random_share / 2, (shares, random_share)


def test_outcome_constraints_are_respected():
    """f decreases with x, but the evaluator's constraint g = x - 25 <= 0 caps it: the
    constrained optimum is x = 25, y = 20 (f = 50). Random search violates g on 37 % of
    the points."""
    space = DesignSpace(Integer("x", 0, 40), Integer("y", 0, 40))

    def f(p):
        val = 100 - 2 * p["x"] + (p["y"] - 20) ** 2 / 10
        return TrialStatus.COMPLETE, {"f": float(val)}, {"g": float(p["x"] - 25)}

    opt = ConstrainedBO(space, parse_objectives({"f": "min"}), seed=0, n_init=6, pool_size=300)
    trials = run(opt, f, 24)
    feas = [t for t in trials if t.feasible]
    assert min(t.metrics["f"] for t in feas) <= 51.0
    violating = np.mean([t.constraints["g"] > 0 for t in trials[6:]])
    assert violating < 0.37 / 1.5, violating


def test_bo_beats_random_on_a_smooth_problem():
    space = DesignSpace(Ordinal("a", list(range(40))), Ordinal("b", list(range(40))))
    objs = parse_objectives({"f": "min"})

    def f(p):
        return TrialStatus.COMPLETE, {"f": float((p["a"] - 29) ** 2 + 2 * (p["b"] - 11) ** 2 + 1)}, {}

    bo, rnd = [], []
    for seed in range(3):
        bo.append(min(t.metrics["f"] for t in run(ConstrainedBO(space, objs, seed=seed, n_init=6, pool_size=400), f, 25)))
        rnd.append(min(t.metrics["f"] for t in run(RandomSearch(space, objs, seed=seed), f, 25)))
    assert np.median(bo) < np.median(rnd)
    assert np.median(bo) <= 3


def test_mobo_improves_hypervolume_and_reports_front():
    space = DesignSpace(Integer("x", 0, 30), Integer("y", 0, 30))
    objs = parse_objectives({"f1": "min", "f2": "min"})

    def f(p):
        x, y = p["x"] / 30, p["y"] / 30
        return TrialStatus.COMPLETE, {"f1": x + 0.1 * y + 0.05, "f2": (1 - x) ** 2 + 0.1 * y + 0.05}, {}

    opt = MOBO(space, objs, seed=0, n_init=6, pool_size=300)
    trials = run(opt, f, 20)
    assert opt.hypervolume() > 0 and len(opt.front()) >= 3
    # after the initial design the proposals concentrate on y ~ 0 (the front)
    assert np.mean([t.params["y"] for t in trials[6:]]) < np.mean([t.params["y"] for t in trials[:6]])
    with pytest.raises(ValueError, match="MOBO needs 2-4 objectives"):
        MOBO(space, parse_objectives({"f1": "min"}))


def test_registry_and_bad_options():
    space = DesignSpace(Integer("x", 0, 3))
    opt = make_optimizer("constrained-bo", space, parse_objectives({"f": "min"}), 0, {"n_init": 2})
    assert isinstance(opt, ConstrainedBO)
    with pytest.raises(ValueError, match="n_init must be an integer >= 1"):
        make_optimizer("constrained-bo", space, parse_objectives({"f": "min"}), 0, {"n_init": 0})


def test_learned_noise_separates_noisy_from_clean_measurements():
    """The GP of constrained-bo learns its noise level: on a smooth objective observed
    exactly it learns almost none, and on the same objective with 20 % multiplicative
    noise it learns far more (standardized units)."""
    from design_space import DesignSpace, Real
    from optimizer import Trial, TrialStatus
    from optimizer.bo.models import learned_noise

    space = DesignSpace(Real("x", 0.0, 1.0))
    rng = np.random.default_rng(0)
    xs = rng.uniform(0, 1, 40)
    clean = [Trial(i, {"x": float(x)}, TrialStatus.COMPLETE, {"t": float(np.exp(2 * x))}) for i, x in enumerate(xs)]
    noisy = [Trial(i, {"x": float(x)}, TrialStatus.COMPLETE,
                   {"t": float(np.exp(2 * x) * np.exp(rng.normal(0, 0.2)))}) for i, x in enumerate(xs)]
    n_clean = learned_noise(space, clean, "t")["noise_var_std"]
    n_noisy = learned_noise(space, noisy, "t")["noise_var_std"]
    assert n_clean < 0.01 < n_noisy
    assert n_noisy > 10 * n_clean
    assert np.isnan(learned_noise(space, clean[:2], "t")["noise_var_std"])


def test_qlognehvi_never_compiles_code(monkeypatch):
    """BoTorch 0.18 JIT-compiles a C++ kernel the first time a qLogNEHVI is built; a killed
    build leaves a file lock every later process waits on for ever (it hung CI). Building
    the acquisition must not try to compile."""
    import torch
    import torch.utils.cpp_extension as cpp
    from botorch.acquisition.multi_objective import logei
    from botorch.models import SingleTaskGP

    from optimizer.bo.acquisition import log_nehvi

    calls = []
    monkeypatch.setattr(cpp, "load", lambda *a, **k: calls.append(a) or None)
    monkeypatch.setattr(logei, "_load_attempted", False)
    monkeypatch.setattr(logei, "_C", None)
    X = torch.rand(6, 2, dtype=torch.float64)
    models = [SingleTaskGP(X, X[:, i:i + 1]) for i in range(2)]
    log_nehvi(models, [], [0.0, 0.0], X, None, mc_samples=8, seed=0)
    assert calls == []


def test_without_the_feasibility_model_bo_keeps_proposing_failures():
    """The ablation switch: ``feasibility_model=False`` drops the classifier (P(feasible)
    is 1), so on the disk problem without imputation BO proposes infeasible points far
    more often than the default does."""
    space, f = _disk_problem()
    n_init, budget = 8, 30
    shares = {}
    for name, opts in (("default", {}), ("ablated", {"feasibility_model": False, "impute_infeasible": False})):
        per_seed = []
        for seed in range(3):
            opt = ConstrainedBO(space, parse_objectives({"f": "min"}), seed=seed, n_init=n_init,
                                pool_size=500, **opts)
            trials = run(opt, f, budget)
            per_seed.append(np.mean([t.status is TrialStatus.INFEASIBLE for t in trials[n_init:]]))
        shares[name] = float(np.mean(per_seed))
    assert shares["ablated"] > 2 * shares["default"], shares
    with pytest.raises(ValueError, match="feasibility_model must be True or False, got 'no'"):
        ConstrainedBO(space, parse_objectives({"f": "min"}), feasibility_model="no")
