"""Reproduce Shi et al. 2020, "Learned Hardware/Software Co-Design of Neural Accelerators",
as the paper ran it, and say where the gain comes from.

The paper (arXiv 2010.02075; openreview.net/forum?id=dqyK5RKMaW4): nested constrained
Bayesian optimization -- an outer loop over an Eyeriss-like accelerator, an inner loop
over each layer's mappings, known constraints as input constraints and unknown ones
(invalid points) as output constraints, costed by Timeloop with Accelergy -- improves
network EDP by 18 % (ResNet) and 40 % (DQN) over hand-tuned Eyeriss, with strong results
on an MLP and a Transformer. Its body is not available to us; what we follow is stated in
docs/reproduction/shi2020.md.

Per workload (:data:`WORKLOADS`, one batch rule for all, below):

0. **The baseline's dataflow checked first** (:func:`rs_check`): the row-stationary
   constraint set (:mod:`mappers.row_stationary`) mapped by the exact mapper on AlexNet's
   five convolutions, against the chip's published latency and access counts (JSSC 2017
   Table V), as :mod:`experiments.validation.rs_baseline` prints in full.
1. **Baseline** -- hand-tuned Eyeriss: Eyeriss v1 (12 x 14 PEs, 224/12/24-word RFs,
   108 KiB GLB, 16 bit) running row-stationary, each layer mapped by the exact mapper
   within the row-stationary set (the best row-stationary mapping; fully connected layers
   and GEMMs by the FC rule of JSSC 2017).
2. **Software only**: Eyeriss v1, each layer's best mapping without the dataflow
   restriction (the exact mapper): the mapping share of any gain.
3. **Both**: the hardware searched by constrained BO (the paper's outer loop; random
   search beside it with ``--optimizers``) over :func:`hardware_space`
   (:func:`accelerators.spaces.shi2020_space`), every layer of
   every hardware point mapped by the exact mapper with an effort limit of
   :data:`MAX_NODES` search nodes per layer (``--max-nodes``; deterministic, unlike a
   time limit): the fast default, :class:`mappers.anytime.AnytimeMapper`'s limit. A
   layer it does not prove keeps the best mapping found, with its certified gap. The
   share of layer mappings proven optimal is reported, and
   each run's best design is re-mapped for the reported figures without the limit, or
   with the workload's :data:`FINAL_MAX_NODES` where an unlimited proof is out of reach,
   each figure then with its certified gap (the seeds' best designs side by side on the
   workers, :func:`remap`). ``iso``: at most Eyeriss's PEs and on-chip storage, the
   paper's setting as recalled; ``free``: up to 1,024 PEs and 4x the storage.
4. **Bound**: the compulsory-traffic lower bound (:mod:`evaluators.loopnest.compulsory`: every MAC
   once, every touched word of the weights and inputs read from DRAM once, every output
   written once, all PEs busy) at Eyeriss's PE count (iso) and at 1,024 PEs (free).
5. **The paper's inner loop** (:func:`inner_bo_ablation`): the same outer BO with an inner
   constrained BO over each layer's mappings instead of the exact mapper, buffer capacity
   left unknown (:func:`mappers.mapping_space.mapping_space` with ``capacity="unknown"``:
   overflowing mappings are proposed, fail and are learned as output constraints), at a
   stated inner budget; it reports the infeasible share of the inner proposals and the
   EDP reached beside the exact inner search's at the same outer budget (the first
   evaluations of step 3's own study, not a second run).
6. **Energy-table ablation**: steps 1-3 (iso) with Eyeriss's normalized table, in which
   a level's access costs a fixed multiple of a MAC whatever its size.

Energies: the Horowitz 45 nm table (``tech="horowitz_45nm"``,
:mod:`accelerators.tech`), in which an SRAM access grows with its capacity, for every
design, the baseline included (the paper costed with Accelergy, whose energies grow with
capacity).

Batch rule: every network at batch 1 (one inference: an image, a frame stack, a sample,
one 512-token sequence for the BERT-base block); the two networks whose use is batched,
DQN (trained on minibatches of 32, Mnih et al. 2015) and the MLP, also at batch 32.

Reported per workload and step: EDP, energy and latency, each as a change against the
baseline (negative = lower = better, in the console and the table alike), mean +- std
over seeds for the searched designs, evaluations until the search beat the baseline (and
the software-only design), and wall time per run.

Run: ``coexplore reproduce shi2020 [--quick]`` (or ``python -m
experiments.reproduce.shi2020``); everything lands in ``runs/reproduce/shi2020/``, studies
resume if interrupted, and the deterministic steps, each finished search (its record:
:data:`RUN_FIELDS`) and each re-map are records of the study engine's record store
(:mod:`experiments.records`) under ``records/`` there, of the kinds :data:`KINDS`, each
keyed by its settings (:func:`search_settings`, :func:`remap_settings`, ...). The full run
takes about two days on 2 cores, longer than a working session whose checkout may not keep
``runs/``; so it continues from committed state: ``--cache-from`` takes an earlier store's
records (the committed ``docs/reproduction/results/shi2020/records``) and ``--reuse`` an
earlier ``results.json``'s finished workloads (:func:`reusable`: same settings only). Only
the search in progress when a session stops is lost.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from accelerators import eyeriss_v1
from accelerators.spaces import (
    EYERISS_PES,
    EYERISS_STORAGE_BYTES,  # noqa: F401  (the benchmarks take it from here)
    FREE_MAX_PES,
    SHI2020_MODES,
)
from accelerators.spaces import shi2020_space as hardware_space
from accelerators.spatial import SpatialArray
from evaluators.base import Evaluation
from evaluators.loopnest.compulsory import energy_lower_bound_pj, latency_lower_bound_cycles
from evaluators.nested import NestedEvaluator
from experiments.figures.reproductions import recorded_cpu, recorded_hours, withdrawn_phrase
from experiments.figures.shi2020 import WITHDRAWN, withdrawn
from experiments.proof_scopes import ProofScopes
from experiments.records import RecordStore, plain, trials_ref
from mappers import zoo
from mappers.anytime import ANYTIME_NODES

PAPER = {"resnet50": -0.18, "dqn": -0.40}
"""The paper's EDP change vs hand-tuned Eyeriss (abstract): ResNet -18 %, DQN -40 %. The
paper does not state DQN's batch, so its figure is set beside DQN at every batch
(:func:`paper_change`)."""


def paper_change(workload: str) -> float | None:
    """The paper's EDP change for ``workload`` (``dqn@32`` takes DQN's), or ``None``."""
    return PAPER.get(workload.split("@")[0])


def against_paper(res: dict[str, Any], paper: float) -> dict[str, Any]:
    """Where one workload's decomposition stands against the paper's EDP change ``paper``,
    as factors of EDP over the baseline's (item 7 of issue 17): ``mapping`` = software only
    / baseline (what leaving row-stationary buys on Eyeriss), ``hardware`` = both /
    software only (what the co-designed hardware adds; both = the iso, constrained-BO runs'
    mean EDP change), ``ours`` = their product, ``bound`` = the iso compulsory-traffic
    bound / baseline, ``paper`` = 1 + ``paper``.

    ``reading``: ``"below the bound"`` when the paper's figure is lower than the bound (no
    design with Eyeriss's PE count and DRAM reaches it in this model: the bound alone
    explains the shortfall, ``paper_over_bound`` says by how much); otherwise
    ``"reached"`` or ``"short"``, with ``room_used`` the share of the room between software
    only and the bound that the search realized (``None`` without a search)."""
    base = res["baseline"]["edp_uj_ms"]
    mapping = res["software_only"]["edp_uj_ms"] / base
    bound_r = res["bound"]["iso"]["edp_uj_ms"] / base if "iso" in res.get("bound", {}) else None
    s = res.get("both", {}).get("iso", {}).get("constrained-bo")
    ours = 1 + s["edp_uj_ms"]["change_mean"] if s else None
    p = 1 + paper
    out: dict[str, Any] = {"paper": p, "mapping": mapping, "hardware": None if ours is None else ours / mapping,
                           "ours": ours, "bound": bound_r, "shortfall_points": None if ours is None else ours - p,
                           "paper_over_bound": None if bound_r is None else p / bound_r, "room_used": None}
    if ours is not None and bound_r is not None and mapping > bound_r:
        out["room_used"] = (mapping - ours) / (mapping - bound_r)
    if bound_r is not None and p < bound_r:
        out["reading"] = "below the bound"
    elif ours is None:
        out["reading"] = "no search"
    else:
        out["reading"] = "reached" if ours <= p else "short"
    return out

WORKLOADS: dict[str, tuple[str, str]] = {
    "resnet50": ("resnet50", "1 (inference)"),
    "dqn": ("dqn", "1 (acting)"),
    "dqn@32": ("dqn@32", "32 (training minibatch)"),
    "mlp": ("mlp_dlrm@1", "1 (inference)"),
    "mlp@32": ("mlp_dlrm@32", "32 (batched)"),
    "transformer": ("bert_base_block", "1 sequence of 512 tokens"),
}
"""name -> (zoo spec, batch as the table states it)."""

QUICK_WORKLOADS: dict[str, tuple[str, str]] = {
    "resnet50": ("resnet50[0:4]", "1 (inference), first 4 layers"),
    "dqn": ("dqn", "1 (acting)"),
}
OPTIMIZERS = ("constrained-bo",)
"""The outer optimizers of step 3 by default (``--optimizers`` takes any of :data:`VARIANTS`)."""
MODES = SHI2020_MODES
ABLATION_WORKLOADS = ("dqn", "dqn@32")

EYERISS = eyeriss_v1()
TECH = "horowitz_45nm"
ABLATION_TECH = "eyeriss_normalized"


def fixed(tech: str = TECH) -> dict[str, Any]:
    """What every design shares with Eyeriss v1: clock, word width, bandwidths, and the
    energy table ``tech``."""
    return {"tech": tech, "clock_mhz": EYERISS.clock_mhz, "word_bits": EYERISS.word_bits,
            "dram_bw_words_per_cycle": EYERISS.dram_bw_words_per_cycle,
            "glb_bw_words_per_cycle": EYERISS.glb_bw_words_per_cycle}


EYERISS_POINT = {"pe_x": EYERISS.pe_x, "pe_y": EYERISS.pe_y, "rf_w_words": EYERISS.rf_w_words,
                 "rf_i_words": EYERISS.rf_i_words, "rf_o_words": EYERISS.rf_o_words, "glb_kib": EYERISS.glb_kib}
BO_OPTIONS = {"n_init": 5, "pool_size": 1000}
"""The outer constrained BO's options: 5 Sobol points, then BO over pools of 1,000 random
feasible candidates. ``n_init`` was ``max(5, budget // 6)``, which is 5 at every budget the
committed runs used (8, 16, 30), so those runs are runs of these options; it is a constant
now so that nothing in the search depends on its total budget (the budget sweep,
:mod:`experiments.reproduce.shi2020_sweep`, reads a search's prefixes as the searches of
the smaller budgets)."""

VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "constrained-bo": ("constrained-bo", BO_OPTIONS),
    "random": ("random", {}),
    "tpe": ("tpe", {"sampler_options": {"n_startup_trials": 5}}),
    "bo-reject": ("constrained-bo", {**BO_OPTIONS, "known_constraints": False, "feasibility_model": False,
                                     "impute_infeasible": False}),
    "nsga2": ("nsga2", {"sampler_options": {"population_size": 10}}),
    "constrained-bo-eyeriss": ("constrained-bo", {**BO_OPTIONS, "initial_points": [EYERISS_POINT]}),
}
"""The outer optimizers of the comparison (issue 42 item 3): name -> (registry name,
options). Each proposes over the same :func:`hardware_space` and every budget counts
trials, so an invalid proposal spends one of them:

* ``constrained-bo``: the paper's method (:data:`BO_OPTIONS`): the resource limit is a
  known (input) constraint, candidates are only feasible points; failures would train the
  feasibility classifier (no outer evaluation has failed in the committed runs: every
  hardware point of the space has a valid mapping).
* ``random``: independent feasible samples (rejection sampling of the known constraint
  before proposing: no proposal is invalid).
* ``tpe``: Optuna's multivariate TPE, its 5 startup trials matching BO's initial design;
  Optuna does not know the known constraint: the adapter (:mod:`optimizer.optuna_adapter`)
  re-asks a suggestion that violates it before proposing (told to TPE as pruned, which it
  learns from), so these rejections cost no trial and are not counted.
* ``bo-reject``: BO without the feasibility model: candidates from the parameters' box
  without the resource constraint, no classifier, no imputation; a proposal beyond the
  resources is recorded as an INFEASIBLE trial without being evaluated (it spends a trial
  of the budget, no mapper time), enters no model, is never proposed again, and the next
  proposal is drawn afresh (rejected and resampled).
* ``nsga2``: Optuna's NSGA-II, a plain GA with one objective, population 10 (with Optuna's
  default of 50 the first 50 trials are random samples, more than most budgets here),
  known constraint handled like TPE's.
