"""Figures from the JSON outputs of the benchmark and search-quality scripts
(``docs/benchmarks/*.json``, ``docs/search_quality/*.json``); each names its command."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiments.figures.fmt import thousands
from experiments.figures.records import RecordError, load_json, stated_scope

__all__ = [
    "FIGURES",
    "demo_search",
    "inner_effort",
    "inner_feasibility",
    "inner_feasibility_seconds",
    "mapper_choice",
    "mapper_codesign",
    "mapper_optimality",
    "optimizer_cost",
    "resnet50_eyeriss_proof_time",
]

INNER_EFFORT = "docs/benchmarks/shi2020_inner_effort.json"
INNER_EFFORT_TXT = "docs/benchmarks/shi2020_inner_effort.txt"
"""The same run's console output, whose header states the space its proofs cover."""
OPTIMIZER_COST = "docs/benchmarks/shi2020_optimizer_cost.json"
INNER_FEASIBILITY = "docs/search_quality/inner_feasibility.json"
INNER_FEASIBILITY_TXT = "docs/search_quality/inner_feasibility.txt"
"""The same run's console output, whose header states the space the exact optimum covers."""
MAPPER_OPTIMALITY = "docs/benchmarks/mapper_optimality.json"
MAPPER_CHOICE = "docs/benchmarks/mapper_choice.json"
DEMO_SEARCH = "docs/benchmarks/demo_search.json"
MAPPER_CODESIGN = "docs/benchmarks/mapper_codesign_full.jsonl"
MAPPER_FAST_DEFAULT = "docs/benchmarks/mapper_fast_default.json"
CODESIGN_SPACES = {"shi-iso": "Shi et al. iso-resource", "shi-free": "Shi et al. free-resource",
                   "demo": "the demo's systolic space", "eyeriss": "Eyeriss v1"}
CODESIGN_WORKLOADS = {"dqn": "DQN, batch 1", "dqn@32": "DQN, batch 32", "resnet50": "ResNet-50",
                      "bert": "BERT-base block"}
ARCH_NAMES = {"eyeriss_v1": "Eyeriss v1", "systolic_32x32_ws": "32x32 WS systolic array"}
NETWORK_NAMES = {
    "mobilenet_v2": "MobileNetV2",
    "resnet50": "ResNet-50",
    "dqn": "DQN",
    "bert_base_block": "BERT-base block",
}

#: the settings shown and their labels (the record's gap=0.02 / gap=0.05 rows are left out)
EFFORT_ROWS = (
    ("heuristic", "greedy heuristic"),
    ("nodes=100k", "100,000 nodes"),
    ("nodes=300k", "300,000 nodes"),
    ("nodes=1M", "1 million nodes"),
    ("nodes=3M", "3 million nodes (the committed run's search setting)"),
)
#: the inner-mapper choice of issue 42: record (JSON, its output) per workload, and the rows shown
INNER_MAPPER = {"DQN@32": ("docs/benchmarks/shi2020_inner_effort_dqn32_anytime.json",
                           "docs/benchmarks/shi2020_inner_effort_dqn32_anytime.txt"),
                "ResNet-50": ("docs/benchmarks/shi2020_inner_effort_resnet50_anytime.json",
                              "docs/benchmarks/shi2020_inner_effort_resnet50_anytime.txt")}
INNER_MAPPER_ROWS = (("heuristic", "heuristic"), ("anytime", "fast default (40,000 nodes)"),
                     ("nodes=3M", "3 M nodes (the reference)"))
FEASIBILITY_ROWS = (
    ("bo", "constrained BO, feasibility classifier + failures imputed (the default)"),
    ("bo-no-feasibility", "imputation only, no classifier"),
    ("bo-neither", "neither"),
    ("random", "random search"),
    ("bo-known", "constrained BO with capacity a known constraint"),
)
OPTIMIZERS = ("constrained-bo", "random", "tpe", "bo-reject")


def _get(record: dict, key: str, rel: str):
    try:
        return record[key]
    except KeyError:
        raise RecordError(f"{rel}: no entry {key!r} (has {sorted(record)})") from None


