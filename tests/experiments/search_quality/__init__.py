"""Tests of :mod:`experiments.search_quality`."""
