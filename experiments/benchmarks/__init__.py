"""Benchmarks and cross-checks: scripts that print measured figures, each against a
baseline measured in the same run (``python -m experiments.benchmarks.NAME``).

* :mod:`~experiments.benchmarks.evaluator_throughput` -- mappings per second of the cost
  model (and ZigZag's, in its own venv); :mod:`~experiments.benchmarks.scalesim_compare` --
  the systolic cycle model against SCALE-Sim v3; :mod:`~experiments.benchmarks.zigzag_compare`;
  :mod:`~experiments.benchmarks.silicon_compare` -- Eyeriss v1 (AlexNet) and TPU v1 published figures;
  :mod:`~experiments.benchmarks.zigzag_crossval` -- counts, energy and cycles against ZigZag 3.9.1.
* Search: :mod:`~experiments.benchmarks.bo_enumerable`,
  :mod:`~experiments.benchmarks.gradient_vs_bo`, :mod:`~experiments.benchmarks.hasco_mobo_hv`,
  :mod:`~experiments.benchmarks.hil_search`.
* Studies: :mod:`~experiments.benchmarks.scaling`, :mod:`~experiments.benchmarks.chaos`.
* MeLoPPR: :mod:`~experiments.benchmarks.ppr_memory_latency`.
"""

__all__: list[str] = []  # scripts: run them as modules

