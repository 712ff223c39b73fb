"""The reproductions' shared helpers (``experiments/reproduce/__init__.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import experiments.reproduce as common


def test_write_atomic_replaces_whole_files_and_a_failed_write_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "cache.json"
    common.write_atomic(path, "old")
    common.write_atomic(path, "new contents")
    assert path.read_text() == "new contents"
    assert [p.name for p in tmp_path.iterdir()] == ["cache.json"]      # no temporary left

    def killed(*_a):  # the process dies between writing the temporary and the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(common.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        common.write_atomic(path, "half")
    assert path.read_text() == "new contents"                          # never written in place


def test_jsonable_makes_strict_json():
    out = common.jsonable({1: (np.float64(1.5), np.int64(2)), "x": [math.inf, np.nan]})
    assert out == {"1": [1.5, 2], "x": [None, None]}
    assert type(out["1"][1]) is int
