"""Optuna samplers behind the ask/tell protocol (optimizer/optuna_adapter.py)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from design_space import (  # noqa: E402
    Categorical,
    Constraint,
    DesignSpace,
    Fixed,
    Integer,
    JointSpace,
    Ordinal,
    Permutation,
    PowerOfTwo,
    Real,
)
from optimizer import Objective, RandomSearch, Trial, TrialStatus, make_optimizer  # noqa: E402
from optimizer.optuna_adapter import OptunaOptimizer  # noqa: E402
from tests.design_space.helpers import hw, sw_for  # noqa: E402

TS = optuna.trial.TrialState


# ----------------------------------------------------------------------------- spaces
def tight_space() -> DesignSpace:
    """~8 % of raw draws are feasible; maximizing the array pushes onto the boundary."""
    return DesignSpace(
        PowerOfTwo("rows", 1, 1024),
        PowerOfTwo("cols", 1, 1024),
        PowerOfTwo("buf", 1, 1024),
        Categorical("df", ["OS", "WS"]),
        Integer("unroll", 1, 16, active_if={"df": "WS"}),
        constraints=[
            Constraint("pe", "rows * cols <= 256"),
            Constraint("mem", "rows * cols * buf <= 4096"),
            Constraint("unroll_fits", "df != 'WS' or unroll <= rows"),
        ],
    )


def tight_value(p: dict) -> float:
    return float(p["rows"] * p["cols"] * p["buf"] + p.get("unroll", 0))


def all_kinds_space() -> DesignSpace:
    return DesignSpace(
        Integer("i", 0, 9),
        Integer("ilog", 1, 1000, log=True),
        Real("r", -1.0, 1.0),
        Real("rlog", 1e-3, 10.0, log=True),
        PowerOfTwo("p2", 2, 64),
        Ordinal("o", [16, 32, 64, 128]),
        Categorical("c", ["x", "y", "z"]),
        Categorical("flag", [1, True, "one"]),  # 1 == True: mapped by index
        Permutation("perm", ["K", "C", "P", "Q"]),
        Fixed("w", 8),
        Integer("only_y", 1, 4, active_if={"c": "y"}),
        Ordinal("only_y_small", ["a", "b"], active_if={"only_y": [1, 2]}),  # a chain
        constraints=[Constraint("c1", "p2 * o <= 4096")],
    )


def all_kinds_value(p: dict) -> float:
    return (p["i"] - 3) ** 2 + abs(p["r"]) + p["perm"].index("K") + p.get("only_y", 0)


def complete(opt, p: dict, metrics: dict, constraints: dict | None = None) -> None:
    opt.tell([Trial(opt.next_number - 1, p, TrialStatus.COMPLETE, metrics, constraints or {})])


def run_serial(opt, fn, n: int) -> list[dict]:
    out = []
    for _ in range(n):
        p = opt.ask(1)[0]
        out.append(p)
        complete(opt, p, {"y": fn(p)})
    return out


# ----------------------------------------------------------------------------- mapping
@pytest.mark.parametrize("make_space", [all_kinds_space, lambda: JointSpace(hw(), sw_for)])
def test_points_round_trip_through_optuna_params(make_space):
    space = make_space()
    opt = OptunaOptimizer(space, [Objective("y")], seed=0)
    for p in space.sample(40, seed=1):
        params, dists = opt.to_optuna_params(p)
        # Optuna accepts them (create_trial validates every value against its distribution)
        optuna.trial.create_trial(params=params, distributions=dists, values=[0.0])
        assert opt.from_optuna_params(params) == space.normalize(p)
    params, dists = opt.to_optuna_params(space.sample(1, seed=2)[0])
    if isinstance(space, DesignSpace):
        assert isinstance(dists["o"], optuna.distributions.IntDistribution)  # index, ordered
        assert (dists["p2"].low, dists["p2"].high) == (1, 6)  # exponent
        assert {f"perm[{i}]" for i in range(4)} <= set(dists)  # random keys
        assert "w" not in dists
        assert dists["flag"].choices == (0, 1, 2)


def test_random_keys_decode_by_argsort():
    space = DesignSpace(Permutation("perm", ["K", "C", "P"]))
    opt = OptunaOptimizer(space, [Objective("y")], seed=0)
    keys = {"perm[0]": 0.9, "perm[1]": 0.1, "perm[2]": 0.5}
    assert opt.from_optuna_params(keys) == {"perm": ("C", "P", "K")}


@pytest.mark.parametrize("sampler", ["tpe", "nsga2"])
def test_every_kind_gives_valid_points(sampler):
    space = all_kinds_space()
    opt = OptunaOptimizer(space, [Objective("y")], seed=3, sampler=sampler,
                          sampler_options={"population_size": 6} if sampler == "nsga2" else None)
    pts = run_serial(opt, all_kinds_value, 24)  # past TPE's 10 startup trials
    for p in pts:
        assert space.validate(p) == []
        assert p["w"] == 8 and isinstance(p["perm"], tuple)
        assert ("only_y" in p) == (p["c"] == "y")
    assert len({space.point_key(p) for p in pts}) == len(pts)  # deduplicated
    assert len({p["perm"] for p in pts}) > 3


@pytest.mark.parametrize("sampler", ["tpe", "nsga2"])
def test_joint_space_hardware_first_then_software(sampler):
    j = JointSpace(hw(), sw_for)
    opt = OptunaOptimizer(j, [Objective("y")], seed=1, sampler=sampler,
                          sampler_options={"population_size": 6} if sampler == "nsga2" else None)
    for _ in range(12):
        pts = opt.ask(2)
        assert len(pts) == 2
        for p in pts:
            assert j.validate(p) == []
        opt.tell([
            Trial(opt.next_number - 2 + k, p, TrialStatus.COMPLETE,
                  {"y": -p["tile_k"] * p["unroll"] + p["rows"]})
            for k, p in enumerate(pts)
        ])


def _sw_with_varying_choices(h: dict) -> DesignSpace:
    # (a JointSpace needs the same number of choices for every hardware)
    modes = ["a", "b"] if h["rows"] <= 4 else ["a", "c"]
    return DesignSpace(Categorical("mode", modes), Integer("t", 1, h["rows"]))


def test_joint_space_with_hardware_dependent_categorical_choices():
    j = JointSpace(hw(), _sw_with_varying_choices)
    opt = OptunaOptimizer(j, [Objective("y")], seed=0)
    pts = run_serial(opt, lambda p: float(p["t"] + (p["mode"] == "c")), 20)
    assert all(j.validate(p) == [] for p in pts)
    assert {p["mode"] for p in pts if p["rows"] > 4} <= {"a", "c"}
    assert {p["mode"] for p in pts if p["rows"] <= 4} <= {"a", "b"}


# ----------------------------------------------------------------------------- constraints
@pytest.mark.parametrize("sampler", ["tpe", "nsga2", "random"])
def test_proposals_never_violate_known_constraints(sampler):
    space = tight_space()
    opt = OptunaOptimizer(space, [Objective("y", "max")], seed=5, sampler=sampler,
                          sampler_options={"population_size": 8} if sampler == "nsga2" else None)
    pts = []
    for _ in range(10):
        batch = opt.ask(3)
        pts += batch
        opt.tell([Trial(opt.next_number - 3 + k, p, TrialStatus.COMPLETE, {"y": tight_value(p)})
                  for k, p in enumerate(batch)])
    assert len(pts) == 30
    for p in pts:
        assert space.validate(p) == [], p
    assert opt.resample_count > 0  # the sampler did suggest infeasible points: all caught


def test_fallback_after_max_resample_is_feasible():
    space = tight_space()
    opt = OptunaOptimizer(space, [Objective("y", "max")], seed=0, max_resample=0)
    pts = run_serial(opt, tight_value, 15)
    assert all(space.validate(p) == [] for p in pts)
    assert opt.fallback_count > 0


def test_history_maps_to_optuna_states_values_and_constraints():
    space = DesignSpace(Integer("a", 0, 9), Real("x", 0.0, 1.0))
    objs = [Objective("lat", "min"), Objective("acc", "max")]
    opt = OptunaOptimizer(space, objs, seed=0, sampler="nsga2",
                          sampler_options={"population_size": 2})
    p = {"a": 1, "x": 0.5}
    opt.tell([
        Trial(0, p, TrialStatus.COMPLETE, {"lat": 2.0, "acc": 0.9}, {"power": 0.3}),
        Trial(1, p, TrialStatus.COMPLETE, {"lat": 1.0, "acc": 0.8}),
        Trial(2, p, TrialStatus.INFEASIBLE),
        Trial(3, p, TrialStatus.FAILED, reason="crash"),
        Trial(4, p, TrialStatus.FAILED, constraints={"power": 2.0}),
        Trial(5, p, TrialStatus.COMPLETE, {"lat": float("nan"), "acc": 0.1}),
        Trial(6, p, TrialStatus.COMPLETE, {"lat": 3.0, "acc": 0.5}),
        Trial(7, p, TrialStatus.RUNNING),
        Trial(8, {"a": 99, "x": 0.5}, TrialStatus.COMPLETE, {"lat": 1.0, "acc": 1.0}),  # not in space
    ])
    ft = opt._history([])
    assert [t.state for t in ft] == [TS.COMPLETE, TS.COMPLETE, TS.PRUNED, TS.FAIL, TS.PRUNED,
                                     TS.FAIL, TS.COMPLETE, TS.RUNNING]
    assert ft[0].values == [2.0, 0.9]  # objective order
    assert ft[0].constraints == {"outcome:power": 0.3}
    assert ft[1].constraints == {"outcome:power": 0.0}  # same names on every complete trial
    assert ft[2].constraints == {"infeasible": 1.0}
    assert ft[4].constraints == {"outcome:power": 2.0}
    assert ft[3].constraints == {} and ft[7].constraints == {}
    # NSGA-II generations, by Optuna's rule: 2 COMPLETE trials per generation
    gens = [t.system_attrs["NSGAIISampler:generation"] for t in ft]
    assert gens == [0, 0, 1, 1, 1, 1, 1, 1]
    assert space.validate(opt.ask(1)[0]) == []


def test_known_constraint_rejections_are_told_as_pruned_with_violations():
    space = tight_space()
    opt = OptunaOptimizer(space, [Objective("y", "max")], seed=5)
    run_serial(opt, tight_value, 12)
    # replay one proposal's loop on a study like the adapter's, to look at what it told
    study = optuna.create_study(directions=["maximize"],
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.add_trials(opt._history([]))
    for _ in range(50):
        t = study.ask()
        p = opt.suggest(t)
        reasons = opt._violations(p)
        if reasons:
            assert set(reasons) <= {"known:pe", "known:mem", "known:unroll_fits"}
            assert all(v == 1.0 for v in reasons.values())
            break
    else:  # pragma: no cover
        pytest.fail("no infeasible suggestion in 50 random draws of a ~8 % feasible space")


# ----------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("sampler", ["tpe", "nsga2", "random"])
def test_same_seed_same_sequence(sampler):
    opts = {"population_size": 6} if sampler == "nsga2" else None

    def seq(seed):
        opt = OptunaOptimizer(all_kinds_space(), [Objective("y")], seed=seed, sampler=sampler,
                              sampler_options=opts)
        return run_serial(opt, all_kinds_value, 16)

    a = seq(11)
    assert a == seq(11)
    assert a != seq(12)


def _serial_with_outcomes(opt, n: int, log: list[Trial]) -> None:
    """Serial ask/tell; every 7th trial fails, every 5th is infeasible, some carry outcome
    constraints."""
    for _ in range(n):
        p = opt.ask(1)[0]
        k = opt.next_number - 1
        if k % 7 == 6:
            t = Trial(k, p, TrialStatus.FAILED, reason="crash")
        elif k % 5 == 4:
            t = Trial(k, p, TrialStatus.INFEASIBLE, constraints={"area": 1.5})
        else:
            t = Trial(k, p, TrialStatus.COMPLETE, {"y": all_kinds_value(p)},
                      {"area": float(p["i"]) - 6.0})
        log.append(t)
        opt.tell([t])


@pytest.mark.parametrize("sampler", ["tpe", "nsga2"])
def test_rebuilt_optimizer_continues_identically(sampler):
    opts = {"population_size": 5} if sampler == "nsga2" else None
    full_log: list[Trial] = []
    full = OptunaOptimizer(all_kinds_space(), [Objective("y")], seed=4, sampler=sampler,
                           sampler_options=opts)
    _serial_with_outcomes(full, 30, full_log)

    rebuilt = OptunaOptimizer(all_kinds_space(), [Objective("y")], seed=4, sampler=sampler,
                              sampler_options=opts)
    rebuilt.tell(full_log[:18])
    rebuilt_log = list(full_log[:18])
    _serial_with_outcomes(rebuilt, 12, rebuilt_log)
    assert [t.params for t in rebuilt_log] == [t.params for t in full_log]


def test_batch_equals_one_at_a_time_with_pending():
    space = all_kinds_space()
    a = OptunaOptimizer(space, [Objective("y")], seed=2)
    b = OptunaOptimizer(space, [Objective("y")], seed=2)
    hist = run_serial(a, all_kinds_value, 12)
    b.tell([Trial(i, p, TrialStatus.COMPLETE, {"y": all_kinds_value(p)}) for i, p in enumerate(hist)])
    batch = a.ask(3)
    one_by_one = [b.ask(1)[0] for _ in range(3)]
    assert batch == one_by_one
    assert len({space.point_key(p) for p in batch}) == 3  # constant liar + dedup


def test_directions_max_of_negated_equals_min():
    space = DesignSpace(Integer("a", 0, 30), Ordinal("b", list(range(0, 60, 2))))

    def f(p):
        return float((p["a"] - 21) ** 2 + (p["b"] - 14) ** 2)

    mn = OptunaOptimizer(space, [Objective("y", "min")], seed=0)
    mx = OptunaOptimizer(space, [Objective("y", "max")], seed=0)
    pts_min = run_serial(mn, f, 20)
    pts_max = []
    for _ in range(20):
        p = mx.ask(1)[0]
        pts_max.append(p)
        complete(mx, p, {"y": -f(p)})
    assert pts_min == pts_max
    # ...and maximizing f itself goes elsewhere
    up = OptunaOptimizer(space, [Objective("y", "max")], seed=0)
    assert run_serial(up, f, 20) != pts_min


# ----------------------------------------------------------------------------- quality
def test_tpe_beats_random_search_on_a_quadratic():
    space = DesignSpace(Integer("a", 0, 63), Integer("b", -20, 40),
                        Ordinal("c", list(range(0, 100, 3))))

    def f(p):
        return float((p["a"] - 41) ** 2 + (p["b"] - 7) ** 2 + (p["c"] - 51) ** 2)

    def best(opt):
        run_serial(opt, f, 60)
        return min(t.metrics["y"] for t in opt.trials)

    tpe = [best(OptunaOptimizer(space, [Objective("y")], seed=s)) for s in range(5)]
    rnd = [best(RandomSearch(space, [Objective("y")], seed=s)) for s in range(5)]
    assert np.median(tpe) < 0.5 * np.median(rnd), (tpe, rnd)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nsga2_two_objectives_follows_min_and_max(seed):
    space = DesignSpace(Real("x", 0.0, 1.0), Integer("k", 0, 20))

    def last_k(direction):
        opt = OptunaOptimizer(space, [Objective("a", "min"), Objective("b", direction)],
                              seed=seed, sampler="nsga2", sampler_options={"population_size": 8})
        for _ in range(48):
            p = opt.ask(1)[0]
            assert space.validate(p) == []
            opt.tell([Trial(opt.next_number - 1, p, TrialStatus.COMPLETE,
                            {"a": p["x"], "b": p["k"] + 10 * p["x"]})])
        return np.mean([t.params["k"] for t in opt.trials[-16:]])

    # maximizing b drives k up, minimizing it drives k down
    assert last_k("max") > last_k("min") + 2


# ----------------------------------------------------------------------------- registry
@pytest.mark.parametrize("name,sampler", [("tpe", "tpe"), ("nsga2", "nsga2"),
                                          ("optuna-random", "random")])
def test_registry_names(name, sampler):
    space = tight_space()
    opt = make_optimizer(name, space, [Objective("y", "max")], 3)
    assert isinstance(opt, OptunaOptimizer) and opt.sampler == sampler and opt.name == name
    pts = run_serial(opt, tight_value, 5)
    assert all(space.validate(p) == [] for p in pts)


def test_registry_gp_and_options():
    space = DesignSpace(Real("x", 0.0, 1.0), Integer("n", 1, 8),
                        constraints=[Constraint("c", "x * n <= 4")])
    opt = make_optimizer("optuna-gp", space, [Objective("y")], 0,
                         {"sampler_options": {"n_startup_trials": 3}})
    assert opt.sampler == "gp" and opt.max_resample == 2
    pts = run_serial(opt, lambda p: (p["x"] - 0.3) ** 2 + p["n"], 5)
    assert all(space.validate(p) == [] for p in pts)
    with pytest.raises(ValueError, match="bad options"):
        make_optimizer("tpe", space, [Objective("y")], 0, {"bogus": 1})
    with pytest.raises(ValueError, match="bad options"):
        make_optimizer("tpe", space, [Objective("y")], 0, {"sampler_options": {"bogus": 1}})
    with pytest.raises(ValueError, match="objective"):
        OptunaOptimizer(space, [], seed=0)


def test_missing_optuna_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)
    with pytest.raises(ImportError, match="baselines"):
        make_optimizer("tpe", tight_space(), [Objective("y")], 0)
