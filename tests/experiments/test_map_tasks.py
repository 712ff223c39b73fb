"""experiments.executors.map_tasks: work that is not a study's trials, on the study's executors."""

from __future__ import annotations

import os

import pytest

from evaluators.base import Infeasible
from experiments.executors import InlineExecutor, ProcessExecutor, Task, map_tasks


def square(params):
    if params["x"] < 0:
        raise Infeasible("negative")
    return {"y": params["x"] ** 2, "pid": os.getpid()}


@pytest.mark.parametrize("make", [lambda: InlineExecutor(square), lambda: ProcessExecutor(square, workers=2)])
def test_every_task_comes_back_once_with_its_number(make):
    with make() as ex:
        results = list(map_tasks(ex, (Task(i, {"x": x}, 0) for i, x in enumerate([3, -1, 4, 5, 0]))))
        assert ex.n_running == 0
    by = {r.number: r for r in results}
    assert sorted(by) == [0, 1, 2, 3, 4] and len(results) == 5
    assert [by[i].metrics.get("y") for i in (0, 2, 3, 4)] == [9, 16, 25, 0]
    assert by[1].status.value == "infeasible" and by[1].reason == "negative"


def test_the_pool_is_kept_at_capacity_and_nothing_runs_in_the_driver():
    with ProcessExecutor(square, workers=2) as ex:
        seen = []
        for r in map_tasks(ex, (Task(i, {"x": i}, 0) for i in range(6))):
            assert ex.n_running <= ex.capacity
            seen.append(r.metrics["pid"])
    assert len(seen) == 6 and os.getpid() not in seen


def test_no_tasks_yield_nothing():
    assert list(map_tasks(InlineExecutor(square), [])) == []
