"""Issue 42: the Shi 2020 optimizer comparison and budget sweep (a smoke run of every
optimizer end to end, checked against the trials in its studies), the BO options behind
two of the optimizers, and the records' fields (gaps, sample stds)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from experiments.records import RecordStore
from experiments.reproduce import shi2020, shi2020_sweep
from experiments.storage import Storage
from optimizer import Trial, TrialStatus, make_optimizer
from optimizer.base import parse_objectives

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "reproduction" / "results" / "shi2020"


def _toy_edp(p: dict) -> float:
    # smooth in every parameter, lowest at a 12 x 12 array with mid-sized buffers
    return (1 + (p["pe_x"] - 12) ** 2 + (p["pe_y"] - 12) ** 2) * (1 + abs(math.log2(p["glb_kib"] / 64))) \
        * (1 + 0.01 * (p["rf_w_words"] + p["rf_i_words"] + p["rf_o_words"]))


def _ask_tell(name: str, n: int, seed: int = 3) -> list[Trial]:
    """``n`` serial trials of the comparison's optimizer ``name`` on the iso space, with the
    study's rule for a point beyond the known constraints (INFEASIBLE, not evaluated)."""
    reg, opts = shi2020.variant(name)
    space = shi2020.hardware_space("iso")
    opt = make_optimizer(reg, space, parse_objectives({"edp_uj_ms": "min"}), seed, opts)
    trials: list[Trial] = []
    for i in range(n):
        (p,) = opt.ask(1)
        if space.validate(p):
            t = Trial(i, p, TrialStatus.INFEASIBLE)
        else:
            t = Trial(i, p, TrialStatus.COMPLETE, metrics={"edp_uj_ms": _toy_edp(p)})
        trials.append(t)
        opt.tell([t])
    return trials


def test_no_comparison_optimizer_depends_on_the_budget(tmp_path, monkeypatch):
    """The first k trials of a longer search are the search of k trials (what the sweep's
    prefixes rest on): the study an outer search creates is the same at every budget (its
    optimizer never sees the budget; BO's initial design was once sized by it)."""
    from experiments.study import Study

    made = []

    class Stop(Exception):
        pass

    def create(name, space, objectives, evaluator, optimizer, **kw):
        made.append((name, optimizer, kw["optimizer_options"], kw["evaluator_options"], kw["seed"]))
        raise Stop

    monkeypatch.setattr(Study, "create", create)
    for name in shi2020.VARIANTS:
        for budget in (16, 120):
            with pytest.raises(Stop):
                shi2020.run_study("dqn", "dqn", name, 1, "iso", budget, {"name": "exact"}, "sqlite://", 1)
        assert made[-1] == made[-2], name
    assert made[0][2] == shi2020.BO_OPTIONS


def test_the_warm_start_begins_at_eyeriss_then_takes_the_cold_runs_design():
    warm, cold = _ask_tell("constrained-bo-eyeriss", 5), _ask_tell("constrained-bo", 5)
    assert warm[0].params == shi2020.EYERISS_POINT
    assert [t.params for t in warm[1:5]] == [t.params for t in cold[:4]]    # then the same Sobol design
    assert all(t.status is TrialStatus.COMPLETE for t in warm + cold)       # input constraints: never invalid


def test_bo_without_constraint_handling_proposes_invalid_points_and_never_repeats_one():
    trials = _ask_tell("bo-reject", 8)
    bad = [t for t in trials if t.status is TrialStatus.INFEASIBLE]
    assert bad, "candidates from the box beyond Eyeriss's resources must sometimes be proposed"
    keys = [json.dumps(t.params, sort_keys=True) for t in trials]
    assert len(set(keys)) == len(keys)                                       # rejected, then resampled


def test_bo_options_are_checked():
    space = shi2020.hardware_space("iso")
    obj = parse_objectives({"edp_uj_ms": "min"})
    with pytest.raises(ValueError, match=r"initial_points\[0\].*not a point of the space"):
        make_optimizer("constrained-bo", space, obj, 0, {"initial_points": [{**shi2020.EYERISS_POINT, "pe_x": 32}]})
    with pytest.raises(ValueError, match="more than n_init=1"):
        make_optimizer("constrained-bo", space, obj, 0, {"n_init": 1, "initial_points": [shi2020.EYERISS_POINT] * 2})
    with pytest.raises(ValueError, match="known_constraints must be True or False"):
        make_optimizer("constrained-bo", space, obj, 0, {"known_constraints": "no"})
    with pytest.raises(ValueError, match="unknown outer optimizer 'gp'"):
        shi2020.variant("gp")