* ``constrained-bo-eyeriss``: constrained BO whose first trial is Eyeriss v1's own
  configuration (:data:`EYERISS_POINT`, a point of the iso space), then 4 Sobol points.

The sampler settings (5 startup trials, population 10) were chosen before any of these ran.
Nothing here depends on a search's total budget."""


def variant(name: str) -> tuple[str, dict[str, Any]]:
    """The registry name and options of the outer optimizer ``name`` (:data:`VARIANTS`)."""
    if name not in VARIANTS:
        raise ValueError(f"unknown outer optimizer {name!r} (known: {list(VARIANTS)})")
    reg, opts = VARIANTS[name]
    return reg, json.loads(json.dumps(opts))

RS_MAPPER = {"name": "exact", "constraints": "row-stationary"}
EXACT_MAPPER = {"name": "exact"}
MAX_NODES = ANYTIME_NODES
"""Search nodes per layer and hardware point during the outer search: the fast default's
(:data:`mappers.anytime.ANYTIME_NODES`, 40,000). It was 3,000,000 until issue 42, whose
rule, fixed before measuring (docs/reproduction/shi2020.md), chose between the two on 12
random iso designs each of DQN@32 and ResNet-50 (``python -m
experiments.benchmarks.shi2020_inner_effort --workload W --designs 12 --settings heuristic
anytime nodes=3M --workers 1``): the fast default's network EDP is a median 1.0059x
(DQN@32) and 1.0058x (ResNet-50) the 3 M-node search's, the designs rank the same (Spearman
1.000 on both) and the best design is the same, at 5.7 against 37.6 and 12.7 against 23.5
CPU s a point (docs/benchmarks/shi2020_inner_effort_{dqn32,resnet50}_anytime.txt). The
reported figures re-map each run's best design without a limit (:data:`FINAL_MAX_NODES`),
so the limit changes only how the search ranks what it proposes. The committed run of
docs/reproduction/results/shi2020/ ran at 3,000,000 (its ``settings``); ``--max-nodes
3000000`` continues it."""

FINAL_MAX_NODES = {"dqn@32": 30_000_000}
"""Search nodes per layer when a run's best design is re-mapped, where an unlimited proof
is out of reach (``--final-max-nodes`` overrides it for every workload; elsewhere none).
DQN at batch 32, on the best iso design of seed 0 (8 x 21 PEs, 32/128/16-word RFs,
128 KiB): conv2 is proven optimal after 6.0 M nodes (72 CPU s), 30 % below the
heuristic's mapping; conv1 is not proven after 30 M nodes (790 CPU s), 5 % below the
heuristic's mapping and within 34 % of its optimum
(docs/benchmarks/shi2020_final_nodes_dqn32.txt, ``python -m
experiments.benchmarks.shi2020_inner_effort --point``). Each re-mapped figure carries
``all_layers_proven_optimal`` and ``worst_layer_gap``."""

BUDGETS = {"resnet50": 16}
"""Hardware evaluations per run where it differs from ``--budget``'s default (30): the
exact mapper proves ResNet-50's 24 unique layers in about 3 min per hardware point on
this machine's cores, against 5-60 s for the other workloads."""


def search_mapper(gap: float = 0.0, max_nodes: int | None = None) -> dict[str, Any]:
    """The inner search of step 3: the exact mapper (with ``gap`` > 0 proven within ``1 +
    gap``; with ``max_nodes``, stopped after that many search nodes per layer)."""
    out: dict[str, Any] = dict(EXACT_MAPPER)
    if gap:
        out["gap"] = gap
    if max_nodes:
        out["max_nodes"] = max_nodes
    return out


STALE_GAP_FIELD = "stale_worst_layer_edp_over_mapper_bound"
"""Where :func:`restate_gap` keeps a figure's ``worst_layer_gap`` of the earlier meaning."""


def restate_gap(fig: dict[str, Any]) -> dict[str, Any]:
    """``fig`` (a :func:`figures` value) with ``worst_layer_gap`` in its meaning: the
    certified distance from the optimum, 0 when every layer is proven optimal. Figures
    written before commit af00e52 (the steps of the committed run: baseline and software
    only) computed it as the worst layer's EDP over the exact mapper's reported lower bound,
    minus 1, even for a proven layer, where the bound is only the search's start and says
    nothing of the mapping (0.24-9.48 beside ``all_layers_proven_optimal: true``). A proven
    figure's gap is 0 by definition (its mapping is the optimum); the old number is kept
    under :data:`STALE_GAP_FIELD`. Unproven figures, and proven ones at 0, come back as
    they are."""
    gap = fig.get("worst_layer_gap")
    if not fig.get("all_layers_proven_optimal") or gap in (0, 0.0) or STALE_GAP_FIELD in fig:
        return fig
    return {**fig, "worst_layer_gap": 0.0, STALE_GAP_FIELD: gap}


