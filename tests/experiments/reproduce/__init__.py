"""Tests of :mod:`experiments.reproduce`."""
