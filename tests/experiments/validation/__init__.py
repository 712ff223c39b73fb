"""Tests of :mod:`experiments.validation`."""