def test_t_interval_and_sample_std():
    x = [1.0, 2.0, 4.0]
    lo, hi = shi2020_sweep.t_interval(x)
    half = 4.302652729911275 * np.std(x, ddof=1) / math.sqrt(3)        # t(0.975, 2)
    assert (lo, hi) == pytest.approx((np.mean(x) - half, np.mean(x) + half))
    assert shi2020.sample_std(x) == pytest.approx(math.sqrt(7 / 3)) and shi2020.sample_std([1.0]) is None
    assert shi2020_sweep.t_interval([1.0]) is None


def test_smoke_runs_every_optimizer_end_to_end_and_the_infeasible_share_is_the_trials(tmp_path):
    res = shi2020_sweep.main(["--smoke", "--out", str(tmp_path)])
    smoke = shi2020_sweep.SMOKE
    (wl,) = res["workloads"]
    w = res["workloads"][wl]
    assert [int(b) for b in w["budgets"]] == list(smoke["budgets"])
    storage = Storage(f"sqlite:///{(tmp_path / 'studies.db').resolve()}")
    for budget, cells in w["budgets"].items():
        assert list(cells) == list(shi2020.VARIANTS)
        for opt, c in cells.items():
            assert c["n"] == smoke["seeds"] and c["trials"] == [int(budget)] * smoke["seeds"]
            failed = 0
            for seed in range(smoke["seeds"]):
                study = storage.find_study(shi2020.study_name(wl, "iso", opt, "", seed))
                trials = [t for t in storage.trials(study.id) if t.number < int(budget)]
                assert len(trials) == int(budget)
                bad = sum(t.status.value in ("INFEASIBLE", "FAILED") for t in trials)
                assert bad == c["failed_trials"][seed]
                failed += bad
                best = min((t.metrics.get("edp_uj_ms") or math.inf for t in trials
                            if t.status.value == "COMPLETE"), default=math.inf)
                assert c["curves"][seed][-1] == pytest.approx(best)
            assert c["infeasible_share"] == pytest.approx(failed / (int(budget) * smoke["seeds"]))
            if c["no_design"] == 0:
                ch = np.array(c["changes"])
                assert c["change_std"] == pytest.approx(ch.std(ddof=1))
                assert c["ci95_t"][0] <= c["change_mean"] <= c["ci95_t"][1]
    top = w["budgets"][str(max(smoke["budgets"]))]
    assert top["bo-reject"]["infeasible_share"] > 0                          # beyond the resources: rejected
    for opt in ("constrained-bo", "random", "constrained-bo-eyeriss"):
        assert top[opt]["infeasible_share"] == 0
    assert top["constrained-bo-eyeriss"]["best_points"] is not None
    # one search per seed: the smaller budget's curve is the larger one's prefix
    lo = w["budgets"][str(min(smoke["budgets"]))]
    for opt in shi2020.VARIANTS:
        for a, b in zip(lo[opt]["curves"], top[opt]["curves"]):
            assert b[: len(a)] == a
    text = (tmp_path / "sweep.md").read_text()
    assert "95 % Student t-interval" in text and "bo-reject" in text and (tmp_path / "sweep.png").stat().st_size
    # resumable: a second invocation takes every search and re-map from the records
    again = shi2020_sweep.main(["--smoke", "--out", str(tmp_path)])
    assert again["workloads"][wl]["budgets"] == json.loads(json.dumps(w["budgets"]))


