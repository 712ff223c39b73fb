"""Performance benchmarks: how fast and how lean coexplore's own code is, each figure
measured against a baseline in the same run (``python -m experiments.benchmarks.NAME``).

What goes here: scripts that print measured speed or memory (rates, CPU and wall
seconds, peak memory, proof times) of the cost model, the mappers and the training and
graph kernels, with their committed outputs under ``docs/benchmarks/``. Not here:
agreement with another tool or with silicon (:mod:`experiments.validation`), how good a
search gets within a budget (:mod:`experiments.search_quality`), fault and scale
harnesses (:mod:`experiments.harnesses`).

* :mod:`~experiments.benchmarks.evaluator_throughput` -- mappings per CPU-second of the
  loop-nest model, compiled kernel vs numpy, and ZigZag's cost model on the same layer
  (:mod:`~experiments.benchmarks.zigzag_compare` runs
  :mod:`~experiments.benchmarks.zigzag_costmodel` inside ``.venv-zigzag``).
* :mod:`~experiments.benchmarks.mapper_optimality` -- the exact mapper's time to proof and
  the heuristic and random mappers' distance from the optimum, per layer;
  :mod:`~experiments.benchmarks.jit_warmup` -- compiles the exact mapper's kernels before a benchmark times them;
  :mod:`~experiments.benchmarks.mapper_choice` -- exact vs heuristic on the hardware points
  a study visits; :mod:`~experiments.benchmarks.mapper_codesign` -- time to proof, nodes
  and anytime quality of every unique layer of four workloads on the hardware points a
  co-design search visits (Shi iso/free, the demo's systolic space, Eyeriss v1);
  :mod:`~experiments.benchmarks.shi2020_inner_effort` -- EDP, ranking and
  time of the Shi 2020 co-design's inner mapper at several node limits. Each states in
  its header, and keeps in its JSON, the space its proofs cover
  (:mod:`~experiments.proof_scopes`, from the results' scope data);
  :mod:`~experiments.benchmarks.stated_scopes` states it, computed from the command's
  settings, at the top of the committed outputs written before the scripts printed it.
* :mod:`~experiments.benchmarks.d2nn_epoch_time` -- wall and CPU seconds per training
  epoch of the D2NN reproduction's configuration.
* :mod:`~experiments.benchmarks.ppr_memory_latency` -- MeLoPPR vs single-stage local PPR on
  CPU: latency, peak memory and precision@k.
"""

__all__: list[str] = []  # scripts: run them as modules