def figures(spec: str, point: dict[str, Any], mapper: Any, tech: str = TECH) -> dict[str, Any]:
    """Network energy, latency, EDP of ``point`` running ``spec`` with ``mapper``, with the
    mapper's verdict: ``all_layers_proven_optimal`` (every layer's mapping proven optimal)
    and ``worst_layer_gap``, the certified bound on how far the network's worst layer may be
    from its optimum (the nested evaluator's ``certified_gap``: 0 when every layer is
    proven, else the worst unproven layer's EDP over its search's least open bound, minus
    1; ``None`` where such a layer has no bound)."""
    t = time.perf_counter()
    ev = NestedEvaluator("spatial", spec, mapper, fixed=fixed(tech))(point)
    if ev.status.value != "ok":
        raise RuntimeError(f"{spec} on {point}: {ev.status.value}: {ev.reason}")
    m = ev.metrics
    # the nested evaluator's certificate (evaluators.nested.proof_metrics): the worst
    # layer's EDP over its search's least open bound, 0 when every layer is proven;
    # None where an unproven layer has no bound
    gap = m["certified_gap"]
    if m["all_layers_proven"] == 1.0 and gap != 0.0:
        raise RuntimeError(f"{spec} on {point}: every layer proven but certified gap {gap}")
    return {"edp_uj_ms": m["edp_uj_ms"], "energy_uj": m["energy_uj"], "latency_ms": m["latency_ms"],
            "utilization": m["utilization"], "area_mm2": m["area_mm2"], "seconds": time.perf_counter() - t,
            "all_layers_proven_optimal": m["all_layers_proven"] == 1.0,
            "worst_layer_gap": gap if math.isfinite(gap) else None}


