"""Reproduce the multi-task diffractive deep neural network (Li, Chen, Sensale-Rodriguez,
Gao, Yu, Sci. Rep. 11:11013, 2021) on CPU: physics checks, single- and multi-task
training, the multi-task regularization, noise robustness and a co-design sweep.

The paper's Methods and Results were not available to us (only its abstract), so its own
accuracy and noise figures cannot be compared; the "reference" column holds independent
reference numbers -- an unpublished numpy kernel check made while this reproduction was
planned [inferred], the cost model's worked examples for LightRidge's and Lin et al.'s
geometries, and LightRidge's GPU accuracy (github.com/lightridge/lightridge
``ASPLOS2024_AE/README.md``) -- and "n/a" where there is none. Every "ours" figure is measured in this run.

1. **Physics** -- band-limited ASM energy, ``H(0,0) = e^{jkz}``, ASM vs Fresnel relative
   L2 (visible 200+2x100 / 0.3 m; CPU 64+2x32 / 0.1 m; THz 200+2x100 / 3 cm) with the
   validity check, the central-energy fraction after one random-phase hop, Gaussian-beam
   width vs ``w0 sqrt(1 + (z/zR)^2)``.
2. **Cost model** -- :mod:`accelerators.diffractive` at LightRidge's and Lin 2018's
   geometries and the multi-task layer count.
3. **Single task** -- MNIST and Fashion-MNIST at the CPU scale (N = 64, pad 32, 36 um,
   532 nm, z = 0.1 m, L = 1..3, phase-only, 10 regions of 6 px), >= 3 seeds each, next to a
   logistic-regression baseline (scikit-learn) on the same images' 28 x 28 pixels.
4. **Multi-task** -- T = 2 (MNIST, Fashion) at L = 3 with K_s = 0..3 shared layers vs the
   two single-task systems of the same depth: accuracy per task, task recognition, layers
   and area saved.
5. **Regularization** -- loss-weight ratio lambda_MNIST / lambda_Fashion in
   {0.25, 0.5, 1, 2, 4} (and the per-branch amplitude factors) at K_s = 2: the accuracy
   trade-off (plot, Spearman rank correlation).
6. **Robustness** -- the L = 3 MNIST models, plain and noise-aware (each plain model
   fine-tuned for one epoch with :data:`~evaluators.optics.robustness.NOISE_AWARE` noise
   injected; 3 seeds each), evaluated under every noise source of
   :data:`evaluators.optics.noise.NOISE_SWEEPS`.
7. **Co-design** -- MOBO over ``experiments/configs/d2nn_codesign.yaml``'s space
   (accuracy of each task vs physical layers) at a cheap training fidelity; Pareto front.
8. **GPU scale** (``--gpu``) -- 200 x 200, 5 layers, 0.3 m, full MNIST, on ``--device cuda``
   (asking for CUDA without it exits at once with one line).

Writes ``results.json``, ``table.md``, CSVs and PNGs to ``runs/reproduce/d2nn/``.
Run: ``coexplore reproduce d2nn [--quick] [--gpu --device cuda]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import math
import platform
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from accelerators.diffractive import LIGHTRIDGE_VISIBLE, LIN2018_THZ, DiffractiveAccelerator
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.multitask_evaluator import loss_weights
from evaluators.optics.noise import NOISE_SWEEPS
from evaluators.optics.propagation import (
    asm_transfer,
    check_propagation,
    fresnel_transfer,
    propagate,
    rs_transfer,
)
from evaluators.optics.robustness import NOISE_AWARE, plot_robustness, robustness_table, summarize
from evaluators.optics.train import (
    TaskData,
    TrainConfig,
    evaluate,
    prepare_tasks,
    resolve_device,
    train,
)
from experiments.reproduce import jsonable

logger = logging.getLogger(__name__)

#: Reference numbers; none is the anchor paper's own (its Results were not available).
#: ASM vs Fresnel and central-energy fractions: an independent numpy check (unpublished,
#: band-limited ASM of Matsushima & Shimobaba, Opt. Express 17:19662, 2009, against the
#: Fresnel transfer function) [inferred]; latencies ``(L + 1) z / c`` at LightRidge's
#: defaults (arXiv 2306.11268) and Lin et al.'s geometry (Science 361:1004, 2018); the
#: shot-noise energy and the 7-vs-10 layer count are worked examples of
#: :mod:`accelerators.diffractive`'s cost model; 93.26 % is LightRidge's 10-epoch MNIST
#: validation accuracy in github.com/lightridge/lightridge ``ASPLOS2024_AE/README.md``.
NOTES = {
    "asm_fresnel_l2_visible": 1.2e-3, "asm_fresnel_l2_cpu": 4.1e-4, "asm_fresnel_l2_thz": 1.39,
    "central_energy_visible": 0.72, "central_energy_cpu": 0.70, "central_energy_thz": 0.54,
    "latency_ns_lightridge": 6.0, "latency_ns_lin": 0.6, "energy_pj_532": 0.37,
    "mt_layers": (7, 10), "lightridge_gpu_acc_10ep": 0.9326,
}
RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0)


# ------------------------------------------------------------------------------ physics
def _random_phase(n: int, m: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    u = torch.zeros(m, m, dtype=torch.complex64)
    p = (m - n) // 2
    u[p:p + n, p:p + n] = torch.polar(torch.ones(n, n), 2 * math.pi * torch.rand(n, n, generator=g))
    return u


def physics_checks() -> dict[str, Any]:
    """The propagation checks of :data:`NOTES`, measured with :mod:`evaluators.optics.propagation`."""
    out: dict[str, Any] = {}
    geoms = {"visible": (532e-9, 36e-6, 200, 100, 0.3), "cpu": (532e-9, 36e-6, 64, 32, 0.1),
             "thz": (0.75e-3, 0.4e-3, 200, 100, 0.03)}
    for key, (lam, dx, n, pad, z) in geoms.items():
        m = n + 2 * pad
        u = _random_phase(n, m)
        ha = asm_transfer(m, dx, lam, z)
        a = propagate(u, ha)
        f = propagate(u, fresnel_transfer(m, dx, lam, z))
        e_in = float((u.abs() ** 2).sum())
        rep = check_propagation(lam, dx, m, z, "fresnel", warn=False)
        out[key] = {
            "asm_fresnel_l2": float(torch.linalg.vector_norm(a - f) / torch.linalg.vector_norm(a)),
            "asm_energy_ratio": float((a.abs() ** 2).sum()) / e_in,
            # fraction of the propagated energy that stays in the central N^2 (the reference check's
            # definition: at THz it is 0.54 of what survives the evanescent loss)
            "central_energy": float((a[pad:pad + n, pad:pad + n].abs() ** 2).sum() / (a.abs() ** 2).sum()),
            "central_energy_of_input": float((a[pad:pad + n, pad:pad + n].abs() ** 2).sum()) / e_in,
            "h00_error": abs(complex(ha[0, 0]) - complex(math.cos(2 * math.pi * z / lam), math.sin(2 * math.pi * z / lam))),
            "fresnel_valid": rep.ok, "fresnel_problems": list(rep.problems),
            "fresnel_phase_error_rad": rep.fresnel_phase_error_rad,
        }
    # Gaussian beam (532 nm, 8 um, 256^2, w0 = 60 um), width over the central half
    lam, dx, m, w0 = 532e-9, 8e-6, 256, 60e-6
    zr = math.pi * w0**2 / lam
    x = (torch.arange(m, dtype=torch.float64) - m // 2) * dx
    yy, xx = torch.meshgrid(x, x, indexing="ij")
    u0 = torch.exp(-(xx**2 + yy**2) / w0**2).to(torch.complex64)
    worst: dict[str, float] = {}
    for name, fn, zs in (("asm", asm_transfer, (0.5, 1, 2, 3)), ("rs", rs_transfer, (2, 3, 4))):
        errs = []
        for k in zs:
            z = k * zr
            u = torch.fft.fftshift(torch.fft.ifft2(torch.fft.fft2(torch.fft.ifftshift(u0)) * fn(m, dx, lam, z)))
            c = u[m // 4:-m // 4, m // 4:-m // 4].abs() ** 2
            xs = x[m // 4:-m // 4]
            w = c.sum(0).double()
            width = 2 * math.sqrt(float((w * xs**2).sum() / w.sum()))
            errs.append(abs(width / (w0 * math.sqrt(1 + k**2)) - 1))
        worst[name] = max(errs)
    out["gaussian_width_rel_error"] = worst
    return out


def cost_checks() -> dict[str, Any]:
    mt = LIGHTRIDGE_VISIBLE.with_(tasks=2, shared_layers=3)
    return {"lightridge": LIGHTRIDGE_VISIBLE.cost(), "lin2018": LIN2018_THZ.cost(),
            "multitask_T2_L5_Ks3": mt.cost(), "energy_pj_lightridge": LIGHTRIDGE_VISIBLE.energy_j * 1e12}


# ------------------------------------------------------------------------------ training
def cpu_spec(s: dict[str, Any], layers: int, tasks: int = 1, shared: int | None = None,
             phase_levels: int | None = None) -> DiffractiveAccelerator:
    return DiffractiveAccelerator(n=s["n"], pad=s["n"] // 2, pitch_m=36e-6, wavelength_m=532e-9, z_m=s["z_m"],
                                  layers=layers, tasks=tasks, shared_layers=layers if shared is None else shared,
                                  detector_size_px=max(2, s["n"] // 10), phase_levels=phase_levels)


def fit(spec: DiffractiveAccelerator, tasks: list[TaskData], s: dict[str, Any], seed: int, *,
        amplitude: float | tuple[float, ...] | None = None, weights: tuple[float, ...] | None = None,
        noise: Any = None, device: str = "cpu") -> tuple[DiffractiveNetwork, dict[str, Any]]:
    net = DiffractiveNetwork(spec, amplitude_factors=s["amplitude"] if amplitude is None else amplitude,
                             seed=seed)
    cfg = TrainConfig(epochs=s["epochs"], batch_size=s["batch"], lr=s["lr"], loss_weights=weights,
                      noise=noise, seed=seed, device=device)
    r = train(net, tasks, cfg)
    ev = evaluate(net, tasks)
    ev.update(train_s=r.seconds, threads=r.threads, steps=r.steps, device=r.device)
    return net, ev


def logistic_baseline(task: TaskData) -> float:
    from sklearn.linear_model import LogisticRegression

    xtr = task.train_x.reshape(len(task.train_y), -1).numpy() / 255.0
    xte = task.test_x.reshape(len(task.test_y), -1).numpy() / 255.0
    clf = LogisticRegression(max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(xtr, task.train_y.numpy())
    return float(clf.score(xte, task.test_y.numpy()))


def _ms(v: list[float]) -> dict[str, float]:
    return {"mean": float(np.mean(v)), "std": float(np.std(v)), "n": len(v)}


def spearman(x: list[float], y: list[float]) -> float:
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    if np.std(rx) == 0 or np.std(ry) == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


# ------------------------------------------------------------------------------ co-design
def run_codesign(trials: int, n_init: int, opts: dict[str, Any], out: Path, seed: int = 0) -> dict[str, Any]:
    from experiments.config import load_config
    from experiments.study import Study

    cfg_path = Path(__file__).resolve().parents[1] / "configs" / "d2nn_codesign.yaml"
    loaded = load_config(cfg_path)
    objectives = dict(loaded.config.objectives)
    storage = f"sqlite:///{(out / 'codesign.db').resolve()}"
    tag = "-".join(f"{k}{v}" for k, v in sorted(opts.items()))
    study = Study.create(f"d2nn-{tag}-s{seed}", loaded.space, objectives, "evaluators.optics.multitask_evaluator:D2NNCoDesign",
                         "mobo", optimizer_options={"n_init": n_init, "pool_size": 500}, evaluator_options=opts,
                         storage=storage, seed=seed)
    t0 = time.perf_counter()
    study.optimize(trials, workers=1, progress=False)
    wall = time.perf_counter() - t0
    front = study.pareto_front(feasible_only=True)
    front_csv = out / "codesign_pareto_front.csv"
    front.to_csv(front_csv, index=False)
    study.trials_dataframe().to_csv(out / "codesign_trials.csv", index=False)
    try:
        plots = [str(p) for p in study.plot(out / "codesign_plots")]
    except Exception as e:  # plotting must not lose the numbers
        logger.warning("co-design plots failed: %s", e)
        plots = []
    cols = [c for c in front.columns if c.startswith(("params_", "metrics_"))]
    return {"study": study.name, "storage": storage, "trials": trials, "wall_s": wall,
            "status_counts": {k.value: v for k, v in study.status_counts().items()},
            "front_size": len(front), "front_csv": str(front_csv), "plots": plots,
            "front": json.loads(front[cols].to_json(orient="records")), "fidelity": opts}


# ------------------------------------------------------------------------------ plots
def plot_regularization(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for kind, ax in zip(("loss_ratio", "amplitude_ratio"), axes):
        sub = [r for r in rows if r["knob"] == kind]
        if not sub:
            ax.axis("off")
            continue
        xs = [r["value"] for r in sub]
        ax.plot(xs, [r["acc_mnist"] for r in sub], "o-", label="MNIST (task 1)")
        ax.plot(xs, [r["acc_fashion"] for r in sub], "s-", label="Fashion-MNIST (task 2)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.minorticks_off()
        ax.set_xlabel("lambda_1 / lambda_2" if kind == "loss_ratio" else "a_1 / a_2 (a_2 fixed)")
        ax.set_ylabel("test accuracy")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("Multi-task regularization: accuracy trade-off (T=2, L=3, K_s=2)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------ table
def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.2f} %"


def write_table(res: dict[str, Any], path: Path, cmd: str) -> None:
    lines = ["| quantity | reference | ours | command | note |", "|---|---|---|---|---|"]

    def add(q: str, ref: str, ours: str, note: str = "") -> None:
        lines.append(f"| {q} | {ref} | {ours} | `{cmd}` | {note} |")

    ph = res.get("physics", {})
    for key, label in (("visible", "visible 532 nm/36 um/200+2x100/0.3 m"), ("cpu", "CPU 532 nm/36 um/64+2x32/0.1 m"),
                       ("thz", "THz 0.75 mm/0.4 mm/200+2x100/3 cm")):
        if key in ph:
            d = ph[key]
            add(f"ASM vs Fresnel rel. L2, {label}", f"{NOTES['asm_fresnel_l2_' + key]:g}", f"{d['asm_fresnel_l2']:.3g}",
                "Fresnel check: " + ("valid" if d["fresnel_valid"] else "REFUSED (" + d["fresnel_problems"][0][:60] + "...)"))
            add(f"central energy after 1 hop, {label}", f"{NOTES['central_energy_' + key]:g}", f"{d['central_energy']:.2f}")
            add(f"band-limited ASM energy ratio, {label}", "1.0000 (visible)", f"{d['asm_energy_ratio']:.5f}",
                "evanescent corners lost at THz" if key == "thz" else "")
    if "gaussian_width_rel_error" in ph:
        g = ph["gaussian_width_rel_error"]
        add("Gaussian beam width vs w0 sqrt(1+(z/zR)^2), worst rel. error", "< 2 % (issue)",
            f"ASM {100 * g['asm']:.2f} %, RS {100 * g['rs']:.2f} %")
    c = res.get("cost", {})
    if c:
        add("optical latency (L+1)z/c, LightRidge / Lin 2018", "6.0 / 0.6 ns",
            f"{c['lightridge']['latency_ns']:.2f} / {c['lin2018']['latency_ns']:.2f} ns")
        add("energy per inference at the shot-noise floor, 532 nm, 10 detectors", "0.37 pJ",
            f"{c['energy_pj_lightridge']:.3f} pJ")
        add("layers, T=2 L=5 K_s=3 vs separate", "7 vs 10",
            f"{c['multitask_T2_L5_Ks3']['physical_layers']:.0f} vs {c['multitask_T2_L5_Ks3']['separate_layers']:.0f}")
    st = res.get("single", {})
    for ds, per in st.get("d2nn", {}).items():
        for L, d in per.items():
            add(f"single-task {ds}, N={res['settings']['n']}, L={L}, test acc ({d['acc']['n']} seeds)", "n/a (no CPU-scale value published)",
                f"{_pct(d['acc']['mean'])} +- {100 * d['acc']['std']:.2f}", f"{d['train_s_mean']:.0f} s/model, {res['settings']['threads']} threads")
    for ds, v in st.get("logreg", {}).items():
        add(f"logistic regression {ds}, 28x28 pixels, same images", "n/a", _pct(v))
    mt = res.get("multitask", {})
    for r in mt.get("rows", []):
        add(f"multi-task K_s={r['shared']} of L={r['layers']}: MNIST / Fashion acc", "n/a (paper Results unavailable)",
            f"{_pct(r['acc_mnist'])} / {_pct(r['acc_fashion'])}",
            f"recognition {_pct(r['recognition'])}; {r['physical_layers']} layers vs {r['separate_layers']} separate, "
            f"area {r['area_mm2']:.1f} vs {r['separate_area_mm2']:.1f} mm^2")
    if "separate" in mt:
        s = mt["separate"]
        add(f"separate single-task systems, L={s['layers']}: MNIST / Fashion acc", "n/a",
            f"{_pct(s['acc_mnist'])} / {_pct(s['acc_fashion'])}", f"{s['physical_layers']} layers, {s['area_mm2']:.1f} mm^2")
    rg = res.get("regularization", {})
    if rg:
        add("loss-ratio sweep: Spearman(ratio, acc MNIST) / Spearman(ratio, acc Fashion)", "monotone (+1 / -1)",
            f"{rg['spearman_mnist']:+.2f} / {rg['spearman_fashion']:+.2f}", "regularization.png")
    rb = res.get("robustness", {})
    if rb:
        for src, d in rb.get("worst", {}).items():
            add(f"robustness: {src} at {d['level']}, plain / noise-aware acc", "n/a",
                f"{_pct(d['plain'])} / {_pct(d['aware'])}", f"ideal {_pct(d['ideal_plain'])} / {_pct(d['ideal_aware'])}")
    cd = res.get("codesign")
    if cd:
        add("co-design MOBO (acc1, acc2, layers): trials / front size", "n/a",
            f"{cd['trials']} / {cd['front_size']}", f"{cd['wall_s']:.0f} s; codesign_pareto_front.csv")
    gpu = res.get("gpu")
    if gpu:
        add("GPU scale 200x200, L=5, 0.3 m, MNIST", f"{100 * NOTES['lightridge_gpu_acc_10ep']:.2f} % (LightRidge, 10 epochs)",
            gpu.get("acc_str", "not run"), gpu.get("note", ""))
    path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------ main
def settings_for(quick: bool) -> dict[str, Any]:
    if quick:
        return {"n": 32, "z_m": 0.05, "layers": (1, 2), "mt_layers": 2, "seeds": 3, "train": 600, "test": 300,
                "epochs": 1, "batch": 32, "lr": 0.1, "amplitude": 1.2, "ratios": (0.25, 1.0, 4.0),
                "amp_ratios": (), "finetune_epochs": 1, "finetune_lr": 0.02, "robust_test": 150, "noise_seeds": 2, "robust_levels": 3,
                "codesign_trials": 4, "codesign_init": 3,
                "codesign_opts": {"train_samples": 200, "test_samples": 100, "epochs": 1}}
    return {"n": 64, "z_m": 0.1, "layers": (1, 2, 3), "mt_layers": 3, "seeds": 3, "train": 1500, "test": 1000,
            "epochs": 2, "batch": 32, "lr": 0.05, "amplitude": 1.2, "ratios": RATIOS,
            "amp_ratios": (0.8, 1.25), "finetune_epochs": 1, "finetune_lr": 0.02, "robust_test": 200, "noise_seeds": 2, "robust_levels": None,
            "codesign_trials": 8, "codesign_init": 5,
            "codesign_opts": {"train_samples": 500, "test_samples": 300, "epochs": 1}}


def _sweeps(levels: int | None) -> tuple:
    if not levels:
        return NOISE_SWEEPS
    out = []
    for name, field, lv in NOISE_SWEEPS:
        idx = np.unique(np.linspace(0, len(lv) - 1, levels).round().astype(int))
        out.append((name, field, tuple(lv[i] for i in idx)))
    return tuple(out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="coexplore reproduce d2nn", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N=32, L<=2, 600 train / 300 test images per task, "
                    "1 epoch, 3 noise levels per source, 4 co-design trials (a few minutes on 2 CPU cores)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (CUDA must be available)")
    ap.add_argument("--gpu", action="store_true", help="also train the GPU-scale config (200x200, 5 layers)")
    ap.add_argument("--gpu-epochs", type=int, default=10)
    ap.add_argument("--gpu-train", type=int, default=None, help="training images for --gpu (default all 60,000)")
    ap.add_argument("--gpu-test", type=int, default=None, help="test images for --gpu (default all 10,000)")
    ap.add_argument("--codesign-trials", type=int, default=None, help="MOBO trials (0 skips)")
    ap.add_argument("--train", type=int, default=None, help="training images per task (default 1500; quick 600)")
    ap.add_argument("--test", type=int, default=None, help="test images per task (default 1000; quick 300)")
    ap.add_argument("--epochs", type=int, default=None, help="epochs (default 2; quick 1)")
    ap.add_argument("--seeds", type=int, default=None, help="model seeds (default 3)")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: "
                    "physics,single,multitask,regularization,robustness,codesign")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/d2nn"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    try:
        device = str(resolve_device(args.device))
    except RuntimeError as e:
        raise SystemExit(f"error: {e}") from None
    q = args.quick
    s = settings_for(q)
    for key in ("train", "test", "epochs", "seeds"):
        if getattr(args, key) is not None:
            s[key] = getattr(args, key)
    s["threads"] = torch.get_num_threads()
    skip = {x.strip() for x in args.skip.split(",") if x.strip()}
    trials = s["codesign_trials"] if args.codesign_trials is None else args.codesign_trials
    cmd = "coexplore reproduce d2nn" + (" --quick" if q else "")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    res: dict[str, Any] = {"settings": {**s, "quick": q, "device": device, "python": platform.python_version(),
                                        "torch": torch.__version__}}
    if "physics" not in skip:
        res["physics"] = physics_checks()
        print("physics: ASM-Fresnel L2 visible {:.2e}, cpu {:.2e}, THz {:.2f}; Gaussian worst {:.2%}".format(
            res["physics"]["visible"]["asm_fresnel_l2"], res["physics"]["cpu"]["asm_fresnel_l2"],
            res["physics"]["thz"]["asm_fresnel_l2"], max(res["physics"]["gaussian_width_rel_error"].values())))
    res["cost"] = cost_checks()
    mnist, fashion = prepare_tasks(["mnist", "fashion"], s["train"], s["test"], seed=0)
    res["data"] = {"mnist": mnist.source, "fashion": fashion.source, "train_per_task": len(mnist.train_y),
                   "test_per_task": len(mnist.test_y)}
    print(f"data: {res['data']}")
    L3 = s["mt_layers"]
    nets: dict[tuple[str, int, int], DiffractiveNetwork] = {}
    # ---- single task
    if "single" not in skip or "multitask" not in skip or "robustness" not in skip:
        single: dict[str, Any] = {"d2nn": {}, "logreg": {}}
        rows = []
        for ds, task in (("mnist", mnist), ("fashion", fashion)):
            layers = s["layers"] if ds == "mnist" and "single" not in skip else (L3,)
            single["d2nn"][ds] = {}
            for L in layers:
                accs, secs = [], []
                for seed in range(s["seeds"]):
                    net, ev = fit(cpu_spec(s, L), [task], s, seed, device=device)
                    nets[(ds, L, seed)] = net
                    accs.append(ev["acc"][0])
                    secs.append(ev["train_s"])
                    rows.append({"dataset": ds, "layers": L, "seed": seed, "acc": ev["acc"][0], "train_s": ev["train_s"]})
                single["d2nn"][ds][L] = {"acc": _ms(accs), "train_s_mean": float(np.mean(secs))}
                print(f"single {ds} L={L}: {np.mean(accs):.4f} +- {np.std(accs):.4f} ({s['seeds']} seeds, "
                      f"{np.mean(secs):.0f} s each)")
            single["logreg"][ds] = logistic_baseline(task)
            print(f"logistic regression {ds}: {single['logreg'][ds]:.4f}")
        pd.DataFrame(rows).to_csv(out / "single_task.csv", index=False)
        res["single"] = single
    # ---- multi-task vs separate
    if "multitask" not in skip:
        sep_m = res["single"]["d2nn"]["mnist"][L3]["acc"]["mean"]
        sep_f = res["single"]["d2nn"]["fashion"][L3]["acc"]["mean"]
        mt_rows = []
        for ks in range(L3 + 1):
            spec = cpu_spec(s, L3, tasks=2, shared=ks)
            _, ev = fit(spec, [mnist, fashion], s, 0, device=device)
            mt_rows.append({"layers": L3, "shared": ks, "acc_mnist": ev["acc"][0], "acc_fashion": ev["acc"][1],
                            "recognition": float(np.mean(ev["recognition"])), "joint": float(np.mean(ev["joint"])),
                            "physical_layers": spec.physical_layers, "separate_layers": spec.separate_layers,
                            "layers_saved": spec.layers_saved, "area_mm2": spec.area_mm2,
                            "separate_area_mm2": spec.separate_layers * spec.layer_area_m2 * 1e6,
                            "train_s": ev["train_s"]})
            print(f"multi-task K_s={ks}: MNIST {ev['acc'][0]:.4f}, Fashion {ev['acc'][1]:.4f}, recognition "
                  f"{np.mean(ev['recognition']):.4f}; {spec.physical_layers} vs {spec.separate_layers} layers")
        one = cpu_spec(s, L3)
        res["multitask"] = {"rows": mt_rows, "separate": {
            "layers": L3, "acc_mnist": sep_m, "acc_fashion": sep_f, "physical_layers": 2 * L3,
            "area_mm2": 2 * one.area_mm2, "seeds": s["seeds"]}}
        pd.DataFrame(mt_rows).to_csv(out / "multitask.csv", index=False)
    # ---- regularization
    if "regularization" not in skip:
        ks = min(2, L3 - 1)
        reg_rows = []
        done = {row["shared"]: row for row in res.get("multitask", {}).get("rows", [])}
        for r in s["ratios"]:
            if r == 1.0 and ks in done:  # the same run as the multi-task table's K_s row (seed 0)
                ev = {"acc": [done[ks]["acc_mnist"], done[ks]["acc_fashion"]], "recognition": [done[ks]["recognition"]]}
            else:
                _, ev = fit(cpu_spec(s, L3, tasks=2, shared=ks), [mnist, fashion], s, 0, weights=loss_weights(r),
                            device=device)
            reg_rows.append({"knob": "loss_ratio", "value": r, "acc_mnist": ev["acc"][0], "acc_fashion": ev["acc"][1],
                             "recognition": float(np.mean(ev["recognition"]))})
            print(f"lambda_1/lambda_2 = {r:g}: MNIST {ev['acc'][0]:.4f}, Fashion {ev['acc'][1]:.4f}")
        for ar in s["amp_ratios"]:
            a = (s["amplitude"] * ar, s["amplitude"])
            _, ev = fit(cpu_spec(s, L3, tasks=2, shared=ks), [mnist, fashion], s, 0, amplitude=a, device=device)
            reg_rows.append({"knob": "amplitude_ratio", "value": ar, "acc_mnist": ev["acc"][0],
                             "acc_fashion": ev["acc"][1], "recognition": float(np.mean(ev["recognition"]))})
            print(f"a_1/a_2 = {ar:g}: MNIST {ev['acc'][0]:.4f}, Fashion {ev['acc'][1]:.4f}")
        if s["amp_ratios"]:
            base = next(r for r in reg_rows if r["knob"] == "loss_ratio" and r["value"] == 1.0)
            reg_rows.append({**base, "knob": "amplitude_ratio", "value": 1.0})
            reg_rows.sort(key=lambda r: (r["knob"], r["value"]))
        lr_rows = [r for r in reg_rows if r["knob"] == "loss_ratio"]
        res["regularization"] = {
            "shared": ks, "rows": reg_rows,
            "spearman_mnist": spearman([r["value"] for r in lr_rows], [r["acc_mnist"] for r in lr_rows]),
            "spearman_fashion": spearman([r["value"] for r in lr_rows], [r["acc_fashion"] for r in lr_rows])}
        pd.DataFrame(reg_rows).to_csv(out / "regularization.csv", index=False)
        plot_regularization(reg_rows, out / "regularization.png")
    # ---- robustness
    if "robustness" not in skip:
        sub = TaskData(mnist.name, mnist.train_x, mnist.train_y, mnist.test_x[: s["robust_test"]],
                       mnist.test_y[: s["robust_test"]], mnist.source)
        plain = [nets[("mnist", L3, seed)] for seed in range(s["seeds"])]
        aware = []
        for seed in range(s["seeds"]):
            # noise-aware fine-tuning: each plain model, trained on with noise injected (training
            # with this much noise from scratch cost ~18 points of ideal accuracy at this budget)
            net = copy.deepcopy(plain[seed])
            cfg = TrainConfig(epochs=s["finetune_epochs"], batch_size=s["batch"], lr=s["finetune_lr"],
                              noise=NOISE_AWARE, seed=1000 + seed, device=device)
            train(net, [mnist], cfg)
            aware.append(net)
            print(f"noise-aware MNIST L={L3} seed {seed}: ideal acc {evaluate(net, [mnist])['acc'][0]:.4f}")
        t = time.perf_counter()
        df = robustness_table({"plain": plain, "noise-aware": aware}, sub, sweeps=_sweeps(s["robust_levels"]),
                              noise_seeds=range(s["noise_seeds"]))
        df.to_csv(out / "robustness.csv", index=False)
        summ = summarize(df)
        summ.to_csv(out / "robustness_summary.csv", index=False)
        plot_robustness(df, out / "robustness.png", f"MNIST, N={s['n']}, L={L3}: {s['seeds']} model seeds x "
                        f"{s['noise_seeds']} noise seeds, {len(sub.test_y)} test images")
        worst = {}
        for src in dict.fromkeys(df["source"]):
            d = df[df["source"] == src]
            last = d["level_label"].iloc[-1]
            ideal = df[(df["level_label"] == "ideal") | (df["level"] == 0)]
            m = d.groupby(["variant", "level_label"])["accuracy"].mean()
            worst[src] = {"level": last, "plain": float(m[("plain", last)]), "aware": float(m[("noise-aware", last)]),
                          "ideal_plain": float(ideal[ideal["variant"] == "plain"]["accuracy"].mean()),
                          "ideal_aware": float(ideal[ideal["variant"] == "noise-aware"]["accuracy"].mean())}
        res["robustness"] = {"worst": worst, "seconds": time.perf_counter() - t, "test_images": len(sub.test_y),
                             "noise_aware": NOISE_AWARE.as_dict()}
        print(f"robustness: {len(df)} evaluations in {res['robustness']['seconds']:.0f} s")
    # ---- co-design
    if "codesign" not in skip and trials > 0:
        res["codesign"] = run_codesign(trials, s["codesign_init"], s["codesign_opts"], out)
        print(f"co-design: {trials} trials, front {res['codesign']['front_size']} points "
              f"({res['codesign']['wall_s']:.0f} s)")
    # ---- GPU scale (runs on --device; meant for cuda, a CPU run needs --gpu-train small)
    if args.gpu:
        if not device.startswith("cuda"):
            print("warning: the GPU-scale config on CPU is slow; pass --device cuda on a GPU machine")
        gs = {**s, "n": 200, "z_m": 0.3, "epochs": args.gpu_epochs, "batch": 256, "lr": 0.05}
        spec = DiffractiveAccelerator(n=200, pad=100, z_m=0.3, layers=5, detector_size_px=20)
        full = prepare_tasks(["mnist"], args.gpu_train, args.gpu_test, seed=0)[0]
        _, ev = fit(spec, [full], gs, 0, device=device)
        res["gpu"] = {"acc": ev["acc"][0], "acc_str": _pct(ev["acc"][0]), "train_s": ev["train_s"],
                      "note": f"{args.gpu_epochs} epochs, {len(full.train_y)} train / {len(full.test_y)} test images, "
                              f"{ev['device']}, {ev['train_s']:.0f} s"}
        print(f"GPU-scale config (200x200, L=5): {ev['acc'][0]:.4f} in {ev['train_s']:.0f} s on {ev['device']}")
    res["seconds"] = time.perf_counter() - t_all
    (out / "results.json").write_text(json.dumps(jsonable(res), indent=1))
    write_table(res, out / "table.md", cmd)
    print(f"results: {out / 'results.json'}, table: {out / 'table.md'} ({res['seconds']:.0f} s)")
    return res


if __name__ == "__main__":
    main()