def inner_effort(root: Path) -> str:
    """The Shi et al. inner search's effort limit on DQN: network EDP of 12 random iso
    designs at each limit, relative to the reference limit (shi2020.md)."""
    r = load_json(root, INNER_EFFORT)
    ref = r["reference"]
    summary = r["summary"]
    lines = [
        f"{len(r['points'])} random {r['mode']} designs of {r['workload']} (seed {r['seed']}); layers proven = "
        f"proven optimal ({stated_scope(root, INNER_EFFORT_TXT)}, as `{INNER_EFFORT_TXT}` states); `{INNER_EFFORT}`.",
        "",
        "| inner search per layer | network EDP / 3M nodes' (median, max) | layers proven "
        "| rank correlation with 3M | same best design | CPU s per design |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in EFFORT_ROWS:
        s = _get(summary, key, INNER_EFFORT)
        if key == ref:
            ratio, rho = "1", "1"
        else:
            ratio, rho = f"{s['median_ratio']:.3f}, {s['max_ratio']:.3f}", f"{s['spearman']:.3f}"
        same = (
            "yes" if s["same_best"] else f"no ({100 * (s['best_point_ref_ratio'] - 1):.1f} % worse)"
        )
        lines.append(
            f"| {label} | {ratio} | {100 * s['proven_share']:.0f} % | {rho} | {same} | "
            f"{s['cpu_s_per_point']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def inner_mapper_choice(root: Path) -> str:
    """Issue 42's choice of the Shi et al. search's inner mapper: per workload, the network
    EDP of 12 random iso designs with the heuristic and the fast default over the 3 M-node
    search's, their ranking and CPU seconds, and whether the rule fixed before measuring
    (median at most 1.02, Spearman at least 0.95, the best design kept, on every workload)
    holds."""
    lines, held, scopes = [], [], set()
    for wl, (rel, txt) in INNER_MAPPER.items():
        scopes.add(stated_scope(root, txt))
        r = load_json(root, rel)
        if r["reference"] != "nodes=3M":
            raise RecordError(f"{rel}: its reference is {r['reference']}, the rule compares with nodes=3M")
        fast = _get(r["summary"], "anytime", rel)
        held.append(fast["median_ratio"] <= 1.02 and fast["spearman"] >= 0.95 and fast["same_best"])
        for key, label in INNER_MAPPER_ROWS:
            x = _get(r["summary"], key, rel)
            ratio = "1" if key == r["reference"] else \
                f"{x['median_ratio']:.3f}, {x['min_ratio']:.3f}, {x['max_ratio']:.3f}"
            rho = "1" if key == r["reference"] else f"{x['spearman']:.3f}"
            same = "yes" if x["same_best"] else f"no ({100 * (x['best_point_ref_ratio'] - 1):.1f} % worse)"
            lines.append(f"| {wl} | {label} | {ratio} | {100 * x['proven_share']:.0f} % | {rho} | {same} | "
                         f"{x['cpu_s_per_point']:.1f} |")
    files = " and ".join(f"`{t}`" for _, t in INNER_MAPPER.values())
    if len(scopes) != 1:
        raise RecordError(f"{files} state different proof scopes; the caption states one")
    head = (f"12 random iso designs per workload (seed 0; records {', '.join(f'`{j}`' for j, _ in INNER_MAPPER.values())}); "
            f"layers proven = proven optimal ({scopes.pop()}, as {files} state); CPU s per design = each design's process's "
            "own. The rule " + ("holds on every workload: the search uses the fast default." if all(held) else
                                "does not hold on every workload: the search keeps 3 M nodes."))
    return "\n".join([head, "", "| workload | setting | network EDP / 3 M nodes' (median, min, max) | layers proven "
                       "| Spearman with 3 M | best design kept | CPU s per design |",
                       "|---|---|---|---|---|---|---|", *lines]) + "\n"


def optimizer_cost(root: Path) -> str:
    """CPU and elapsed seconds of each outer optimizer on one small Shi et al. run."""
    r = load_json(root, OPTIMIZER_COST)
    lines = [
        f"`{OPTIMIZER_COST}`.",
        "",
        "| optimizer | trials (evaluated) | CPU s of the trials | CPU s per evaluated point "
        "| CPU s of the driver (proposals) | elapsed s (machine load 6–10 on 2 cores) |",
        "|---|---|---|---|---|---|",
    ]
    for name in OPTIMIZERS:
        o = _get(r, name, OPTIMIZER_COST)
        trials = len(o["trial_cpu_s"])
        evaluated = trials - o["failed"]
        note = f"{evaluated}; {o['failed']} rejected unevaluated" if o["failed"] else f"{evaluated}"
        lines.append(
            f"| {name} | {trials} ({note}) | {round(o['trials_cpu_s'])} | "
            f"{round(o['trials_cpu_s'] / evaluated)} | {o['driver_cpu_s']:.1f} | "
            f"{thousands(o['elapsed_wall_s'])} |"
        )
    return "\n".join(lines) + "\n"


def inner_feasibility(root: Path) -> str:
    """The inner mapping search with buffer capacity unknown: infeasible share of the
    proposals and best EDP over the exact optimum, per search (shi2020.md)."""
    r = load_json(root, INNER_FEASIBILITY)
    summary = r["summary"]
    runs = {_get(summary, k, INNER_FEASIBILITY)["runs"] for k, _ in FEASIBILITY_ROWS}
    lines = [
        f"{r['arch']}, {len(r['layers'])} layers × {r['seeds']} seeds = {', '.join(map(str, sorted(runs)))} "
        f"runs per search, {r['budget']} mappings each; exact optimum = the exact mapper's optimum of "
        f"{stated_scope(root, INNER_FEASIBILITY_TXT)}, as `{INNER_FEASIBILITY_TXT}` states; "
        f"`{INNER_FEASIBILITY}`.",
        "",
        "| inner search | infeasible share of proposals (after BO's "
        f"{r['n_init']}-point initial design) | best EDP / exact optimum (median) |",
        "|---|---|---|",
    ]
    for key, label in FEASIBILITY_ROWS:
        s = summary[key]
        share = f"{100 * s['infeasible_share']:.1f} %"
        if s["infeasible_share"] == 0 and s["infeasible_share_after_init"] == 0:
            share = "0 %"
        else:
            share += f" ({100 * s['infeasible_share_after_init']:.1f} %)"
        lines.append(f"| {label} | {share} | {s['median_ratio_to_exact']:.2f} |")
    return "\n".join(lines) + "\n"


def inner_feasibility_seconds(root: Path) -> tuple[float, int]:
    """Wall seconds of ``inner_feasibility``'s work as its record keeps them: every inner
    search's ``seconds`` and every layer's exact proof (``exact_s``), summed (one process,
    one after the other), and how many pieces that is. The script's start-up is not in it."""
    r = load_json(root, INNER_FEASIBILITY)
    seconds, pieces = 0.0, 0
    for layer in r["layers"].values():
        seconds += _get(layer, "exact_s", INNER_FEASIBILITY)
        pieces += 1
        for runs in _get(layer, "searches", INNER_FEASIBILITY).values():
            for run in runs:
                seconds += _get(run, "seconds", INNER_FEASIBILITY)
                pieces += 1
    return seconds, pieces


def resnet50_eyeriss_proof_time(root: Path) -> str:
    """How long the exact mapper takes to prove ResNet-50's unique layers on Eyeriss v1:
    ``mapper_optimality``'s CPU and wall seconds summed over those rows (cost-model.md,
    shi2020.md)."""
    r = load_json(root, MAPPER_OPTIMALITY)
    rows = [x for x in _get(r["rows"], "eyeriss_v1", MAPPER_OPTIMALITY) if x["network"] == "resnet50"]
    if not rows:
        raise RecordError(f"{MAPPER_OPTIMALITY}: no ResNet-50 rows on eyeriss_v1")
    proven = sum(bool(x["optimal"]) for x in rows)
    if proven != len(rows):
        raise RecordError(f"{MAPPER_OPTIMALITY}: {len(rows) - proven} ResNet-50 layers on eyeriss_v1 are not proven; "
                          "the sentence says all are")
    cpu = sum(x["exact_cpu_s"] for x in rows)
    wall = sum(x["exact_s"] for x in rows)
    lo, hi = min(r["load"]), max(r["load"])
    return (
        f"Proving ResNet-50's {len(rows)} unique layers on Eyeriss v1 (all {proven} proven optimal: "
        f"{_scope_of(r, 'eyeriss_v1', 'resnet50')}; the record's `scopes`) took the exact "
        f"mapper {cpu:.1f} s of CPU time and {wall:.1f} s of wall time, summed over the layers, in one process on "
        f"2 shared cores (load average {lo:.2f}–{hi:.2f} at the start) (`{MAPPER_OPTIMALITY}`: `exact_cpu_s` and "
        "`exact_s` of its ResNet-50 rows on `eyeriss_v1`).\n"
    )


def mapper_optimality(root: Path) -> str:
    """Which mapper to use: the exact mapper's proofs and CPU time, and how far the
    heuristic and the best of many random mappings are from its optimum, per architecture."""
    import statistics

    r = load_json(root, MAPPER_OPTIMALITY)
    lo, hi = min(r["load"]), max(r["load"])
    after = r.get("load_after")
    load = (f"load average {lo:.2f}–{hi:.2f} (1/5/15 min) at the start and "
            f"{', '.join(f'{v:.1f} after {ARCH_NAMES.get(k, k)}' for k, v in after.items())} on 2 cores"
            if after else f"load average {lo:.2f}–{hi:.2f} on 2 cores")
    lines = [
        f"Every unique layer of {', '.join(NETWORK_NAMES.get(n, n) for n in sorted({x['network'] for rows in r['rows'].values() for x in rows}))}; "
        f"objective {r['objective']}; exact mapper limit {r['time_limit_s']:.0f} s per layer; proven optimal = "
        f"{_optimality_scope(r)}; "
        f"random = the best of "
        f"{r['random']:,} random legal mappings; CPU s = `time.process_time` of the one process, {load}; "
        f"`{MAPPER_OPTIMALITY}`.",
        "",
        "| architecture | layers | proven optimal | exact CPU s, median (max, layer) | heuristic within 5 % "
        "| heuristic / optimum, median (worst, layer) | random / optimum, median |",
        "|---|---|---|---|---|---|---|",
    ]
    for arch, rows in r["rows"].items():
        slow = max(rows, key=lambda x: x["exact_cpu_s"])
        worst = max(rows, key=lambda x: x["heuristic_ratio"])
        h = [x["heuristic_ratio"] for x in rows]

        def where(x: dict) -> str:
            return f"{NETWORK_NAMES.get(x['network'], x['network'])} {x['layer']}"

        lines.append(
            f"| {ARCH_NAMES.get(arch, arch)} | {len(rows)} | {sum(bool(x['optimal']) for x in rows)} | "
            f"{statistics.median(x['exact_cpu_s'] for x in rows):.2f} ({slow['exact_cpu_s']:.2f}, {where(slow)}) | "
            f"{sum(v <= 1.05 for v in h)} of {len(rows)} | {statistics.median(h):.2f}x ({max(h):.2f}x, {where(worst)}) | "
            f"{statistics.median(x['random_ratio'] for x in rows):.2f}x |"
        )
    return "\n".join(lines) + "\n"


def _scope_of(r: dict, arch: str, network: str) -> str:
    """The space a mapper_optimality record's proofs of ``network`` on ``arch`` cover, in
    :meth:`mappers.base.ProofScope.describe`'s words (the record's ``scopes``: each scope
    with the networks it ``applies_to``)."""
    got = [sc for sc in _get(_get(r, "scopes", MAPPER_OPTIMALITY), arch, MAPPER_OPTIMALITY)
           if network in sc.get("applies_to", ())]
    if len(got) != 1:
        raise RecordError(f"{MAPPER_OPTIMALITY}: scopes.{arch} has {len(got)} scopes for {network}; the sentence "
                          "states one")
    return _describe(got[0])


def _describe(sc: dict) -> str:
    """A record's scope entry (``ProofScopes.records()``: a scope's fields and the groups
    it ``applies_to``) in :meth:`mappers.base.ProofScope.describe`'s words."""
    from mappers.base import ProofScope

    return ProofScope(**{k: v for k, v in sc.items() if k != "applies_to"}).describe()


def _optimality_scope(r: dict) -> str:
    """What a mapper_optimality record's proofs cover: the fields every architecture's
    proofs share, then each architecture's bypass and spatial rule (the record's
    ``scopes``: one scope per architecture, applying to every network)."""
    scopes = _get(r, "scopes", MAPPER_OPTIMALITY)
    per_arch = {}
    for arch in r["rows"]:
        got = _get(scopes, arch, MAPPER_OPTIMALITY)
        if len(got) != 1:
            raise RecordError(f"{MAPPER_OPTIMALITY}: scopes.{arch} has {len(got)} scopes; the sentence states one "
                              "per architecture")
        per_arch[arch] = got[0]
    common = {k: {sc[k] for sc in per_arch.values()} for k in ("tilings", "accounting", "constraints", "loop_orders")}
    if any(len(v) != 1 for v in common.values()):
        raise RecordError(f"{MAPPER_OPTIMALITY}: the architectures' proofs differ beyond bypass and spatial rules "
                          f"({common}); the sentence needs rewriting")
    (til,), (acc,), (cons,), (orders,) = (common[k] for k in ("tilings", "accounting", "constraints", "loop_orders"))
    each = "; ".join(f"{ARCH_NAMES.get(a, a)}: {'bypass searched' if sc['bypass'] else 'no bypass choices'}, "
                     f"spatial: {sc['spatial']}" for a, sc in per_arch.items())
    return (f"over {til} tilings, {acc} accounting, {'no constraints' if cons is None else 'constraints ' + str(cons)}, "
            f"loop orders: {orders}; {each} (the record's `scopes`)")


def _scope_phrase(r: dict) -> str:
    """What the proofs of a mapper_choice record cover, in one phrase: the fields every
    proof shares, then how many distinct spatial rules (one per dataflow) they span."""
    scopes = _get(r, "scopes", MAPPER_CHOICE)
    if not scopes:
        return "no layer proven"
    common = {k: {sc[k] for sc in scopes} for k in ("tilings", "accounting", "bypass", "constraints", "loop_orders")}
    if any(len(v) != 1 for v in common.values()):
        raise RecordError(f"{MAPPER_CHOICE}: the proofs differ in more than their spatial rules ({common}); "
                          "the sentence needs rewriting")
    (til,), (acc,), (byp,), (cons,) = (common[k] for k in ("tilings", "accounting", "bypass", "constraints"))
    return (f"over {til} tilings, {acc} accounting, {'bypass searched' if byp else 'no bypass choices'}, "
            f"{'no constraints' if cons is None else 'constraints ' + str(cons)}, every loop order, and every "
            f"spatial unrolling under the point's dataflow rules ({len(scopes)} distinct; the record's `scopes`)")


def mapper_choice(root: Path) -> str:
    """The demo's mapper choice in one sentence: how fast the exact mapper proves the layers
    of hardware points drawn from the demo's space, and how far the heuristic is from them."""
    r = load_json(root, MAPPER_CHOICE)
    s = r["summary"]
    return (
        f"On {r['points']} hardware points drawn from this space (seed {r['seed']}) it proves "
        f"{s['proven_optimal']} of {s['layers_mapped']} layer maps optimal ({_scope_phrase(r)}) in a median "
        f"{s['exact_median_cpu_s']:.2f} CPU s (at most {s['exact_max_cpu_s']:.2f} CPU s), where the heuristic "
        f"mapper's {r['objective'].upper()} is up to {s['heuristic_over_exact_max']:.2f}x the optimum "
        f"(median {s['heuristic_over_exact_median']:.2f}x; `python -m experiments.benchmarks.mapper_choice "
        f"--json {MAPPER_CHOICE}`).\n"
    )


def demo_search(root: Path) -> str:
    """The demo's search: the best network EDP constrained BO and random search found on its
    space, and each run's elapsed wall time and summed worker CPU time
    (``python -m experiments.benchmarks.demo_search``)."""
    r = load_json(root, DEMO_SEARCH)
    s = r["studies"]
    parts = []
    for key, label in (("random", "random search"), ("constrained-bo", "constrained BO")):
        st = _get(s, key, DEMO_SEARCH)
        done = [t for t in st["rows"] if t["status"] == "COMPLETE" and t["edp_uj_ms"] is not None]
        best = min(t["edp_uj_ms"] for t in done)
        if abs(best - st["best_edp_uj_ms"]) > 1e-9 * best or len(done) != st["complete"]:
            raise RecordError(f"{DEMO_SEARCH}: studies.{key}: best_edp_uj_ms or complete disagree with its rows")
        cpu = st["cpu_time_summed_s"]
        cost = (f"{st['elapsed_wall_s'] / 60:.1f} min elapsed wall time, "
                + ("worker CPU time not recorded" if cpu is None else f"{cpu / 60:.1f} min of worker CPU time summed "
                   "over its trials"))
        parts.append(f"{label}'s best EDP after {st['trials']} points is {thousands(best)} µJ·ms ({cost})")
    commit = f" at commit {r['commit']}" if r.get("commit") else ""
    load = r.get("load_average_at_export")
    at = f", load average {load[0]:.1f} on the shared cores when exported" if load else ""
    return (f"With the same seed ({r['seed']}) and {r['workers']} workers, " + "; ".join(parts)
            + f" (`{DEMO_SEARCH}`{commit}{at}: `python -m experiments.benchmarks.demo_search`; the elapsed "
            "time includes the optimizer's own proposals, which the workers' CPU time does not count).\n")


DEMO_CONFIG = "experiments/configs/demo.yaml"


def demo_space_size(root: Path) -> str:
    """How many legal hardware points the demo's space holds: the exact cardinality of the
    space ``experiments/configs/demo.yaml`` builds, its known constraints (the area
    budget) applied."""
    from experiments.config import ConfigError, load_config

    path = root / DEMO_CONFIG
    if not path.exists():
        raise RecordError(f"record {DEMO_CONFIG} not found under {root}")
    try:
        space = load_config(path).space
    except ConfigError as e:
        raise RecordError(f"{DEMO_CONFIG}: {e}") from None
    n = space.cardinality()
    if not isinstance(n, int):
        raise RecordError(f"{DEMO_CONFIG}: the space is not finite (cardinality {n})")
    return (f"The space holds {n:,} legal hardware points (`DesignSpace.cardinality()` of the space "
            f"`{DEMO_CONFIG}` builds, the area budget applied).\n")


def _codesign_rows(root: Path) -> tuple[dict, list[dict]]:
    """The settings line and the layer maps of the co-design benchmark's rows file."""
    import json

    path = root / MAPPER_CODESIGN
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RecordError(f"record {MAPPER_CODESIGN} not found under {root}") from None
    try:
        first = json.loads(lines[0])
        head = {**first["settings"], "stated_scopes": first.get("stated_scopes")}
        rows = [json.loads(x) for x in lines[1:]]
    except (IndexError, KeyError, json.JSONDecodeError) as e:
        raise RecordError(f"{MAPPER_CODESIGN}: not a rows file of experiments.benchmarks.mapper_codesign ({e})") from None
    if not rows:
        raise RecordError(f"{MAPPER_CODESIGN}: no layer map recorded")
    return head, rows


def _stated_scope(head: dict) -> str:
    """The proofs' scope the rows file's first line states (``stated_scopes``, written by
    :mod:`experiments.benchmarks.stated_scopes` from its settings; a file without one is
    refused: its "proven" would state no space)."""
    lines = head.get("stated_scopes")
    if not lines or not any("proofs and bounds cover" in x for x in lines):
        raise RecordError(f"{MAPPER_CODESIGN}: its first line states no proof scope (stated_scopes); run "
                          "python -m experiments.benchmarks.stated_scopes")
    first, *each = (x.lstrip("# ").strip() for x in lines[1:])
    body = first + (" " + "; ".join(f"[{x}]" for x in each) if each else "")
    return f"Proof scope, stated after the run from its settings (`python -m experiments.benchmarks.stated_scopes`): {body}."


def mapper_codesign(root: Path) -> str:
    """The exact mapper on the designs a co-design search visits (issue 41 items 1-2): per
    space and per workload, the layer maps proven, CPU seconds to proof (median, 95th
    percentile, maximum) and the share whose incumbent at 0.5 CPU s is within 2 % of the
    result, from the benchmark's rows file (``--rows``)."""
    import numpy as np

    head, rows = _codesign_rows(root)
    for r in rows:
        for k in ("space", "workload", "cpu_s", "proven", "gap", "anytime"):
            _get(r, k, MAPPER_CODESIGN)

    def line(name: str, g: list[dict]) -> str:
        cpu = np.array([r["cpu_s"] for r in g])
        proven = sum(bool(r["proven"]) for r in g)
        within = np.mean([r["anytime"]["0.5"] <= 1.02 for r in g])
        gaps = [r["gap"] for r in g if not r["proven"]]
        worst = f"{100 * max(gaps):.1f} %" if gaps else "--"
        return (f"| {name} | {len(g)} | {proven} ({100 * proven / len(g):.1f} %) | {np.median(cpu):.2f} | "
                f"{np.percentile(cpu, 95):.2f} | {cpu.max():.1f} | {100 * within:.1f} % | {worst} |")

    cap = head.get("max_nodes")
    screen = "without" if head.get("no_screen") else "with"
    lines = [
        f"{len(rows)} layer maps recorded in `{MAPPER_CODESIGN}` (`python -m experiments.benchmarks.mapper_codesign "
        f"--max-nodes {cap} --rows {MAPPER_CODESIGN}`: every unique layer of DQN at batch 1 and 32, ResNet-50 and the "
        "BERT-base block on 15 points of each Shi et al. space, 10 of the demo's and Eyeriss v1, the exact mapper "
        f"{screen} its top-level screen; EDP; a search stops at {cap:,} nodes and counts as unproven, at its "
        "certified gap). CPU s = `time.process_time` of the one process per layer map, on 2 cores shared with "
        "other jobs; within 2 % = the incumbent at 0.5 CPU s over the final result (of the optimum where proven). "
        "Issue 41's targets: every map proven, median at most 0.2 s, 95th percentile at most 3 s, maximum at most "
        f"30 s; within 2 % on at least 95 %. {_stated_scope(head)}",   # one paragraph: the claims beside their space
        "",
        "| layer maps | maps | proven | CPU s median | p95 | max | within 2 % at 0.5 s | worst certified gap |",
        "|---|---|---|---|---|---|---|---|",
        line("all", rows),
    ]
    for key, label in CODESIGN_SPACES.items():
        g = [r for r in rows if r["space"] == key]
        if g:
            lines.append(line(label, g))
    for key, label in CODESIGN_WORKLOADS.items():
        g = [r for r in rows if r["workload"] == key]
        if g:
            lines.append(line(label, g))
    return "\n".join(lines) + "\n"


CODESIGN_TARGETS = (("every map proven", lambda cpu, share, within: share == 1.0),
                    ("median at most 0.2 s", lambda cpu, share, within: np.median(cpu) <= 0.2),
                    ("95th percentile at most 3 s", lambda cpu, share, within: np.percentile(cpu, 95) <= 3.0),
                    ("maximum at most 30 s", lambda cpu, share, within: cpu.max() <= 30.0),
                    ("within 2 % at 0.5 s on at least 95 %", lambda cpu, share, within: within >= 0.95))
"""Issue 41's targets for the co-design benchmark (items 1-2), each with its test on the
rows' CPU seconds, proven share and within-2 % share."""


def mapper_summary(root: Path) -> str:
    """README's mapper paragraph: the exact mapper's proofs and CPU seconds per architecture
    of ``mapper_optimality`` and on the designs a co-design search visits
    (``mapper_codesign``'s rows), each with its record, command and scope, and which of
    issue 41's targets the second meets."""
    r = load_json(root, MAPPER_OPTIMALITY)
    per_arch = []
    for arch, got in r["rows"].items():
        c = np.array([x["exact_cpu_s"] for x in got])
        per_arch.append(f"{sum(bool(x['optimal']) for x in got)} of {len(got)} on {ARCH_NAMES.get(arch, arch)} "
                        f"(median {np.median(c):.2f} CPU s a layer, max {c.max():.1f} s)")
    nets = ", ".join(NETWORK_NAMES.get(n, n) for n in sorted({x["network"] for g in r["rows"].values() for x in g}))
    head, rows = _codesign_rows(root)
    cpu = np.array([_get(x, "cpu_s", MAPPER_CODESIGN) for x in rows])
    proven = sum(bool(_get(x, "proven", MAPPER_CODESIGN)) for x in rows)
    within = float(np.mean([_get(x, "anytime", MAPPER_CODESIGN)["0.5"] <= 1.02 for x in rows]))
    met = [name for name, ok in CODESIGN_TARGETS if ok(cpu, proven / len(rows), within)]
    unmet = [name for name, ok in CODESIGN_TARGETS if name not in met]
    targets = "; ".join(x for x in (f"met: {', '.join(met)}" if met else "",
                                     f"not met: {', '.join(unmet)}" if unmet else "") if x)
    _stated_scope(head)                               # a rows file that states no scope is refused
    spaces = ", ".join(CODESIGN_SPACES.get(k, k) for k in dict.fromkeys(x["space"] for x in rows))
    return (
        f"The exact mapper proves the unique layers of {nets} optimal: {'; '.join(per_arch)}; "
        f"{_optimality_scope(r)} (`python -m experiments.benchmarks.mapper_optimality`, record "
        f"`{MAPPER_OPTIMALITY}`). On the designs a co-design search visits ({spaces}: {len(rows)} layer maps "
        f"recorded in `{MAPPER_CODESIGN}`, `python -m experiments.benchmarks.mapper_codesign --max-nodes "
        f"{head.get('max_nodes')} --rows FILE`) it proves {proven} ({100 * proven / len(rows):.1f} %) within "
        f"{head.get('max_nodes'):,} nodes, median {np.median(cpu):.2f} CPU s, 95th percentile "
        f"{np.percentile(cpu, 95):.2f} s, max {cpu.max():.1f} s, and its incumbent after 0.5 CPU s is within 2 % of "
        f"the result on {100 * within:.1f} % of them (issue 41's targets {targets}). "
        + "Proof scope, per space: as the rows file's first line states it (`stated_scopes`), rendered with the table "
        "per space and workload in [the cost model's guide](docs/guide/cost-model.md).\n"
    )


def _record_scopes(r: dict, rel: str) -> str:
    """The proofs' scope a record keeps in ``scopes`` (``ProofScopes.records()``: each
    distinct scope with the groups it ``applies_to``), as one sentence."""
    scopes = _get(r, "scopes", rel)
    if not scopes:
        raise RecordError(f"{rel}: its scopes list is empty; the figure says what is proven over no space")
    each = [f"[{', '.join(x['applies_to'])}: {_describe(x)}]" for x in scopes]
    return "Proven = over the space the record's `scopes` state: " + "; ".join(each) + "."


def mapper_fast_default(root: Path) -> str:
    """The fast default (``AnytimeMapper``) against the heuristic on the co-design designs
    (issue 41 item 2): per space and workload, each one's CPU seconds and share within 2 %
    and 5 % of the reference, from ``mapper_fast_default``'s record."""
    r = load_json(root, MAPPER_FAST_DEFAULT)
    st, summary = _get(r, "settings", MAPPER_FAST_DEFAULT), _get(r, "summary", MAPPER_FAST_DEFAULT)
    lines = [
        f"{summary['all']['layer_maps']} layer maps (`python -m experiments.benchmarks.mapper_fast_default --json "
        f"{MAPPER_FAST_DEFAULT}`: the first {st['shi_points']} points of each Shi et al. space, the demo's 10 and "
        "Eyeriss v1 of the co-design benchmark, every unique layer of DQN at batch 1 and 32, ResNet-50 and the "
        f"BERT-base block); EDP over the reference, the same layer map's result in `{MAPPER_CODESIGN}` (its proven "
        "optimum, or its best at the 3 M-node cap where unproven) or the better result here; the fast default is "
        f"`AnytimeMapper`, the exact mapper stopped at {st['anytime_nodes']:,} nodes; CPU s = `time.process_time` of "
        f"the one process on 2 cores shared with other jobs (load {r['load_after']:.1f} at the end); "
        f"{r['missing_reference']} maps without a reference. {_record_scopes(r, MAPPER_FAST_DEFAULT)}",
        "",
        "| layer maps | maps | heuristic: CPU s median / p95 | within 2 % / 5 % | median / worst ratio "
        "| fast default: CPU s median / p95 | within 2 % / 5 % | median / worst ratio | proven |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {"all": "all"} | CODESIGN_SPACES | {f"w:{k}": v for k, v in CODESIGN_WORKLOADS.items()}
    for key, label in labels.items():
        g = summary.get(key)
        if not g:
            continue
        cells = []
        for who in ("heuristic", "fast"):
            x = g[who]
            cells += [f"{x['cpu_s_median']:.3f} / {x['cpu_s_p95']:.2f}",
                      f"{100 * x['within_2pct']:.1f} % / {100 * x['within_5pct']:.1f} %",
                      f"{x['ratio_median']:.3f} / {x['ratio_max']:.2f}"]
        lines.append(f"| {label} | {g['layer_maps']} | {' | '.join(cells)} | {100 * g['fast_proven']:.1f} % |")
    return "\n".join(lines) + "\n"


FIGURES = {
    "mapper-fast-default": ((MAPPER_FAST_DEFAULT,), mapper_fast_default),
    "mapper-summary": ((MAPPER_OPTIMALITY, MAPPER_CODESIGN), mapper_summary),
    "demo-space-size": ((DEMO_CONFIG,), demo_space_size),
    "mapper-choice": ((MAPPER_CHOICE,), mapper_choice),
    "mapper-codesign": ((MAPPER_CODESIGN,), mapper_codesign),
    "demo-search": ((DEMO_SEARCH,), demo_search),
    "mapper-optimality": ((MAPPER_OPTIMALITY,), mapper_optimality),
    "resnet50-eyeriss-proof-time": ((MAPPER_OPTIMALITY,), resnet50_eyeriss_proof_time),
    "shi2020-inner-effort": ((INNER_EFFORT, INNER_EFFORT_TXT), inner_effort),
    "shi2020-inner-mapper": (tuple(x for pair in INNER_MAPPER.values() for x in pair), inner_mapper_choice),
    "shi2020-optimizer-cost": ((OPTIMIZER_COST,), optimizer_cost),
    "shi2020-inner-feasibility": ((INNER_FEASIBILITY, INNER_FEASIBILITY_TXT), inner_feasibility),
}
