"""Benchmarks and cross-checks of coexplore's models against reference tools.

* :mod:`experiments.benchmarks.scalesim_compare` -- the systolic-array cycle model
  (:mod:`evaluators.systolic`) against SCALE-Sim v3 on ResNet-50 layers.
"""
