"""Tests of :mod:`experiments.benchmarks`."""
