"""The guide's figures (experiments/figures/guides.py) on small made-up records: each
number comes from its record, a changed record changes the block, and a record written
by another script is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.figures import guides
from experiments.figures.benchmarks import INNER_FEASIBILITY, INNER_FEASIBILITY_TXT
from experiments.figures.records import RecordError


def _record(harness: str, settings: dict, rows, *, commit: str = "abcdef0123") -> dict:
    return {"record_version": 1, "harness": harness, "settings": settings, "commit": commit,
            "dirty": False, "started_at": "2026-12-03T12:00:00+00:00", "wall_s": 600.0, "process_cpu_s": 90.0,
            "load_avg_1_5_15_start": [6.5, 5, 5], "load_avg_1_5_15_end": [7.25, 6, 5],
            "cpu_count": 2, "ok": True, "rows": rows}


def _write(root: Path, rel: str, rec: dict) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(json.dumps(rec))


def _enumerable(root: Path, bo_hits=(30, 50, None)) -> None:
    res = {"constrained-bo": {"evals_to_target": list(bo_hits), "best_ratio": [1.0, 1.0, 1.3],
                              "seconds": [9.0, 9.0, 9.0], "cpu_seconds": [4.0, 5.0, 6.0]},
           "random": {"evals_to_target": [None, None, None], "best_ratio": [1.5, 1.6, 1.7],
                      "seconds": [0.1] * 3, "cpu_seconds": [0.1, 0.2, 0.3]}}
    _write(root, guides.BO_ENUMERABLE, _record("experiments.search_quality.bo_enumerable",
                                               {"seeds": 3, "fraction": 0.05, "optimizers": list(res)},
                                               {"points": 1000, "infeasible": 12, "optimum": 5.0, "budget": 50,
                                                "results": res}))


def _feasibility(root: Path) -> None:
    def s(share, ratio):
        return {"infeasible_share": share, "infeasible_share_after_init": share, "median_ratio_to_exact": ratio,
                "runs": 4}
    _write(root, INNER_FEASIBILITY, {
        "arch": "spatial_4x4", "budget": 20, "seeds": 2, "n_init": 5, "pool_size": 100,
        "layers": {"resnet50:a": {}, "dqn:b": {}},
        "summary": {"bo": s(0.25, 2.0), "bo-no-feasibility": s(0.2, 2.5), "bo-neither": s(0.7, 3.0),
                    "random": s(0.6, 3.5), "bo-known": s(0.0, 1.5)}})
    (root / INNER_FEASIBILITY_TXT).write_text(f"# {SCOPE_LINE}\nspatial_4x4, budget 20, 2 seeds\n")


SCOPE_LINE = "proofs and bounds cover: edp over divisor tilings, timeloop accounting, bypass searched, no constraints"


def _gradient(root: Path, random_best=(110.0, 100.0, 120.0)) -> None:
    def runs(bests, cpu):
        return [{"best": b, "cpu_seconds": cpu, "seconds": 2 * cpu} for b in bests]
    _write(root, guides.GRADIENT, _record("experiments.search_quality.gradient_vs_bo", {"seeds": 3},
                                          {"budget": 30, "seeds": 3, "steps": 200, "baseline_edp_uj_ms": 100.0,
                                           "methods": {"gradient": runs([90.0, 95.0, 99.0], 300.0),
                                                       "constrained-bo": runs([80.0, 85.0, 99.0], 30.0),
                                                       "random": runs(list(random_best), 20.0)}}))


def test_optimizers_table_rows_come_from_their_records(tmp_path):
    _enumerable(tmp_path)
    _feasibility(tmp_path)
    _gradient(tmp_path)
    every_row = ((guides.BO_ENUMERABLE, guides._enumerable_row), (INNER_FEASIBILITY, guides._feasibility_row),
                 (guides.GRADIENT, guides._gradient_row))
    text = guides.optimizers_measured(tmp_path, every_row)
    assert "a 1,000-point systolic array × GEMM mapping space (12 infeasible), budget 5% (50 evaluations), 3 seeds" in text
    assert "constrained BO **50** (2/3 seeds reach it; median best = the optimum; 5.0 CPU s per seed" in text
    assert "random > 50 (0/3 seeds reach it; median best 1.60× optimum; 0.2 CPU s" in text
    assert "`python -m experiments.search_quality.bo_enumerable --seeds 3 --json" in text
    assert "spatial_4x4" in text and "2 layers of DQN and ResNet-50, 20 mappings, 2 seeds" in text
    assert "after BO's 5-point initial design: constrained BO (classifier + failures imputed) **25.0 %**" in text
    assert "imputation without the classifier 20.0 %" in text and "share is 5.0 points above imputation alone" in text
    assert "BO 2.00, BO over the space with capacity known 1.50, random 3.50" in text
    # the exact optimum states its space, read from the run output's header (issue 45 item 3)
    assert ("exact optimum (median; the exact mapper's optimum of edp over divisor tilings, timeloop accounting, "
            "bypass searched, no constraints, as `docs/search_quality/inner_feasibility.txt` states)") in text
    assert "gradient **0.950**, constrained BO **0.850**, random **1.100**" in text
    assert "13.6 % better than random and 11.8 % worse than constrained BO" in text
    assert "DOSA's gaps are not reproduced" in text
    assert "gradient 5.0 min, constrained BO 30 s, random 20 s; the first gradient run" in text
    assert text.count("commit abcdef0") == 2 and "load average 6.5 at its start" in text
    _enumerable(tmp_path, bo_hits=(30, 40, 45))
    _gradient(tmp_path, random_best=(300.0, 290.0, 310.0))
    changed = guides.optimizers_measured(tmp_path, every_row)
    assert "constrained BO **40** (3/3 seeds reach it" in changed
    assert "random **3.000**" in changed and "68.3 % better than random" in changed


def test_the_committed_table_has_the_rows_whose_records_are_committed(tmp_path):
    _enumerable(tmp_path)
    _feasibility(tmp_path)
    _gradient(tmp_path)
    text = guides.optimizers_measured(tmp_path)
    assert "**25.0 %**" in text and "gradient **0.950**" in text and "demo (systolic array" in text
    assert "constrained BO **50**" in text
    assert guides.FIGURES["optimizers-measured"][0] == (*(rel for rel, _ in guides.OPTIMIZER_ROWS),
                                                        INNER_FEASIBILITY_TXT)
    _feasibility(tmp_path)
    rec = json.loads((tmp_path / INNER_FEASIBILITY).read_text())
    rec["summary"]["bo"]["infeasible_share_after_init"] = 0.5
    _write(tmp_path, INNER_FEASIBILITY, rec)
    assert "**50.0 %**" in guides.optimizers_measured(tmp_path)


def test_report_size_sentence_from_its_record(tmp_path):
    runs = [{"load_wall_s": 0.5, "load_cpu_s": 0.4, "write_wall_s": w, "write_cpu_s": c, "bytes": 13_400_000}
            for w, c in ((20.0, 15.0), (30.0, 16.0), (25.0, 14.5))]
    rows = {"trials": 50_000, "status_counts": {"COMPLETE": 49_000, "INFEASIBLE": 1_000}, "generate_wall_s": 99.0,
            "runs": runs, "write_wall_s_median": 25.0, "write_cpu_s_median": 15.0, "load_wall_s_median": 0.5,
            "bytes": 13_400_000}
    _write(tmp_path, guides.REPORT_SIZE, _record("experiments.benchmarks.report_size", {"trials": 50_000}, rows))
    text = guides.report_size(tmp_path)
    assert "study of 50,000 trials (49,000 COMPLETE, 1,000 INFEASIBLE" in text
    assert "took 25.0 s wall and 15.0 CPU s (median of 3 writes in one process: 20.0, 30.0, 25.0 s wall" in text
    assert "the page is 13.4 MB" in text and "10.0 min wall, 1.5 min CPU" in text
    rows["write_cpu_s_median"] = 44.0
    _write(tmp_path, guides.REPORT_SIZE, _record("experiments.benchmarks.report_size", {"trials": 50_000}, rows))
    assert "44.0 CPU s" in guides.report_size(tmp_path)


def _score(sp, mape):
    return {"spearman": sp, "kendall": sp - 0.1, "mape_pct": mape, "mdape_pct": mape / 2, "n": 0}


def _kernels(root: Path, after_all: float = 0.7) -> None:
    heldout = {"latency_before": {**_score(0.5, 30.0), "n": 12, "within_shape_spearman": 0.9},
               "latency_after": {**_score(after_all, 20.0), "n": 12, "within_shape_spearman": 0.95},
               "latency_before_blocked_t1": {**_score(0.96, 25.0), "n": 10},
               "latency_after_blocked_t1": {**_score(0.98, 5.0), "n": 10},
               "latency_before_torch_t2": {**_score(-1.0, 90.0), "n": 2},
               "latency_after_torch_t2": {**_score(-0.8, 80.0), "n": 2}}
    fit = {"energy": "unavailable", "heldout": heldout, "train": {"latency_before": {"n": 30}},
           "heldout_groups": ["a", "b", "c"], "median_noise_rel": 0.04, "statistic": "median",
           "other_statistic": {"statistic": "best", "heldout": {"latency_after": _score(0.6, 33.0)}}}
    _write(root, guides.CALIBRATION, _record("coexplore calibrate", {"seed": 0, "threads": "1,2"},
                                             {"fit": fit, "device": "cpu"}))
    rows = [{"method": "model-only", "seed": 0, "measurements": 0, "gap_pct": 2.0, "gap_sweep_pct": 1.0},
            *({"method": "screen", "seed": s, "measurements": 10 + s, "gap_pct": g, "gap_sweep_pct": 0.5}
              for s, g in enumerate((0.0, 3.0, 8.0))),
            *({"method": "bo", "seed": s, "measurements": 20, "gap_pct": g, "gap_sweep_pct": 1.5,
               "gp_noise_var_std": v} for s, (g, v) in enumerate(((1.0, 0.01), (6.0, 0.05), (7.0, 0.02))))]
    _write(root, guides.HIL, _record("experiments.search_quality.hil_search",
                                     {"seeds": 3, "budget_frac": 0.2, "calibration": "runs/c.json"},
                                     {"shape": [64, 32, 16], "n_tilings": 100, "budget": 20, "statistic": "median",
                                      "model": "calibrated (runs/c.json)", "median_noise_rel": 0.12,
                                      "model_spearman_all_tilings": 0.93, "verify_rounds": 5,
                                      "verified": {"k0": 1.1, "k1": 1.0}, "verified_best_s": 1.0,
                                      "exhaustive_best": "k0", "rows": rows}))


def test_calibration_table_from_its_record(tmp_path):
    _kernels(tmp_path)
    text = guides.calibration_cpu(tmp_path)
    assert "42 kernels, 12 held out, of 3 shapes; median relative IQR of the measurements 0.040" in text
    assert "| all 12 kernels | 0.500 → 0.700 | 0.400 → 0.600 | 30.0 → 20.0 % | 15.0 → 10.0 % |" in text
    assert "| 10 blocked matmuls | 0.960 → 0.980 |" in text
    assert "| 2 torch kernels, 2 threads | \u22121.000 → \u22120.800 |" in text
    assert "torch kernels, 1 thread" not in text   # not in the record: no row
    assert "Spearman is 0.900 before and 0.950 after" in text and "best of the timed blocks" in text
    assert "had 15% of one core on average" in text   # 90 CPU s over 600 s wall
    _kernels(tmp_path, after_all=0.65)
    assert "| all 12 kernels | 0.500 → 0.650 |" in guides.calibration_cpu(tmp_path)


def test_hil_table_and_summary_from_their_records(tmp_path):
    _kernels(tmp_path)
    text = guides.hil_cpu(tmp_path)
    assert "GEMM 64×32×16, 100 tilings; budget 20 measurements (20%); 3 seeds" in text
    assert "| screen | 11 | 11% | 3.0 % (2/3) | 0.5 % |" in text
    assert "| bo | 20 | 20% | 6.0 % (1/3) | 1.5 % |" in text
    assert "| model-only | 0 | 0% | 2.0 % (1/1) | 1.0 % |" in text
    assert "| exhaustive sweep | 100 | 100% | 10.0 % | 0.0 % |" in text
    assert "0.01–0.05 over the seeds" in text and "--calibration runs/c.json" in text
    assert "The sweep's own best verified 10.0 % above" in text   # k0 verified at 1.1 against 1.0
    summary = guides.calibration_summary(tmp_path)
    assert "12 held-out kernels of 3 shapes moved the Spearman from 0.50 to 0.70 overall" in summary
    assert "for the 10 blocked matmuls, from 0.960 to 0.980 with MAPE 25.0 % → 5.0 %" in summary
    hil = guides.hil_summary(tmp_path)
    assert "a 64×32×16 GEMM (100 tilings) picked tilings this far above the best verified one" in hil
    assert "screen 3.0 % with 11% of the sweep's measurements; bo 6.0 % with 20%" in hil
    rec = json.loads((tmp_path / guides.HIL).read_text())
    rec["rows"]["rows"][2]["gap_pct"] = 40.0   # screen, seed 1: the median moves to seed 2's 8.0
    _write(tmp_path, guides.HIL, rec)
    assert "| screen | 11 | 11% | 8.0 % (1/3) |" in guides.hil_cpu(tmp_path)
    assert "screen 8.0 %" in guides.hil_summary(tmp_path)


def test_a_record_of_another_script_is_refused(tmp_path):
    _write(tmp_path, guides.REPORT_SIZE, _record("experiments.search_quality.hil_search", {}, {}))
    with pytest.raises(RecordError, match="written by"):
        guides.report_size(tmp_path)


def test_the_exact_optimum_without_a_stated_scope_is_refused(tmp_path):
    """The feasibility row quotes the one scope line of inner_feasibility.txt; an output
    without one (or with one per group) is an error, not an optimum over no stated space."""
    _feasibility(tmp_path)
    out = tmp_path / INNER_FEASIBILITY_TXT
    out.write_text("spatial_4x4, budget 20, 2 seeds\n")
    with pytest.raises(RecordError, match="states no proof scope line"):
        guides._feasibility_row(tmp_path)
    out.write_text(f"# {SCOPE_LINE}\n# {SCOPE_LINE}\n")
    with pytest.raises(RecordError, match="states not one proof scope line"):
        guides._feasibility_row(tmp_path)


def test_shis_feasibility_table_states_the_space_of_its_exact_optimum(tmp_path):
    from experiments.figures import benchmarks

    _feasibility(tmp_path)
    caption = benchmarks.inner_feasibility(tmp_path).split("\n\n")[0]
    assert ("exact optimum = the exact mapper's optimum of edp over divisor tilings, timeloop accounting, bypass "
            "searched, no constraints, as `docs/search_quality/inner_feasibility.txt` states") in caption
    assert benchmarks.FIGURES["shi2020-inner-feasibility"][0] == (INNER_FEASIBILITY, INNER_FEASIBILITY_TXT)


def test_shis_inner_effort_table_states_the_space_of_its_proofs(tmp_path):
    """Its "layers proven" column is of the exact mapper's proofs: the caption quotes the
    scope line of the run's console output, and an output without one is refused."""
    import shutil

    from experiments.figures import benchmarks

    root = Path(__file__).resolve().parents[2]
    for rel in benchmarks.FIGURES["shi2020-inner-effort"][0]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / rel, tmp_path / rel)
    caption = benchmarks.inner_effort(tmp_path).split("\n\n")[0]
    assert "layers proven = proven optimal (edp over divisor tilings, coexplore accounting, bypass searched" in caption
    out = tmp_path / benchmarks.INNER_EFFORT_TXT
    out.write_text("\n".join(x for x in out.read_text().splitlines() if "proofs and bounds cover" not in x))
    with pytest.raises(RecordError, match="states no proof scope line"):
        benchmarks.inner_effort(tmp_path)
