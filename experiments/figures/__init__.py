"""Figures rendered from committed records: the tables the docs quote from a reproduction,
a validation or a benchmark, written between markers in the markdown and checked in CI.

A figure is a block of markdown between ``<!-- figure: NAME -->`` and ``<!-- /figure -->``
(:mod:`experiments.figures.blocks`). Its text is made by a renderer from the records it
names, files committed under ``docs/`` (``docs/reproduction/results/**``,
``docs/benchmarks/*.json``, ``docs/search_quality/*.json``, ``docs/validation/*.json``);
one module per kind of record:

* :mod:`experiments.figures.shi2020` -- Shi et al. 2020's ``results.json``;
* :mod:`experiments.figures.hasco` -- HASCO's ``results.json``;
* :mod:`experiments.figures.d2nn` -- the multi-task D2NN's ``results.json``;
* :mod:`experiments.figures.meloppr` -- MeLoPPR's ``results.json`` and its FPGA rerun;
* :mod:`experiments.figures.benchmarks` -- the JSON outputs of the benchmark and
  search-quality scripts;
* :mod:`experiments.figures.scale_out` -- the ``--json`` records of the fault and scale
  harnesses (docs/howto/scale-out.md);
* :mod:`experiments.figures.guides` -- the ``--json`` records of the scripts behind the
  guide's optimizer, report and kernel figures;
* :mod:`experiments.figures.reproductions` -- the headline table of docs/REPRODUCTION.md,
  one row per paper from that paper's records.

:mod:`experiments.figures.catalog` names every figure; ``python -m experiments.figures
render`` rewrites every marked block in README.md and docs/ from its records, and
``render --check`` (run by ``make test``) fails, naming the file, the line and the figure,
when a block differs from what its records give: a rerun that changes a record cannot
leave a quoted figure stale. The renderers read JSON only; they import no reproduction.
"""

from experiments.figures.catalog import FIGURES, Figure, figure
from experiments.figures.render import Outcome, render_tree

__all__ = ["FIGURES", "Figure", "Outcome", "figure", "render_tree"]
