"""Tests of :mod:`experiments.harnesses`."""