def test_committed_records_agree_with_themselves():
    """Every committed figure that says all its layers are proven optimal has gap 0 (the
    stale meaning was restated, its number kept beside it); no record is unreadable."""
    store = RecordStore(RESULTS / "records")
    restated = 0
    for rec in store:
        v = rec.value
        if isinstance(v, dict) and "worst_layer_gap" in v:
            if v["all_layers_proven_optimal"]:
                assert v["worst_layer_gap"] == 0.0, rec.key
            restated += shi2020.STALE_GAP_FIELD in v
    assert restated == 10
    assert shi2020.restate_gap({"all_layers_proven_optimal": False, "worst_layer_gap": 0.3}) == \
        {"all_layers_proven_optimal": False, "worst_layer_gap": 0.3}
    assert shi2020.restate_gap({"all_layers_proven_optimal": True, "worst_layer_gap": 2.5}) == \
        {"all_layers_proven_optimal": True, "worst_layer_gap": 0.0, shi2020.STALE_GAP_FIELD: 2.5}


def _search_cells(res: dict) -> list[str]:
    """The figures a workload's search rows print (EDP, energy, latency, mean ± std, n)."""
    return [shi2020._pm(s[k]) for by_opt in res["both"].values() for s in by_opt.values()
            for k in ("edp_uj_ms", "energy_uj", "latency_ms")]


def test_the_dqn_batch_1_search_figures_are_withdrawn():
    """DQN at batch 1 was finished before the steps cache was committed: its searches have
    no record, so table.md prints the withdrawal in place of every search figure (and the
    other workloads' rows print theirs); its steps stay."""
    table = (RESULTS / "table.md").read_text()
    results = json.loads((RESULTS / "results.json").read_text())
    assert results["workloads"]["dqn"]["search_records_missing"] is True
    assert not any(v.get("search_records_missing") for k, v in results["workloads"].items() if k != "dqn")
    both = [line for line in table.splitlines() if "co-designed hardware" in line]
    gone = {line.split(" | ")[0].strip("| ") for line in both if shi2020.WITHDRAWN in line}
    assert gone == {"dqn"}
    dqn = results["workloads"]["dqn"]
    for cell in _search_cells(dqn):
        assert cell not in table, cell
    a = dqn["against_paper"]
    paper_row = next(line for line in table.splitlines() if line.startswith("| dqn | -40.0 % |"))
    assert shi2020.WITHDRAWN in paper_row and f"{100 * a['shortfall_points']:+.1f}" not in paper_row
    assert f"{a['mapping']:.3f}" in paper_row and "below the bound" in paper_row     # no search in these
    assert "| dqn | 1 (acting) | baseline: Eyeriss v1 + best row-stationary mapping |" in table
    assert not (RESULTS / "convergence_dqn.png").exists()
    s = results["workloads"]["resnet50"]["both"]["iso"]["constrained-bo"]["edp_uj_ms"]
    assert s["std_ddof"] == 1 and s["n"] == 5 and s["change_std"] == pytest.approx(np.std(s["changes"], ddof=1))


@pytest.mark.parametrize("flag", ["dqn", "resnet50"])
def test_a_workload_without_search_records_never_shows_its_search_figures(flag, tmp_path):
    """The withdrawal follows the flag, not the workload's name: flagged, a workload's
    search figures are gone from every table line; unflagged, they are printed."""
    results = json.loads((RESULTS / "results.json").read_text())
    for wl, res in results["workloads"].items():
        res["search_records_missing"] = wl == flag
    args = type("A", (), {"quick": False, "steps_only": False})()
    shi2020.write_table(results, tmp_path / "table.md", args)
    table = (tmp_path / "table.md").read_text()
    for wl, res in results["workloads"].items():
        rows = "\n".join(line for line in table.splitlines() if line.startswith(f"| {wl} |"))
        cells = _search_cells(res)
        if wl == flag:
            assert not any(c in rows for c in cells), wl
            assert rows.count(shi2020.WITHDRAWN) == len(res["both"]) + ("against_paper" in res)
        else:
            assert all(c in rows for c in cells) and shi2020.WITHDRAWN not in rows, wl
    lost = sum(sum(s["seconds"]) for by_opt in results["workloads"][flag]["both"].values() for s in by_opt.values())
    for res in results["workloads"].values():
        res["search_records_missing"] = False
    assert shi2020.recorded_hours(results) * 3600 - lost == pytest.approx(
        shi2020.recorded_hours({**results, "workloads": {
            k: {**v, "search_records_missing": k == flag} for k, v in results["workloads"].items()}}) * 3600)