def bound(spec: str, pes: int, tech: str = TECH) -> dict[str, float]:
    """The compulsory-traffic lower bound of the network on an Eyeriss-like array of
    ``pes`` PEs (same MAC and DRAM energies, same DRAM bandwidth and clock)."""
    side = math.isqrt(pes)
    pe_x, pe_y = (EYERISS.pe_x, EYERISS.pe_y) if pes == EYERISS_PES else (side, pes // side)
    arch = SpatialArray(**{**EYERISS_POINT, "pe_x": pe_x, "pe_y": pe_y, **fixed(tech)}).to_arch()
    layers = zoo.resolve(spec)
    e_pj = sum(energy_lower_bound_pj(layer, arch) * layer.repeat for layer in layers)
    cyc = sum(latency_lower_bound_cycles(layer, arch) * layer.repeat for layer in layers)
    e_uj, ms = e_pj * 1e-6, cyc / (arch.clock_mhz * 1e3)
    return {"edp_uj_ms": e_uj * ms, "energy_uj": e_uj, "latency_ms": ms, "pes": pe_x * pe_y}


def _rs_check_setup() -> tuple[Any, Any, Any, list]:
    """What :func:`rs_check` maps: Eyeriss v1's architecture, the exact mapper within the
    row-stationary set, the cost model, AlexNet CONV1-5 at rs_baseline's batch."""
    from evaluators.loopnest import LOOPNEST
    from experiments.validation import rs_baseline
    from mappers.exact import ExactMapper
    from mappers.zoo import alexnet_convs

    return (eyeriss_v1().to_arch(), ExactMapper(constraints="row-stationary"), LOOPNEST,
            alexnet_convs(batch=rs_baseline.BATCH))


def rs_check_scopes() -> ProofScopes:
    """The space :func:`rs_check`'s row-stationary optima are proven over, per layer,
    computed from its mapper without mapping (table.md's baseline-check caption)."""
    arch, mapper, cost, layers = _rs_check_setup()
    scopes = ProofScopes("layer")
    for layer in layers:
        scopes.announce("the RS check", layer.name, mapper, layer, arch, cost, "edp")
    return scopes


def rs_check() -> dict[str, Any]:
    """Step 0: the row-stationary optimum of AlexNet CONV1-5 (batch 4, Eyeriss's normalized
    table, as the chip's figures are in its units) against JSSC 2017 Table V: latency and
    GLB / DRAM accesses, per layer, ours / published."""
    from experiments.validation import rs_baseline

    arch, mapper, cost, layers = _rs_check_setup()
    rows = {}
    for layer in layers:
        name = layer.name
        r = mapper.map(layer, arch, cost, "edp")
        ours, pub = rs_baseline.figures(layer, arch, r.mapping), rs_baseline.published(name)
        rows[name] = {k: {"ours": ours[k], "published": pub[k], "ratio": ours[k] / pub[k]}
                      for k in ("latency_ms", "onchip_energy_uj", "glb_mb", "dram_mb") if pub.get(k)}
    return rows


def study_name(workload: str, mode: str, optimizer: str, tag: str, seed: int) -> str:
    """The name of the study of one outer search (its trials are a search record's)."""
    return f"{workload}-{mode}-{optimizer}{tag}-s{seed}"


TRIAL_TIMEOUT_S = 3600.0
"""Wall seconds after which a hardware evaluation is stopped and its trial FAILED."""


def run_study(workload: str, spec: str, optimizer: str, seed: int, mode: str, budget: int, mapper: Any,
              storage: str, workers: int, tech: str = TECH, tag: str = "", stop_after: int | None = None,
              timeout_s: float | None = TRIAL_TIMEOUT_S) -> dict[str, Any]:
    """Run (or resume) one outer search; returns its best-so-far EDP after each evaluation,
    the best point, the best trial's figures where every one of its layers was proven
    optimal (else ``None``: the caller re-maps it) and the evaluation time in seconds (the
    trials' stored wall times, so a resumed run reports the same figure). ``stop_after``
    stops the search of ``budget`` evaluations after its first ``stop_after`` (the same
    study and settings, so a later call with the whole budget resumes it). Only the study's
    first ``budget`` (or ``stop_after``) trials by number are read: a study that a longer
    search of the same settings extended further (the budget sweep) gives the same result
    for them, since no proposal depends on the total budget (:data:`VARIANTS`). With
    ``timeout_s=None`` and one worker the trials run in this process (tests)."""
    from experiments.study import Study

    registry_name, options = variant(optimizer)
    study = Study.create(
        study_name(workload, mode, optimizer, tag, seed), hardware_space(mode), {"edp_uj_ms": "min"},
        "nested", registry_name, optimizer_options=options,
        evaluator_options={"accelerator": "spatial", "workload": spec, "mapper": mapper, "fixed": fixed(tech)},
        storage=storage, seed=seed,
    )
    n = budget if stop_after is None else min(budget, stop_after)
    study.optimize(n, workers=workers, progress=False, timeout_s=timeout_s)
    best, best_t, curve, failed, proven, mapped = np.inf, None, [], 0, 0, 0
    trials = sorted((t for t in study.trials if t.number < n), key=lambda r: r.number)
    for t in trials:
        v = t.metrics.get("edp_uj_ms") if t.status.value == "COMPLETE" else None
        failed += v is None
        if v is not None:
            if "layers_proven" not in t.metrics:
                raise ValueError(f"trial {t.number} of study {study.name!r} has no 'layers_proven' metric: it was "
                                 "evaluated before the nested evaluator gave one; run it in a new --out")
            mapped += len(t.info.get("breakdown", {}).get("layers", []))
            proven += int(t.metrics["layers_proven"])
        if v is not None and v < best:
            best, best_t = v, t
        curve.append(best)
    seconds = [float(t.wall_time_s or 0.0) for t in trials]
    # a proposal the study rejected unevaluated (beyond the space's known constraints)
    # used no CPU; any other trial without CPU time leaves the search's sum unknown
    cpus = [0.0 if t.cpu_time_s is None and t.status.value == "INFEASIBLE" else t.cpu_time_s for t in trials]
    infeasible = sum(t.status.value == "INFEASIBLE" for t in trials)
    metrics = None
    if best_t is not None:
        if best_t.metrics.get("all_layers_proven") == 1.0:
            m = best_t.metrics
            metrics = {k: m[k] for k in ("edp_uj_ms", "energy_uj", "latency_ms", "utilization", "area_mm2")}
            metrics.update(seconds=best_t.wall_time_s, all_layers_proven_optimal=True, worst_layer_gap=0.0)
    return {"curve": curve, "best_point": dict(best_t.params) if best_t else None, "best_metrics": metrics,
            "failed": failed, "infeasible": infeasible, "layer_mappings": mapped, "layer_mappings_proven": proven,
            "trial_seconds": seconds, "seconds": float(sum(seconds)), "trials": trials,
            "trial_cpu_seconds": cpus,
            "cpu_seconds": None if any(c is None for c in cpus) else float(sum(cpus))}


RUN_FIELDS = ("curve", "best_point", "best_metrics", "failed", "infeasible", "layer_mappings",
              "layer_mappings_proven", "trial_seconds", "seconds", "trial_cpu_seconds", "cpu_seconds")
"""A finished search's record. ``failed``: trials without an EDP (INFEASIBLE or FAILED), the
numerator of the infeasible share; ``infeasible``: the INFEASIBLE ones among them (for
``bo-reject`` the proposals beyond the resources, rejected unevaluated). The records
written before the comparison lack ``infeasible``, ``trial_cpu_seconds`` and
``cpu_seconds`` (their trials did not keep CPU time); readers take ``failed`` and ``None``."""


KINDS = {"step": "shi2020.step", "rs_check": "shi2020.rs_check", "search": "shi2020.search",
         "remap": "shi2020.remap", "inner_bo": "shi2020.inner_bo"}
"""The kinds of this reproduction's records (:mod:`experiments.records`): a deterministic
step (baseline, software only: :func:`step_settings`), the row-stationary check, a
finished outer search (:func:`search_settings`, value :data:`RUN_FIELDS`), a re-map of a
search's best design (:func:`remap_settings`, value :func:`figures`'s) and one seed of the
inner-BO ablation (:func:`inner_bo_settings`)."""

RS_CHECK_SETTINGS = {"check": "alexnet-conv1-5-vs-jssc2017-table-v", "mapper": RS_MAPPER, "batch": 4}


def step_settings(step: str, workload: str, spec: str, tech: str) -> dict[str, Any]:
    """The settings of a deterministic step's record (``baseline`` or ``software_only``)."""
    return {"step": step, "workload": workload, "spec": spec, "tech": tech}


def search_settings(workload: str, spec: str, optimizer: str, seed: int, mode: str, budget: int, mapper: Any,
                    tech: str) -> dict[str, Any]:
    """The settings of one finished outer search's record: everything its result depends
    on (workload and spec, energy table, resources, optimizer, seed, budget, inner mapper);
    for an optimizer other than ``constrained-bo`` also its registry name and options
    (:data:`VARIANTS`; constrained BO's records keep the settings they were written under,
    its options being :data:`BO_OPTIONS` at every budget they used)."""
    out = {"workload": workload, "spec": spec, "tech": tech, "mode": mode, "optimizer": optimizer, "seed": seed,
           "budget": budget, "mapper": mapper}
    if optimizer != "constrained-bo":
        reg, opts = variant(optimizer)
        out["optimizer_registry"], out["optimizer_options"] = reg, opts
    return out


def remap_settings(search: str, workload: str, spec: str, tech: str, mode: str, optimizer: str, seed: int,
                   point: dict[str, Any], mapper: Any) -> dict[str, Any]:
    """The settings of a re-map's record: the design ``point`` of the ``search`` (``exact``:
    step 3's, ``inner-bo``: step 5's) of that workload, mode, optimizer and seed, mapped by
    ``mapper`` (a limited re-map is another record than an unlimited one)."""
    return {"search": search, "workload": workload, "spec": spec, "tech": tech, "mode": mode,
            "optimizer": optimizer, "seed": seed, "point": plain(dict(point)), "mapper": mapper}


def inner_bo_settings(workload: str, spec: str, seed: int, outer_budget: int, inner: Any) -> dict[str, Any]:
    """The settings of one seed of step 5 (iso resources, outer constrained BO)."""
    return {"workload": workload, "spec": spec, "tech": TECH, "mode": "iso", "optimizer": "constrained-bo",
            "seed": seed, "outer_budget": outer_budget, "inner": inner}


def _best_trial(curve: list[float]) -> int:
    """The number of a search's best trial: the first evaluation that reached the curve's end."""
    return curve.index(curve[-1])


def search_run(workload: str, spec: str, optimizer: str, seed: int, mode: str, budget: int, mapper: Any,
               storage: str, workers: int, tech: str, tag: str, store: RecordStore,
               stop_after: int | None = None, timeout_s: float | None = TRIAL_TIMEOUT_S) -> dict[str, Any]:
    """One outer search's record (:data:`RUN_FIELDS`): from ``store`` when an earlier
    invocation finished it, else :func:`run_study` (which resumes its SQLite study, up to
    ``stop_after`` evaluations if given) and recorded, with its trials, once the study has
    its whole budget. The record is what the decomposition needs of a run, so a run
    survives the loss of ``studies.db`` (a new checkout) once its record is kept
    (``--cache-from``)."""
    settings = search_settings(workload, spec, optimizer, seed, mode, budget, mapper, tech)
    rec = store.record(KINDS["search"], settings)
    if rec is not None:
        return dict(rec.value)
    r = run_study(workload, spec, optimizer, seed, mode, budget, mapper, storage, workers, tech, tag, stop_after,
                  timeout_s)
    out = plain({k: r[k] for k in RUN_FIELDS})
    if len(r["curve"]) >= budget:
        # the trials' CPU seconds summed (None where a trial has none: a timeout, a dead
        # worker, or a study evaluated before trials recorded their CPU time)
        store.put(KINDS["search"], settings, out, wall_s=r["seconds"], cpu_s=r["cpu_seconds"],
                  trials=trials_ref(study_name(workload, mode, optimizer, tag, seed),
                                    [t.number for t in r["trials"]], storage))
    return dict(out)


def final_nodes_of(workload: str, args: Any) -> int:
    """Search nodes per layer when ``workload``'s best designs are re-mapped (0: no limit):
    ``--final-max-nodes`` if given, else :data:`FINAL_MAX_NODES`."""
    if args.final_max_nodes is not None:
        return args.final_max_nodes
    return FINAL_MAX_NODES.get(workload, 0)


def final_mapper(workload: str, args: Any) -> dict[str, Any]:
    """The mapper that re-maps each run's best design for the reported figures: the exact
    mapper, with :func:`final_nodes_of`'s node limit (their ``all_layers_proven_optimal``
    and ``worst_layer_gap`` say how close they are when it stops one)."""
    return search_mapper(0.0, final_nodes_of(workload, args))


def search_scopes(spec: str, mapper: dict[str, Any], tech: str, points: list[dict[str, Any]], group: str,
                  scopes: ProofScopes | None = None, row: str = "") -> ProofScopes:
    """The space ``mapper`` (a :func:`search_mapper` value) proves the layers of ``spec``
    over on each of ``points`` (a search's best designs, one per seed) under energy table
    ``tech``, without mapping, recorded under ``group`` as rows ``f"{row}seed {i}"`` (into
    ``scopes`` if given): what "layer mappings proven optimal" covers (a node limit stops
    a proof, it does not change its space)."""
    scopes = ProofScopes("search") if scopes is None else scopes
    ev = NestedEvaluator("spatial", spec, mapper, fixed=fixed(tech))
    for seed, point in enumerate(points):
        if point is not None:   # a run that found no design proves nothing
            scopes.announce_nested(group, f"{row}seed {seed}", ev, point)
    return scopes


def _run_tables(results: dict[str, Any], tables: tuple[str, ...] = ("workloads", "ablation_table")):
    """``(tech, workload, entry)`` of each workload of a results.json's ``tables`` (the
    main one under its settings' energy table, the ablation under the ablation's)."""
    st = results["settings"]
    for table, tech in (("workloads", st["tech"]), ("ablation_table", st.get("ablation_tech", ABLATION_TECH))):
        if table in tables:
            for workload, res in (results.get(table) or {}).items():
                yield tech, workload, res


def announced_scopes(results: dict[str, Any]) -> ProofScopes:
    """The spaces the searches of ``results`` (a run's results.json) prove their layer
    mappings over, by workload (energy-table tag), resources and optimizer:
    :func:`search_scopes` of its settings' search mapper on each run's best design (the
    ``best_points`` it keeps), without mapping: what a committed output's "proven optimal"
    covers."""
    st = results["settings"]
    mapper = search_mapper(st["gap"], st["max_nodes"])
    scopes = ProofScopes("search")
    for tech, workload, res in _run_tables(results):
        tag = "" if tech == TECH else f"-{tech}"
        for mode, by_opt in res.get("both", {}).items():
            for opt, s in by_opt.items():
                search_scopes(res["spec"], mapper, tech, s["best_points"], f"{workload}{tag} {mode} {opt}", scopes)
    return scopes


def budget_of(workload: str, args: Any) -> int:
    """Hardware evaluations per run: ``--budget`` if given, else :data:`BUDGETS` or 30
    (8 with ``--quick``)."""
    if args.budget:
        return args.budget
    return 8 if args.quick else BUDGETS.get(workload, 30)


def _change(x: float, base: float) -> float:
    return x / base - 1.0


def _first_below(curve: list[float], target: float) -> int | None:
    return next((i + 1 for i, v in enumerate(curve) if v < target), None)


def sample_std(x: Any) -> float | None:
    """The sample standard deviation (ddof = 1) of ``x``; ``None`` for fewer than 2 values."""
    x = np.asarray(x, dtype=float)
    return float(x.std(ddof=1)) if x.size >= 2 else None


def infeasible_share(runs: list[dict[str, Any]]) -> float | None:
    """Share of the runs' trials that gave no design (INFEASIBLE or FAILED: a search
    record's ``failed``) over all their trials (the curves' lengths), from the trials."""
    n = sum(len(r["curve"]) for r in runs)
    return sum(r["failed"] for r in runs) / n if n else None


def summarize_runs(runs: list[dict[str, Any]], base: dict[str, float], sw: dict[str, float]) -> dict[str, Any]:
    """Mean and sample std (ddof = 1, over ``n`` seeds) of each run's best design
    (re-mapped exactly) against the baseline; evaluations until the search beat the
    baseline and the software-only EDP; the infeasible share of the proposals."""
    out: dict[str, Any] = {"n": len(runs)}
    for k in ("edp_uj_ms", "energy_uj", "latency_ms"):
        ch = np.array([_change(r["best"][k], base[k]) for r in runs])
        out[k] = {"change_mean": float(ch.mean()), "change_std": sample_std(ch), "std_ddof": 1, "n": len(runs),
                  "changes": ch.tolist(), "values": [r["best"][k] for r in runs]}
    out["evals_to_beat_baseline"] = [_first_below(r["curve"], base["edp_uj_ms"]) for r in runs]
    out["evals_to_beat_software_only"] = [_first_below(r["curve"], sw["edp_uj_ms"]) for r in runs]
    out["seconds"] = [r["seconds"] for r in runs]
    out["failed_trials"] = [r["failed"] for r in runs]
    out["trials"] = [len(r["curve"]) for r in runs]
    out["infeasible_share"] = infeasible_share(runs)
    out["cpu_seconds"] = [r.get("cpu_seconds") for r in runs]
    out["layer_mappings_proven_share"] = (sum(r.get("layer_mappings_proven", 0) for r in runs)
                                          / max(sum(r.get("layer_mappings", 0) for r in runs), 1))
    out["best_points"] = [r["best_point"] for r in runs]
    out["final_proven"] = [bool(r["best"].get("all_layers_proven_optimal")) for r in runs]
    out["final_worst_layer_gap"] = [0.0 if ok else r["best"].get("worst_layer_gap")
                                    for ok, r in zip(out["final_proven"], runs)]
    out["curves"] = [r["curve"] for r in runs]
    return out


def plot(res: dict[str, Any], path: Path, title: str) -> None:
    """Best-so-far EDP / baseline EDP vs hardware evaluations, median and range over seeds,
    per resource mode and optimizer, with the software-only and bound levels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = res["baseline"]["edp_uj_ms"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, by_opt in res["both"].items():
        for opt, s in by_opt.items():
            n = max(len(c) for c in s["curves"])
            arr = np.array([np.pad(np.asarray(c, float), (0, n - len(c)), mode="edge") for c in s["curves"]]) / base
            x = np.arange(1, n + 1)
            ax.plot(x, np.median(arr, axis=0), label=f"{opt}, {mode}")
            ax.fill_between(x, arr.min(axis=0), arr.max(axis=0), alpha=0.15)
        ax.axhline(res["bound"][mode]["edp_uj_ms"] / base, lw=0.8, ls=":", color="gray")
    ax.axhline(1.0, color="k", lw=0.8, ls="--", label="baseline: Eyeriss v1, row-stationary")
    ax.axhline(res["software_only"]["edp_uj_ms"] / base, color="k", lw=0.8, ls="-.", label="software only")
    ax.set_xlabel("hardware evaluations")
    ax.set_ylabel("best EDP / baseline EDP")
    ax.set_title(title + " (dotted: bounds)", fontsize=9)
    ax.set_ylim(top=min(ax.get_ylim()[1], 2.0))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


class FiguresEvaluator:
    """:func:`figures` as an evaluator of the study engine's executors: ``point ->``
    :class:`~evaluators.base.Evaluation` whose ``info`` holds the figures and the CPU
    seconds they took in the process that mapped them."""

    def __init__(self, spec: str, mapper: Any, tech: str = TECH) -> None:
        self.spec, self.mapper, self.tech = spec, mapper, tech

    def __call__(self, point: dict[str, Any]) -> Evaluation:
        c = time.process_time()
        f = plain(figures(self.spec, point, self.mapper, self.tech))
        return Evaluation(metrics={"edp_uj_ms": f["edp_uj_ms"]}, info={"figures": f, "cpu_s": time.process_time() - c})


def remap(spec: str, jobs: list[tuple[dict[str, Any], dict[str, Any] | None]], mapper: Any, tech: str,
          workers: int, store: RecordStore) -> list[dict[str, Any]]:
    """:func:`figures` of every design point of ``jobs`` (``(remap settings, trials)`` each,
    the point in the settings) without a record in ``store``, on up to ``workers`` worker
    processes of the study engine (:class:`~experiments.executors.ProcessExecutor`; inline
    with one), each recorded as it finishes (so a stopped run keeps the finished ones);
    returns every job's figures. The re-mappings are independent and deterministic, so
    running them side by side changes only the wall time: the seeds' best designs of a
    workload are re-mapped together rather than one after another on one core."""
    from experiments.executors import InlineExecutor, ProcessExecutor, Task, map_tasks

    todo = [i for i, (settings, _) in enumerate(jobs) if not store.has(KINDS["remap"], settings)]
    if todo:
        ev = FiguresEvaluator(spec, mapper, tech)
        n = min(workers, len(todo))
        with (InlineExecutor(ev) if n <= 1 else ProcessExecutor(ev, workers=n)) as executor:
            for res in map_tasks(executor, (Task(i, dict(jobs[i][0]["point"]), 0) for i in todo)):
                if res.status.value != "ok":
                    raise RuntimeError(f"{spec} on {jobs[res.number][0]['point']}: {res.status.value}: {res.reason}")
                settings, trials = jobs[res.number]
                store.put(KINDS["remap"], settings, res.info["figures"], wall_s=res.wall_time_s,
                          cpu_s=res.info["cpu_s"], trials=trials)
    return [store.get(KINDS["remap"], settings) for settings, _ in jobs]


def decomposition(workload: str, spec: str, args: Any, storage: str, store: RecordStore,
                  tech: str = TECH, modes: tuple[str, ...] = MODES, seeds: int | None = None,
                  optimizers: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Steps 1-4 of one workload under energy table ``tech``."""
    tag = "" if tech == TECH else f"-{tech}"
    seeds = args.seeds if seeds is None else seeds
    base = store.compute(KINDS["step"], step_settings("baseline", workload, spec, tech),
                         lambda: plain(figures(spec, EYERISS_POINT, RS_MAPPER, tech)))
    sw = store.compute(KINDS["step"], step_settings("software_only", workload, spec, tech),
                       lambda: plain(figures(spec, EYERISS_POINT, EXACT_MAPPER, tech)))
    res: dict[str, Any] = {"spec": spec, "baseline": base, "software_only": sw, "both": {}, "bound": {}}
    print(f"{workload}{tag}: baseline EDP {base['edp_uj_ms']:.5g} uJ*ms (energy {base['energy_uj']:.4g} uJ, latency "
          f"{base['latency_ms']:.4g} ms); software only {100 * _change(sw['edp_uj_ms'], base['edp_uj_ms']):+.1f} %",
          flush=True)
    for mode in modes:
        res["bound"][mode] = bound(spec, EYERISS_PES if mode == "iso" else FREE_MAX_PES, tech)
        res["both"][mode] = {}
        for opt in () if args.steps_only else (optimizers or tuple(args.optimizers)):
            runs = [search_run(workload, spec, opt, seed, mode, budget_of(workload, args),
                               search_mapper(args.gap, args.max_nodes), storage, args.workers, tech, tag, store)
                    for seed in range(seeds)]
            final = final_mapper(workload, args)
            jobs = [(remap_settings("exact", workload, spec, tech, mode, opt, seed, r["best_point"], final),
                     trials_ref(study_name(workload, mode, opt, tag, seed), [_best_trial(r["curve"])], storage))
                    for seed, r in enumerate(runs)]
            for (settings, trials), r in zip(jobs, runs):   # a best trial proven optimal in every layer is final
                if r["best_metrics"] and not store.has(KINDS["remap"], settings):
                    store.put(KINDS["remap"], settings, r["best_metrics"], wall_s=r["best_metrics"]["seconds"],
                              trials=trials, note="the search's best trial, proven optimal in every layer")
            for r, best in zip(runs, remap(spec, jobs, final, tech, args.workers, store)):
                r["best"] = best
            s = summarize_runs(runs, base, sw)
            res["both"][mode][opt] = s
            scopes = search_scopes(spec, search_mapper(args.gap, args.max_nodes), tech, s["best_points"],
                                   f"{workload}{tag} {mode} {opt}")
            beat = [x for x in s["evals_to_beat_baseline"] if x is not None]
            print(f"  {mode:4} {opt:15} EDP {100 * s['edp_uj_ms']['change_mean']:+6.1f} % "
                  f"+- {100 * (s['edp_uj_ms']['change_std'] or 0.0):.1f} (sample std, n={seeds}) vs baseline (energy "
                  f"{100 * s['energy_uj']['change_mean']:+.1f} %, latency {100 * s['latency_ms']['change_mean']:+.1f} %); "
                  f"beat it in {len(beat)}/{seeds} seeds (median {np.median(beat) if beat else float('nan'):.0f} "
                  f"evals); {np.mean(s['seconds']):.0f} s/run; {100 * s['layer_mappings_proven_share']:.1f} % of "
                  "layer mappings proven optimal, over the space on its best designs:", flush=True)
            print("\n".join(f"    {line}" for line in scopes.lines()), flush=True)
        b = res["bound"][mode]
        print(f"  {mode:4} bound           EDP {100 * _change(b['edp_uj_ms'], base['edp_uj_ms']):+6.1f} %", flush=True)
    if tech == TECH and paper_change(workload) is not None:
        res["against_paper"] = against_paper(res, paper_change(workload))
    return res


def inner_bo_ablation(args: Any, storage: str, store: RecordStore) -> dict[str, Any]:
    """Step 5: the paper's inner loop (constrained BO over each layer's mappings, capacity
    unknown) under the same outer BO, on ``args.inner_bo_workload`` with iso resources."""
    workload = args.inner_bo_workload
    spec = (QUICK_WORKLOADS if args.quick else WORKLOADS).get(workload, (workload, ""))[0]
    inner = {"name": "constrained-bo", "budget": args.inner_bo_budget, "capacity": "unknown",
             "options": {"n_init": max(3, args.inner_bo_budget // 5), "pool_size": 300}}
    out: dict[str, Any] = {"workload": workload, "spec": spec, "outer_budget": args.inner_bo_outer_budget,
                           "inner_budget": args.inner_bo_budget, "runs": []}
    for seed in range(args.inner_bo_seeds):
        settings = inner_bo_settings(workload, spec, seed, args.inner_bo_outer_budget, inner)
        row = store.compute(KINDS["inner_bo"], settings,
                            lambda seed=seed: plain(_inner_bo_seed(args, spec, inner, seed, storage, store)),
                            trials=trials_ref(study_name(workload, "iso", "constrained-bo", "-innerbo", seed),
                                              range(args.inner_bo_outer_budget), storage))
        out["runs"].append(row)
        print(f"  inner BO seed {seed}: best EDP {row['inner_bo_best_edp']:.5g} vs exact inner "
              f"{row['exact_best_edp']:.5g}; {row['inner_infeasible']}/{row['inner_proposals']} inner proposals "
              f"infeasible; {row['seconds']:.0f} s vs {row['exact_seconds']:.0f} s", flush=True)
    return out


def _inner_bo_seed(args: Any, spec: str, inner: dict[str, Any], seed: int, storage: str,
                   store: RecordStore) -> dict[str, Any]:
    """One seed of step 5: the inner-BO outer search beside the first ``n`` evaluations of
    step 3's own search (the same study: same name, space, inner mapper and seed, so nothing
    is evaluated twice). Those come from step 3's record when an earlier invocation finished
    it, else from its study run to ``n`` evaluations only (step 3 resumes it later)."""
    workload, n = args.inner_bo_workload, args.inner_bo_outer_budget
    r = run_study(workload, spec, "constrained-bo", seed, "iso", n, inner, storage, args.workers, TECH, "-innerbo")
    full = search_run(workload, spec, "constrained-bo", seed, "iso", max(n, budget_of(workload, args)),
                      search_mapper(args.gap, args.max_nodes), storage, args.workers, TECH, "", store,
                      stop_after=n)
    proposed = infeasible = 0
    for t in r["trials"]:
        for layer in t.info.get("breakdown", {}).get("layers", []):
            mi = layer.get("mapping_info", {})
            proposed += layer.get("evaluated", 0) or 0
            infeasible += len(mi.get("infeasible_trials", []) or [])
    final = final_mapper(args.inner_bo_workload, args)
    settings = remap_settings("inner-bo", workload, spec, TECH, "iso", "constrained-bo", seed, r["best_point"] or {},
                              final)
    trials = trials_ref(study_name(workload, "iso", "constrained-bo", "-innerbo", seed), [_best_trial(r["curve"])],
                        storage)
    best_exact_map = store.compute(KINDS["remap"], settings, lambda: plain(figures(spec, r["best_point"], final)),
                                   trials=trials)
    return {"seed": seed, "inner_bo_best_edp": r["curve"][-1], "exact_best_edp": full["curve"][:n][-1],
            "inner_bo_design_remapped_exactly_edp": best_exact_map["edp_uj_ms"],
            "inner_proposals": proposed, "inner_infeasible": infeasible,
            "failed_hardware_points": r["failed"], "seconds": r["seconds"],
            "exact_seconds": float(sum(full["trial_seconds"][:n]))}


EARLIER_DEFAULTS = {"max_nodes": 3_000_000, "final_max_nodes": 0}
"""Settings that results.json files written before they were recorded ran with (every
such run used the defaults of the time, as their run.log says)."""


def _recorded_final_nodes(settings: dict[str, Any], workload: str) -> int:
    """A results.json's final node limit for ``workload``: one number for every workload
    in files written before :data:`FINAL_MAX_NODES`, a mapping since."""
    v = settings.get("final_max_nodes", EARLIER_DEFAULTS["final_max_nodes"])
    return v.get(workload, 0) if isinstance(v, dict) else v


def reusable(earlier: dict[str, Any] | None, settings: dict[str, Any], workload: str, spec: str) -> dict[str, Any] | None:
    """``workload``'s entry of an ``earlier`` results.json when it was finished (``both``
    has every mode this run searches, each with every optimizer and seed) under the same
    settings (spec, seeds, budget, optimizers, energy table, search gap and node limits),
    else ``None``."""
    if not earlier or workload not in earlier.get("workloads", {}):
        return None
    old, res = earlier["settings"], earlier["workloads"][workload]
    same = (res.get("spec") == spec and not old.get("quick") and not old.get("steps_only")
            and not settings["quick"] and not settings["steps_only"]
            and old.get("budgets", {}).get(workload) == settings["budgets"].get(workload)
            and all(old.get(k, EARLIER_DEFAULTS.get(k)) == settings[k]
                    for k in ("seeds", "optimizers", "gap", "tech", "max_nodes"))
            and _recorded_final_nodes(old, workload) == _recorded_final_nodes(settings, workload))
    done = all(len(res.get("both", {}).get(m, {}).get(o, {}).get("curves", [])) == settings["seeds"]
               for m in settings["modes"] for o in settings["optimizers"])
    return res if same and done else None


def restate_reused(res: dict[str, Any]) -> dict[str, Any]:
    """A reused results.json entry in today's meanings: its steps' gaps (:func:`restate_gap`)
    and its summaries' stds as sample stds (ddof = 1) with ``n``, from the per-seed changes
    (entries written before were population stds)."""
    out = {**res, **{k: restate_gap(res[k]) for k in ("baseline", "software_only") if k in res}}
    out["both"] = {}
    for mode, by_opt in res.get("both", {}).items():
        out["both"][mode] = {}
        for opt, summ in by_opt.items():
            summ = dict(summ, n=len(summ["curves"]))
            for k in ("edp_uj_ms", "energy_uj", "latency_ms"):
                summ[k] = dict(summ[k], change_std=sample_std(summ[k]["changes"]), std_ddof=1,
                               n=len(summ[k]["changes"]))
            out["both"][mode][opt] = summ
    return out


def missing_search_records(workload: str, spec: str, args: Any, store: RecordStore,
                           modes: tuple[str, ...]) -> bool:
    """Whether any search of ``workload``'s step 3 (each mode, optimizer and seed) lacks its
    record in ``store`` (or its fallbacks): a results.json entry taken with ``--reuse`` is
    then not backed by the records (DQN at batch 1: finished before the steps cache was
    committed, in a studies.db and cache that were never committed)."""
    return not all(store.has(KINDS["search"], search_settings(workload, spec, opt, seed, mode, budget_of(workload, args),
                                                               search_mapper(args.gap, args.max_nodes), TECH))
                   for mode in modes for opt in args.optimizers for seed in range(args.seeds))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="coexplore reproduce shi2020", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ResNet-50's first 4 layers and DQN, 2 seeds, "
                    "8 evaluations, iso only, small ablations: minutes")
    ap.add_argument("--workloads", nargs="+", default=None, help=f"subset of {list(WORKLOADS)}")
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS), choices=list(VARIANTS),
                    help="outer optimizers of step 3 (VARIANTS: the comparison of issue 42)")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None, help="hardware evaluations per run")
    ap.add_argument("--mode", choices=["iso", "free", "both"], default=None)
    ap.add_argument("--gap", type=float, default=0.0, help="the exact mapper's proven gap during the search")
    ap.add_argument("--max-nodes", type=int, default=MAX_NODES,
                    help="the exact mapper's search nodes per layer during the search (0: no limit)")
    ap.add_argument("--inner-bo-workload", default="dqn")
    ap.add_argument("--inner-bo-seeds", type=int, default=None)
    ap.add_argument("--inner-bo-outer-budget", type=int, default=None)
    ap.add_argument("--inner-bo-budget", type=int, default=None, help="mappings per layer and hardware point")
    ap.add_argument("--ablation-workloads", nargs="*", default=None)
    ap.add_argument("--skip", nargs="*", default=[], choices=["rs-check", "decomposition", "inner-bo", "table-ablation"])
    ap.add_argument("--final-max-nodes", type=int, default=None,
                    help="the exact mapper's search nodes per layer when a run's best design is re-mapped, "
                         "for every workload (0: no limit, proven optimal; default: FINAL_MAX_NODES's, "
                         "else no limit)")
    ap.add_argument("--steps-only", action="store_true",
                    help="only the deterministic steps (the RS check, baseline, software only, bounds), no searches")
    ap.add_argument("--cache-from", nargs="*", type=Path, default=[],
                    help="record stores of earlier invocations (e.g. the committed "
                         "docs/reproduction/results/shi2020/records): their finished steps, searches and re-maps "
                         "are taken (and copied into OUT/records) where this run's own records lack them")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="an earlier results.json: its workloads finished with the same settings are taken as they "
                         "are (marked reused_from_earlier_invocation) instead of being run again")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/shi2020"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    q = args.quick
    table = QUICK_WORKLOADS if q else WORKLOADS
    workloads = {w: table.get(w, WORKLOADS.get(w, (w, "as given"))) for w in (args.workloads or table)}
    args.seeds = args.seeds or (2 if q else 5)
    args.inner_bo_seeds = args.inner_bo_seeds or (1 if q else 2)
    args.inner_bo_outer_budget = args.inner_bo_outer_budget or (3 if q else 8)
    args.inner_bo_budget = args.inner_bo_budget or (8 if q else 30)
    abl = [w for w in (args.ablation_workloads if args.ablation_workloads is not None
                       else (["dqn"] if q else ABLATION_WORKLOADS)) if w in workloads]
    modes = tuple(MODES if args.mode == "both" or (args.mode is None and not q) else [args.mode or "iso"])
    args.out.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{(args.out / 'studies.db').resolve()}"
    for old in [args.out / "steps.json", *args.cache_from]:
        if old.is_file():
            raise SystemExit(f"error: {old} is a steps.json of the format before the record store; convert it "
                             f"with python -m experiments.reproduce.migrate_records shi2020 {old} DIR/records")
    store = RecordStore(args.out / "records", fallbacks=args.cache_from)
    t0 = time.perf_counter()
    results: dict[str, Any] = {
        "settings": {"quick": q, "steps_only": args.steps_only, "seeds": args.seeds, "budgets": {w: budget_of(w, args) for w in workloads},
                     "optimizers": args.optimizers,
                     "modes": list(modes), "gap": args.gap, "max_nodes": args.max_nodes,
                     "final_max_nodes": {w: final_nodes_of(w, args) for w in workloads}, "tech": TECH, "ablation_tech": ABLATION_TECH,
                     "inner_bo": {"workload": args.inner_bo_workload, "seeds": args.inner_bo_seeds,
                                  "outer_budget": args.inner_bo_outer_budget, "inner_budget": args.inner_bo_budget},
                     "batches": {w: b for w, (_, b) in workloads.items()}},
        "workloads": {}, "ablation_table": {}}
    if "rs-check" not in args.skip:
        results["rs_check"] = store.compute(KINDS["rs_check"], RS_CHECK_SETTINGS, lambda: plain(rs_check()))
        lat = [v["latency_ms"]["ratio"] for v in results["rs_check"].values()]
        print(f"row-stationary on AlexNet CONV1-5 vs JSSC 2017 Table V: latency ours/published "
              f"{', '.join(f'{x:.2f}' for x in lat)}", flush=True)
    def save(complete: bool) -> None:
        # after every workload, so an interrupted run shows what it has (marked incomplete)
        results["complete"] = complete
        results["wall_seconds_this_invocation"] = time.perf_counter() - t0
        (args.out / "results.json").write_text(json.dumps(results, indent=1, default=float))
        write_table(results, args.out / "table.md", args)

    if "decomposition" not in args.skip:
        earlier = json.loads(args.reuse.read_text()) if args.reuse else None
        for wl, (spec, _) in workloads.items():
            kept = reusable(earlier, results["settings"], wl, spec)
            if kept is not None:
                missing = missing_search_records(wl, spec, args, store, modes)
                results["workloads"][wl] = {**restate_reused(kept), "reused_from_earlier_invocation": True,
                                            "search_records_missing": missing}
                print(f"{wl}: taken from {args.reuse} (finished earlier with the same settings)"
                      + ("; its search records are not in the record store, so its search figures are withdrawn until rerun" if missing
                         else ""), flush=True)
            else:
                results["workloads"][wl] = decomposition(wl, spec, args, storage, store, modes=modes)
            if withdrawn(results["workloads"][wl]):   # its curves are search figures without a record
                print(f"{wl}: no convergence plot ({WITHDRAWN})", flush=True)
            elif not args.steps_only:
                plot(results["workloads"][wl], args.out / f"convergence_{wl}.png",
                     f"{wl}: median and range over {args.seeds} seeds")
            save(False)
    if "table-ablation" not in args.skip and not args.steps_only:
        for wl in abl:
            results["ablation_table"][wl] = decomposition(wl, workloads[wl][0], args, storage, store,
                                                          tech=ABLATION_TECH, modes=("iso",),
                                                          seeds=min(args.seeds, 3), optimizers=("constrained-bo",))
            save(False)
    if "inner-bo" not in args.skip and not args.steps_only:
        results["inner_bo"] = inner_bo_ablation(args, storage, store)
    save(True)
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'}")
    return results


