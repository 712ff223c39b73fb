"""experiments.fingerprints: exact hashes and code fingerprints."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from experiments.fingerprints import code_fingerprint, exact_hash, fingerprint_changes
from tests.experiments import study_evaluators as ev


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (1, True),
        (1, "1"),
        ([1, 2], (1, 2)),
        (0.1 + 0.2, 0.3),
        (np.arange(3), np.arange(3).astype(np.int32)),
        (np.zeros((2, 3)), np.zeros((3, 2))),
        ({"a": 1}, {"a": 1, "b": None}),
        ({"a": [1]}, {"a": [[1]]}),
    ],
)
def test_exact_hash_tells_apart(a, b):
    assert exact_hash(a) != exact_hash(b)


def test_exact_hash_reads_every_element_and_ignores_key_order():
    a = np.linspace(0, 1, 10_000)
    b = a.copy()
    b[5000] = np.nextafter(b[5000], 2.0)  # one ulp
    assert str(a) == str(b) and exact_hash(a) != exact_hash(b)
    assert exact_hash({"x": a, "y": 2}) == exact_hash({"y": 2, "x": a.copy()})
    assert exact_hash(float("nan")) == exact_hash(float("nan"))


def test_code_fingerprint_kinds():
    src = code_fingerprint(ev.bowl)
    assert src["kind"] == "source" and src["ref"] == "tests.experiments.study_evaluators:bowl"
    assert len(src["source_sha256"]) == 64 and len(src["module_sha256"]) == 64
    pkg = code_fingerprint(np.linalg.norm)  # an installed distribution
    assert pkg["kind"] == "package" and pkg["package"] == "numpy"
    assert pkg["version"] == np.__version__
    assert code_fingerprint(len)["kind"] == "builtin"
    p1 = code_fingerprint(functools.partial(ev.bowl, scale=1))
    p2 = code_fingerprint(functools.partial(ev.bowl, scale=2))
    assert p1["func"] == src and p1 != p2
    assert fingerprint_changes("evaluator", p1, p2) == [
        "evaluator tests.experiments.study_evaluators:bowl: its bound arguments changed"
    ]


def test_closures_and_instances_carry_their_values():
    def make(k):
        def f(p):
            return p * k

        return f

    assert code_fingerprint(make(1)) != code_fingerprint(make(2))
    assert code_fingerprint(make(1)) == code_fingerprint(make(1))

    class Scaled:
        def __init__(self, k):
            self.k = k

        def __call__(self, p):
            return p * self.k

    assert code_fingerprint(Scaled(1)) != code_fingerprint(Scaled(1000))
    assert code_fingerprint(Scaled(1), state=False) == code_fingerprint(Scaled(1000), state=False)
    assert (
        "attributes changed"
        in fingerprint_changes(
            "evaluator", code_fingerprint(Scaled(1)), code_fingerprint(Scaled(2))
        )[0]
    )


def test_changes_are_named():
    old = {"ref": "m:f", "kind": "package", "package": "pkg", "version": "1.0", "revision": "a"}
    new = dict(old, version="1.1")
    assert fingerprint_changes("evaluator", old, new) == [
        "evaluator m:f: package pkg 1.0 -> pkg 1.1"
    ]
    assert fingerprint_changes("evaluator", old, dict(old, ref="m:g")) == [
        "evaluator: is now m:g, was m:f"
    ]
    assert fingerprint_changes("evaluator", old, old) == []
    assert fingerprint_changes("constraint 'c'", None, old) == ["constraint 'c': added"]
