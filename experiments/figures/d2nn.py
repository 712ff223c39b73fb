"""Figures from the multi-task D2NN's committed records (``docs/reproduction/results/d2nn/``
from ``coexplore reproduce d2nn``; ``d2nn_epochs4/`` from the same command with
``--epochs 4``, the configuration before the epochs were raised)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.figures.fmt import signed, thousands
from experiments.figures.records import RecordError, load_csv, load_json

__all__ = [
    "FIGURES",
    "RESULTS",
    "RESULTS_4",
    "codesign_front",
    "codesign_rerun",
    "multitask",
    "paper_scale",
    "propagation_geometries",
    "robustness",
    "single_task",
]

RESULTS = "docs/reproduction/results/d2nn/results.json"
RESULTS_4 = "docs/reproduction/results/d2nn_epochs4/results.json"
MORE_EPOCHS = "docs/reproduction/results/d2nn_epochs4/more_epochs_fashion_s0.json"
FRONT = "docs/reproduction/results/d2nn/codesign_pareto_front.csv"
#: the paper-scale (N = 200) model of ``python -m experiments.reproduce.d2nn_paper_scale``
PAPER_SCALE = "docs/reproduction/results/d2nn/paper_scale.json"
#: the propagation validity of six geometries, ``python -m experiments.reproduce.d2nn_propagation_geometries``
GEOMETRIES = "docs/reproduction/results/d2nn/propagation_geometries.json"
#: MNIST's training split, for the full-epoch CPU time extrapolated from the subset's
MNIST_TRAIN = 60_000

#: published accuracies quoted as references (not ours): the ASM re-run of Lin et al. 2018
#: (Science 361, 1004) with 200² neurons, 5 layers, 20 epochs, as in table.md; and Li et al.
#: 2019 (Adv. Photonics 1, 046001), differential detection
REFERENCES = (
    ("reference: ASM re-run of Lin et al. 2018 (200², 5 layers, 20 epochs)", "97.63 %", "87.49 %"),
    ("reference: differential detection, Li et al. 2019", "98.54 %", "90.54 %"),
)


def _p(x: float) -> str:
    return f"{100 * x:.2f} %"


def _acc(task: dict[str, Any]) -> dict[str, Any]:
    acc = task["acc"]
    if acc["n"] >= 2 and acc.get("std") is None:
        raise RecordError(f"{RESULTS}: an accuracy over {acc['n']} seeds has no std")
    return acc


def single_task(root: Path) -> str:
    """Single-task accuracy at the full-data configuration: 4 epochs (seed 0), that model
    trained on, 6 epochs (3 seeds, mean ± sample std), logistic regression, references."""
    r6, r4 = load_json(root, RESULTS), load_json(root, RESULTS_4)
    more = load_json(root, MORE_EPOCHS)
    s6, s4 = r6["single"], r4["single"]
    e4, e6 = r4["settings"]["epochs"], r6["settings"]["epochs"]
    seeds = r6["settings"]["seeds"]
    m6, f6 = _acc(s6["d2nn"]["mnist"]), _acc(s6["d2nn"]["fashion"])
    if m6["n"] != f6["n"]:
        raise RecordError(f"{RESULTS}: MNIST and Fashion-MNIST over different seed counts")
    later = [e for e in more if e["epoch"] > e4]
    tgt = f"≥ {100 * s6['d2nn']['mnist']['target']:.0f} % / ≥ {100 * s6['d2nn']['fashion']['target']:.0f} %"
    sd = f"± sample std, n = {m6['n']}"

    def six(task: dict[str, Any]) -> str:
        a = task["acc"]
        return f"**{_p(a['mean'])} ± {100 * a['std']:.2f}** ({', '.join(f'{100 * x:.2f}' for x in task['per_seed'])})"

    rows = [
        "| model | MNIST | Fashion-MNIST | issue 20 target |",
        "|---|---|---|---|",
        f"| D2NN, N = {r4['settings']['n']}, L = {r4['settings']['layers']}, all 60k / 10k images, "
        f"**{e4} epochs**, seed 0 (`results/d2nn_epochs4/`) | {_p(s4['d2nn']['mnist']['acc']['mean'])} | "
        f"{_p(s4['d2nn']['fashion']['acc']['mean'])} | {tgt} |",
        f"| the same Fashion-MNIST model trained on for a {'th and '.join(str(e['epoch']) for e in later)}th "
        f"epoch (lr {later[0]['lr']}, the schedule's rate there) | – | "
        f"{' / '.join(_p(e['acc']) for e in later)} | |",
        f"| D2NN, the same, **{e6} epochs** from scratch (the configuration), seeds "
        f"{', '.join(map(str, range(len(seeds) if isinstance(seeds, list) else seeds)))} (`results/d2nn/`; {sd}) | "
        f"{six(s6['d2nn']['mnist'])} | {six(s6['d2nn']['fashion'])} | {tgt} |",
        f"| 95 % t-interval of that mean | [{100 * m6['ci'][0]:.2f}, {100 * m6['ci'][1]:.2f}] | "
        f"[{100 * f6['ci'][0]:.2f}, {100 * f6['ci'][1]:.2f}] | |",
        f"| logistic regression on the same images' 28 × 28 pixels | {_p(s6['logreg']['mnist'])} | "
        f"{_p(s6['logreg']['fashion'])} | |",
    ]
    rows += [f"| {label} | {m} | {f} | |" for label, m, f in REFERENCES]
    return "\n".join(rows) + "\n"


def _ci(d: dict[str, Any]) -> str:
    lo, hi = d["ci"]
    return f"{signed(100 * d['mean'], 2)} [{signed(100 * lo, 2)}, {signed(100 * hi, 2)}]"


def multitask(root: Path) -> str:
    """Multi-task systems at every shared depth K_s against the separate single-task ones
    (mean ± sample std over seeds; paired differences with their 95 % t-interval)."""
    mt = load_json(root, RESULTS)["multitask"]
    n = {row["acc_mnist"]["n"] for row in mt["rows"]}
    rows = [
        f"Mean ± sample std over n = {', '.join(map(str, sorted(n)))} seeds; `{RESULTS}` → `multitask`.",
        "",
        "| K_s | MNIST | Fashion | task recognized | − separate, MNIST [95 % CI] "
        "| − separate, Fashion [95 % CI] | layers | area | energy / inference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in mt["rows"]:
        m, f = row["acc_mnist"], row["acc_fashion"]
        rows.append(
            f"| {row['shared']} | {100 * m['mean']:.2f} ± {100 * m['std']:.2f} % | "
            f"{100 * f['mean']:.2f} ± {100 * f['std']:.2f} % | {_p(row['recognition']['mean'])} | "
            f"{_ci(row['diff_mnist'])} | {_ci(row['diff_fashion'])} | "
            f"{row['physical_layers']} vs {row['separate_layers']} | "
            f"{row['area_mm2']:.1f} vs {row['separate_area_mm2']:.1f} mm² | "
            f"{row['energy_pj']:.2f} vs {row['separate_energy_pj']:.2f} pJ |"
        )
    return "\n".join(rows) + "\n"


#: the rows shown: (source, level key in the record, task, label); every level of every
#: source is in robustness.csv and table.md
ROBUST_ROWS = (
    ("phase noise", "0.5", "mnist", "phase noise 0.5 rad"),
    ("phase noise", "0.5", "fashion", "phase noise 0.5 rad"),
    ("axial misalignment", "0.05", "mnist", "axial misalignment 5 %"),
    ("axial misalignment", "0.05", "fashion", "axial misalignment 5 %"),
    ("detector noise", "10", "mnist", "detector SNR 10 dB"),
    ("detector noise", "10", "fashion", "detector SNR 10 dB"),
    ("wavelength drift", "0.02", "mnist", "wavelength drift +2 %"),
    ("lateral misalignment", "2", "mnist", "lateral misalignment 2 px"),
    ("laser intensity", "0.2", "fashion", "laser intensity 20 %"),
)
ROBUST_COLUMNS = ("single-task", "K_s=0", "K_s=3", "K_s=5")
TASK_NAMES = {"mnist": "MNIST", "fashion": "Fashion"}


def robustness(root: Path) -> str:
    """Accuracy under noise, plain / noise-aware, mean ± sample std over model seeds, for
    a selection of sources and levels (d2nn.md, "Robustness of the multi-task systems")."""
    rob = load_json(root, RESULTS)["robustness"]
    seeds: set[int] = set()

    def cell(levels: dict[str, Any], model: str) -> str:
        out = []
        for variant in ("plain", "noise-aware"):
            e = levels[f"{model} {variant}"]
            seeds.add(e["seeds"])
            out.append(f"{100 * e['acc']:.1f} ± {100 * e['std']:.1f}")
        return " / ".join(out)

    rows = []
    for source, level, task, label in ROBUST_ROWS:
        try:
            levels = rob["summary"][task][source]["levels"][level]
        except KeyError:
            raise RecordError(
                f"{RESULTS}: robustness.summary.{task}.{source!r} has no level {level!r}"
            ) from None
        rows.append(
            f"| {label} | {TASK_NAMES[task]} | "
            + " | ".join(cell(levels, m) for m in ROBUST_COLUMNS)
            + " |"
        )
    head = [
        f"Accuracy in %, mean ± sample std over n = {', '.join(map(str, sorted(seeds)))} model seeds; "
        f"{rob['test_images']} test images per task, {rob['noise_seeds']} noise realizations per level; "
        f"`{RESULTS}` → `robustness`.",
        "",
        "| source, level | task | single-task plain / noise-aware | K_s = 0 | K_s = 3 | K_s = 5 |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


def codesign_rerun(root: Path) -> str:
    """The co-design study before and after issue 47's propagation planning: trials, trials
    below the recognition constraint, and the size of the feasible front."""
    r = load_json(root, RESULTS)
    rows = [
        ("before issue 47 (ASM, pad N/2 everywhere, unchecked)", r["codesign_before_issue47"]),
        ("now (planned propagator, 5 % padding tolerance)", r["codesign"]),
    ]
    below = f"below recognition {r['codesign']['min_recognition']}"
    lines = [f"| | trials | {below} | front size |", "|---|---|---|---|"]
    lines += [
        f"| {label} | {c['trials']} | {c['violating_recognition']} | {c['front_size']} |"
        for label, c in rows
    ]
    return "\n".join(lines) + "\n"


def codesign_front(root: Path) -> str:
    """The co-design study with task recognition as an outcome constraint: its trials, how
    many violate the constraint, and its feasible front, trial by trial (the front's rows
    from ``codesign_pareto_front.csv``, checked against ``results.json``'s count)."""
    c = load_json(root, RESULTS)["codesign"]
    front = load_csv(root, FRONT)
    if len(front) != c["front_size"]:
        raise RecordError(f"{FRONT} has {len(front)} rows, {RESULTS} says the front has {c['front_size']}")
    fid = c["fidelity"]
    lines = [
        f"{c['trials']} trials at {fid['train_samples']:,} training and {fid['test_samples']} test images per "
        f"task, {fid['epochs']} epoch; {c['violating_recognition']} of the {c['trials']} violate recognition "
        f"≥ {c['min_recognition']}; the feasible front has {len(front)} trials (`{RESULTS}` → `codesign`, "
        f"`{FRONT}`).",
        "",
        "| trial | layers / shared | N | pitch | z | P | MNIST | Fashion | recognition | physical layers | area |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = sorted(front, key=lambda t: (float(t["metrics_physical_layers"]), float(t["metrics_acc_task1"])))
    for t in rows:
        levels = int(t["params_phase_levels"])
        lines.append(
            f"| {t['number']} | {t['params_layers']} / {t['params_shared_depth']} | {t['params_n']} | "
            f"{float(t['params_pitch_um']):.0f} µm | {float(t['params_z_mm']):.0f} mm | "
            f"{levels if levels else 'cont.'} | {100 * float(t['metrics_acc_task1']):.1f} % | "
            f"{100 * float(t['metrics_acc_task2']):.1f} % | {100 * float(t['metrics_recognition']):.1f} % | "
            f"{float(t['metrics_physical_layers']):.0f} | {float(t['metrics_area_mm2']):.1f} mm² |"
        )
    return "\n".join(lines) + "\n"


def paper_scale(root: Path) -> str:
    """The N = 200 model: geometry, the planner's propagator (and the stated default it
    refused), data, accuracy, wall and CPU time of training and testing, load average, and
    the CPU hours of a full 60,000-image epoch at the measured rate."""
    d = load_json(root, PAPER_SCALE)
    rec = d["record"]
    st, v = rec["settings"], rec["value"]
    sp, pr = v["spec"], v["propagation"]
    if (st["train_images"], st["epochs"]) != (v["train_images"], len(v["epoch_s"])):
        raise RecordError(f"{PAPER_SCALE}: settings and value disagree on the training images or epochs")
    refused = [t for t in pr["tried"] if (t["method"], t["pad"]) != (pr["method"], pr["pad"])]
    ref = "; ".join(f"{t['method'].upper()} pad {t['pad']}: {t['padding_error']:.3g}" for t in refused)
    geom = (f"λ = {1e3 * sp['wavelength_m']:.2f} mm, pitch {1e3 * sp['pitch_m']:.1f} mm, z = {100 * sp['z_m']:.0f} cm"
            if sp["wavelength_m"] > 1e-4 else
            f"λ = {1e9 * sp['wavelength_m']:.0f} nm, pitch {1e6 * sp['pitch_m']:.0f} µm, z = {sp['z_m']:.2f} m")
    lo0, lo1 = v["loadavg_start"][0], v["loadavg_end"][0]
    full_h = v["train_cpu_s_per_image_epoch"] * MNIST_TRAIN / 3600
    rows = [
        f"`{PAPER_SCALE}` (`{d['command']}`)",
        "",
        "| | |",
        "|---|---|",
        f"| geometry | `{st['geometry']}`: N = {sp['n']}, {geom}, L = {sp['layers']} phase-only layers, "
        f"{sp['detector_regions']} regions of {sp['detector_px']} px |",
        f"| propagation (planner, tol {pr['tol']:g}) | {pr['method'].upper()}, pad {pr['pad']} (grid {pr['grid']}), "
        f"padding error {pr['padding_error']:.2g}; refused before it: {ref or 'none'} |",
        f"| data | MNIST, {thousands(v['train_images'])} training images (stratified subset of "
        f"{thousands(MNIST_TRAIN)}), {st['epochs']} epoch{'s' * (st['epochs'] != 1)}, batch {st['batch']}, lr {st['lr']:g}; "
        f"{thousands(v['test_images'])} test images |",
        f"| test accuracy | **{_p(v['acc'])}** |",
        f"| training | {thousands(v['train_s'])} s wall, {thousands(v['train_cpu_s'])} s CPU ({v['steps']} steps, "
        f"{v['threads']} thread{'s' * (v['threads'] != 1)}, {v['device']}): {1e3 * v['train_cpu_s_per_image_epoch']:.0f} ms CPU per image |",
        f"| testing | {thousands(v['test_s'])} s wall, {thousands(v['test_cpu_s'])} s CPU: "
        f"{1e3 * v['test_cpu_s_per_image']:.0f} ms CPU per image |",
        f"| load average (1 min) at start / end | {lo0:.1f} / {lo1:.1f} on {v['cpu_count']} cores |",
        f"| a full {thousands(MNIST_TRAIN)}-image epoch at this rate | {full_h:.2f} CPU hours |",
    ]
    return "\n".join(rows) + "\n"


def _length(x: float) -> str:
    """A wavelength, pitch or distance in the unit the docs write it in: ``532 nm``,
    ``36 µm``, ``0.4 mm``, ``78 mm``, ``0.3 m`` (mm from 0.1 mm, m from 0.1 m)."""
    for low, scale, unit in ((0.1, 1.0, "m"), (1e-4, 1e-3, "mm"), (1e-6, 1e-6, "µm")):
        if x >= low:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} nm"


def _error(x: float | None) -> str:
    """A relative error to two significant figures: ``0.37``, ``0.10`` from 0.1 up (after
    rounding), ``1.8e-2`` below; ``None`` (an infinite error in strict JSON: the reference
    would need a grid past ``MAX_GRID``) is ``∞``."""
    if x is None:
        return "∞"
    mant, exp = f"{x:.1e}".split("e")
    return f"{x:.2f}" if int(exp) >= -1 else f"{mant}e{int(exp)}"


def propagation_geometries(root: Path) -> str:
    """Issue 47's propagation validity at six geometries: ``z / z_c`` and ``padding_error``
    of the stated propagation (ASM on pad N/2; the aperture field's error where the record
    has it), and what the planner picks at the record's tolerance."""
    d = load_json(root, GEOMETRIES)
    try:
        tol, rows = d["tol"], d["rows"]
        lines = [
            f"`{GEOMETRIES}` (`{d['command']}`)",
            "",
            f"| geometry (random-phase field, ASM on pad N/2) | z / z_c | padding_error | plan at tol {tol:g} |",
            "|---|---|---|---|",
        ]
        for r in rows:
            if (r["method"], r["pad"]) != ("asm", r["n"] // 2):
                raise RecordError(f"{GEOMETRIES}: row {r['name']!r} states {r['method']} on pad {r['pad']}, "
                                  f"not asm on pad N/2 = {r['n'] // 2} as the table's header says")
            geom = (f"{_length(r['wavelength_m'])} / {_length(r['pitch_m'])} / N = {r['n']} / "
                    f"{_length(r['z_m'])}")
            err = _error(r["padding_error"])
            if r["aperture_error"] is not None:
                err += f" (aperture {_error(r['aperture_error'])})"
            p = r["plan"]
            plan = f"{p['method'].upper()}, pad {p['pad']}"
            if (p["method"], p["pad"]) == (r["method"], r["pad"]):
                plan += " (unchanged)"
            elif p["method"] == "rs":
                plan += f" ({_error(p['error'])} against the brute-force sum)"
            else:
                plan += f" ({_error(p['error'])})"
            label = f"{r['label']}, " if r["label"] else ""
            lines.append(f"| {label}{geom} | {r['z_over_zc']:.2g} | {err} | {plan} |")
    except (KeyError, TypeError) as e:
        raise RecordError(f"{GEOMETRIES}: lacks {e}") from None
    return "\n".join(lines) + "\n"


FIGURES = {
    "d2nn-codesign-front": ((RESULTS, FRONT), codesign_front),
    "d2nn-paper-scale": ((PAPER_SCALE,), paper_scale),
    "d2nn-geometries": ((GEOMETRIES,), propagation_geometries),
    "d2nn-codesign-rerun": ((RESULTS,), codesign_rerun),
    "d2nn-robustness": ((RESULTS,), robustness),
    "d2nn-single-task": ((RESULTS, RESULTS_4, MORE_EPOCHS), single_task),
    "d2nn-multitask": ((RESULTS,), multitask),
}