def _pct(x: float) -> str:
    return f"{100 * x:+.1f} %"


def _pm(s: dict[str, Any]) -> str:
    """Mean ± sample std (ddof = 1, from the per-seed changes, so an entry written with the
    earlier population std reads the same), n seeds."""
    sd = sample_std(s["changes"])
    return f"{100 * s['change_mean']:+.1f} % ± {'--' if sd is None else f'{100 * sd:.1f}'} (n={len(s['changes'])})"


def _infeasible(s: dict[str, Any]) -> str:
    """The infeasible share of a summary's proposals, from its trials (``failed_trials`` over
    the trials; an entry without ``trials`` ran the budget's number in each seed)."""
    failed = s.get("failed_trials")
    if failed is None:
        return "--"
    trials = s.get("trials") or [len(c) for c in s["curves"]]
    return f"{sum(failed)}/{sum(trials)} ({100 * sum(failed) / max(sum(trials), 1):.1f} %)"


def _proven(s: dict[str, Any]) -> str:
    """The share of the search's layer mappings proven optimal; and, where a run's best
    design was re-mapped with a node limit that stopped a layer, the certified worst gap."""
    out = f"{100 * s['layer_mappings_proven_share']:.1f} %"
    gaps = [g for g, ok in zip(s.get("final_worst_layer_gap", []), s.get("final_proven", [])) if not ok]
    if gaps:
        worst = "?" if any(g is None for g in gaps) else f"{100 * max(gaps):.0f} %"
        out += f"; final: {len(gaps)}/{len(s['final_proven'])} not proven, within {worst}"
    return out


