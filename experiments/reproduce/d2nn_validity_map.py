"""Validity map of the diffractive propagators (issue 47): which propagator
:func:`accelerators.diffraction_limits.plan_propagation` picks, at the default tolerance, over
distance against pitch for an ``N``-pixel aperture at one wavelength: the band-limited ASM on
the default pad ``N/2``, the ASM with more padding, Rayleigh-Sommerfeld on ``N/2``, or
nothing (refused) on grids up to ``--max-grid``. The dashed line is ``z_c`` of the default
grid, ``2 N dx^2 / lambda``; the co-design space of ``experiments/configs/d2nn_codesign.yaml``
is the box (532 nm only).

Run: ``python -m experiments.reproduce.d2nn_validity_map --out docs/reproduction/results/d2nn/validity_map.png``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from accelerators.diffraction_limits import PADDING_TOL, PropagationValidityError, plan_propagation

CLASSES = ("asm, pad N/2", "asm, more pad", "rs, pad N/2", "rs, more pad", "refused")


def classify(lam: float, pitch: float, n: int, z: float, tol: float, max_grid: int) -> tuple[int, int]:
    try:
        p = plan_propagation(lam, pitch, n, z, tol=tol, max_grid=max_grid, prefer=("asm", n // 2))
    except PropagationValidityError:
        return 4, 0
    base = 0 if p.method == "asm" else 2
    return base + (p.pad != n // 2), n + 2 * p.pad


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--tol", type=float, default=PADDING_TOL)
    ap.add_argument("--max-grid", type=int, default=1024)
    ap.add_argument("--points", type=int, default=13)
    ap.add_argument("--out", type=Path, default=Path("runs/validity_map.png"))
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    panels = {"532 nm (visible; the co-design space)": (532e-9, np.geomspace(0.55, 200, a.points),
                                                      np.geomspace(5e-3, 0.5, a.points)),
              "0.75 mm (THz, Lin et al. 2018)": (0.75e-3, np.geomspace(0.52, 20, a.points),
                                                np.geomspace(3e-3, 1.0, a.points))}
    cmap = ListedColormap(["#4daf4a", "#a6d96a", "#377eb8", "#92c5de", "#e41a1c"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    summary = {}
    t0 = time.process_time()
    for ax, (title, (lam, ratios, zs)) in zip(axes, panels.items(), strict=True):
        grid = np.zeros((len(zs), len(ratios)), int)
        for i, z in enumerate(zs):
            for j, r in enumerate(ratios):
                grid[i, j], _ = classify(lam, r * lam, a.n, z, a.tol, a.max_grid)
        ax.pcolormesh(ratios, zs, grid, cmap=cmap, vmin=-0.5, vmax=4.5, shading="nearest")
        ax.plot(ratios, 2 * a.n * (ratios * lam) ** 2 / lam, "k--", label="z_c of the default grid (2N dx²/λ)")
        if lam == 532e-9:
            x0, x1 = 12e-6 / lam, 48e-6 / lam
            ax.add_patch(plt.Rectangle((x0, 0.02), x1 - x0, 0.28, fill=False, ec="k", lw=1.5,
                                       label="co-design space (12-48 µm, 20-300 mm)"))
            ax.plot([36e-6 / lam], [0.1], "k*", ms=12, label="reproduction (36 µm, 0.1 m)")
        else:
            ax.plot([0.4e-3 / lam], [0.03], "k*", ms=12, label="Lin et al. 2018 (0.4 mm, 3 cm)")
        ax.set(xscale="log", yscale="log", xlabel="pitch / wavelength", ylabel="distance z [m]", title=title,
               ylim=(zs[0], zs[-1]))
        ax.legend(loc="lower right", fontsize=7)
        summary[title] = {c: int((grid == k).sum()) for k, c in enumerate(CLASSES)}
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(k)) for k in range(5)]
    fig.legend(handles, CLASSES, loc="upper center", ncol=5)
    fig.suptitle(f"N = {a.n}, tolerance {a.tol:g} (padding_error, random-phase field), grids up to {a.max_grid}",
                 y=0.02, fontsize=9)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110, bbox_inches="tight")
    summary["cpu_s"] = time.process_time() - t0
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