def decomposition_rows(wl: str, res: dict[str, Any], batch: str, cmd: str, paper: bool = True) -> list[str]:
    base, sw = res["baseline"], res["software_only"]
    rows = []

    def row(step: str, mode: str, e: str, en: str, la: str, beat: str = "--", evals: str = "--", secs: str = "--",
            pap: str = "--", proven: str = "--", infeasible: str = "--") -> None:
        rows.append(f"| {wl} | {batch} | {step} | {mode} | {e} | {en} | {la} | {beat} | {evals} | {infeasible} "
                    f"| {secs} | {proven} | {pap} | `{cmd}` |")

    row("baseline: Eyeriss v1 + best row-stationary mapping", "--",
        f"{base['edp_uj_ms']:.4g} uJ·ms", f"{base['energy_uj']:.4g} uJ", f"{base['latency_ms']:.4g} ms",
        secs=f"{base['seconds']:.0f}")
    row("software only: Eyeriss v1 + best mapping", "--", _pct(_change(sw["edp_uj_ms"], base["edp_uj_ms"])),
        _pct(_change(sw["energy_uj"], base["energy_uj"])), _pct(_change(sw["latency_ms"], base["latency_ms"])),
        secs=f"{sw['seconds']:.0f}")
    for mode, by_opt in res["both"].items():
        for opt, s in by_opt.items():
            p = paper_change(wl) if paper and mode == "iso" and opt == "constrained-bo" else None
            pap = f"{100 * p:+.0f} %" if p is not None else "--"
            if withdrawn(res):   # a reused entry whose searches have no record: none of its figures is shown
                row(f"both: co-designed hardware ({opt}) + best mapping", mode, f"**{WITHDRAWN}**", "--", "--",
                    pap=pap)
                continue
            beat = [x for x in s["evals_to_beat_baseline"] if x is not None]
            row(f"both: co-designed hardware ({opt}) + best mapping", mode, _pm(s["edp_uj_ms"]),
                _pm(s["energy_uj"]), _pm(s["latency_ms"]), f"{len(beat)}/{len(s['evals_to_beat_baseline'])}",
                f"{np.median(beat):.0f}" if beat else "--", f"{np.mean(s['seconds']):.0f}",
                pap, _proven(s), _infeasible(s))
        b = res["bound"][mode]
        row(f"compulsory-traffic bound ({b['pes']} PEs)", mode, _pct(_change(b["edp_uj_ms"], base["edp_uj_ms"])),
            _pct(_change(b["energy_uj"], base["energy_uj"])), _pct(_change(b["latency_ms"], base["latency_ms"])))
    return rows


def against_paper_lines(results: dict[str, Any]) -> list[str]:
    """The table.md section of :func:`against_paper` (empty when no workload has a paper figure)."""
    rows = [(wl, res["against_paper"], withdrawn(res)) for wl, res in results["workloads"].items()
            if "against_paper" in res]
    if not rows:
        return []

    def f(x: float | None, pct: bool = False) -> str:
        return "--" if x is None else (f"{100 * (x - 1):+.1f} %" if pct else f"{x:.3f}")

    lines = ["", "Against the paper (iso resources, constrained BO): EDP over the baseline's as factors of the "
             "decomposition; ours = mapping x hardware; room used = share of the room between software only and "
             "the bound that the search realized.", "",
             "| workload | paper | ours (both) | shortfall (points) | mapping (software only / baseline) "
             "| hardware (both / software only) | bound / baseline | paper / bound | room used | reading |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for wl, a, gone in rows:
        short = "--" if a["shortfall_points"] is None else f"{100 * a['shortfall_points']:+.1f}"
        room = "--" if a["room_used"] is None else f"{100 * a['room_used']:.0f} %"
        ours, hardware = f(a["ours"], True), f(a["hardware"])
        reading = a["reading"]
        if gone:   # what the search gave is withdrawn; mapping, bound and paper have no search in them
            ours, short, hardware, room = f"**{WITHDRAWN}**", "--", "--", "--"
            reading = reading if reading == "below the bound" else "--"   # the others read the search
        lines.append(f"| {wl} | {f(a['paper'], True)} | {ours} | {short} | {f(a['mapping'])} "
                     f"| {hardware} | {f(a['bound'])} | {f(a['paper_over_bound'])} | {room} | {reading} |")
    return lines


def table_scopes(results: dict[str, Any], tables: tuple[str, ...] = ("workloads", "ablation_table")) -> ProofScopes:
    """The spaces table.md's "proven optimal" covers, by step, computed from ``results``
    (a run's results.json) without mapping: the searches' mapper and each workload's
    final re-map mapper (``final_max_nodes``) on every best design it keeps, and the
    deterministic steps' mappers (:data:`RS_MAPPER` for the baseline, :data:`EXACT_MAPPER`
    for software only) on :data:`EYERISS_POINT`, each under its table's energy table
    (``tables``: which of the run's tables, ``"workloads"`` the main one, ``"ablation_table"``
    the energy-table ablation)."""
    st = results["settings"]
    scopes = ProofScopes("step")
    for tech, workload, res in _run_tables(results, tables):
        for step, mapper in (("the baseline", RS_MAPPER), ("the software-only step", EXACT_MAPPER)):
            ev = NestedEvaluator("spatial", res["spec"], mapper, fixed=fixed(tech))
            scopes.announce_nested(step, f"{workload} {tech}", ev, EYERISS_POINT)
        final = search_mapper(0.0, (st.get("final_max_nodes") or {}).get(workload) or None)
        for step, mapper in (("the searches", search_mapper(st["gap"], st["max_nodes"])),
                             ("the final re-maps", final)):
            for mode, by_opt in res.get("both", {}).items():
                for opt, s in by_opt.items():
                    search_scopes(res["spec"], mapper, tech, s["best_points"], step, scopes,
                                  row=f"{workload} {tech} {mode} {opt} ")
    return scopes


def scope_sentence(scopes: ProofScopes, ran: str = "the mappers the steps ran") -> str:
    """``scopes`` (:func:`table_scopes`, :func:`rs_check_scopes`) as one sentence of
    table.md (``ran``: whose mappers they were computed from)."""
    return f"Proven optimal (computed from {ran}, no padded edge tiles): " + (
        scopes.bracketed() or "nothing (no step claims a proof)")


HEADER = ["| workload | batch | step | resources | EDP vs baseline | energy vs baseline | latency vs baseline "
          "| beat baseline (seeds) | evals to beat (median) | infeasible proposals | s/run "
          "| layer mappings proven optimal in the search (and the final re-maps) | paper (EDP) | command |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]


def write_table(results: dict, path: Path, args: Any) -> None:
    """table.md: the decomposition per workload (changes vs the baseline, negative =
    better), the energy-table ablation and the inner-BO ablation."""
    nodes = results["settings"].get("max_nodes", EARLIER_DEFAULTS["max_nodes"])
    cmd = ("coexplore reproduce shi2020" + (" --quick" if args.quick else "") + (" --steps-only" if args.steps_only else "")
           + (f" --max-nodes {nodes}" if nodes != MAX_NODES and not args.steps_only else ""))
    batches = results["settings"]["batches"]
    lines = ([] if results.get("complete", True) else
             ["**Incomplete run**: the workloads below are those finished so far.", ""])
    budgets = ", ".join(f"{w} {b}" for w, b in results["settings"]["budgets"].items())
    searched = ("the deterministic steps only, no hardware search" if results["settings"].get("steps_only") else
                f"{results['settings']['seeds']} seeds; hardware evaluations per run: {budgets}")
    cpu_h, cpu_known, cpu_runs = recorded_cpu(results)
    cpu = (f"CPU time of the searches, summed: {cpu_h:.1f} h over the {cpu_known} of {cpu_runs} searches that "
           "recorded it (the others' trials were run before trials kept CPU time)" if cpu_runs else
           "CPU time: no search")
    lines += [f"Energy table: {results['settings']['tech']}; {searched}; changes against the baseline, "
              "negative = better; ± is the sample standard deviation (ddof = 1) over the n seeds. Infeasible "
              "proposals: trials that gave no design (INFEASIBLE or FAILED) over all trials. "
              f"{scope_sentence(table_scopes(results, ('workloads',)))}. Wall time of the runs "
              f"recorded here, summed over workers: {recorded_hours(results):.1f} h (searches and deterministic "
              f"steps; not the final re-maps{withdrawn_phrase(results)}; not elapsed time: two workers ran side by "
              f"side). {cpu}.",
              "", *HEADER]
    for wl, res in results["workloads"].items():
        lines += decomposition_rows(wl, res, batches.get(wl, ""), cmd)
    if results.get("ablation_table"):
        lines += ["", f"Ablation: the same steps with the energy table {results['settings']['ablation_tech']} "
                  f"(iso resources, constrained BO). {scope_sentence(table_scopes(results, ('ablation_table',)))}.",
                  "", *HEADER]
        for wl, res in results["ablation_table"].items():
            lines += decomposition_rows(wl, res, batches.get(wl, ""), cmd, paper=False)
    lines += against_paper_lines(results)
    ib = results.get("inner_bo")
    if ib:
        lines += ["", f"The paper's inner loop: {ib['workload']}, iso resources, outer constrained BO with "
                  f"{ib['outer_budget']} hardware evaluations, inner constrained BO with {ib['inner_budget']} mappings "
                  "per layer, buffer capacity unknown; beside it the same outer search with the exact mapper inside.",
                  "", "| seed | best EDP, inner BO (uJ·ms) | best EDP, exact inner | inner-BO design re-mapped exactly "
                  "| inner proposals infeasible | s/run inner BO | s/run exact |", "|---|---|---|---|---|---|---|"]
        for r in ib["runs"]:
            lines.append(f"| {r['seed']} | {r['inner_bo_best_edp']:.5g} | {r['exact_best_edp']:.5g} | "
                         f"{r['inner_bo_design_remapped_exactly_edp']:.5g} | {r['inner_infeasible']}/{r['inner_proposals']} "
                         f"({100 * r['inner_infeasible'] / max(r['inner_proposals'], 1):.1f} %) | {r['seconds']:.0f} "
                         f"| {r['exact_seconds']:.0f} |")
    rc = results.get("rs_check")
    if rc:
        lines += ["", "Baseline check: row-stationary optimum of AlexNet CONV1-5 (batch 4) vs JSSC 2017 Table V, "
                  "ours / published (energy in Eyeriss's normalized units; docs/MODEL.md explains the on-chip energy gap). "
                  f"{scope_sentence(rs_check_scopes(), 'the mapper the check ran')}.", "",
                  "| layer | latency | on-chip energy | GLB accesses | DRAM accesses |", "|---|---|---|---|---|"]
        for name, v in rc.items():
            lines.append(f"| {name} | " + " | ".join(f"{v[k]['ratio']:.2f}" if k in v else "--"
                                                     for k in ("latency_ms", "onchip_energy_uj", "glb_mb", "dram_mb")) + " |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
