"""Importable evaluators for study / CLI / resume tests."""

from __future__ import annotations

import math
import time

from evaluators.base import Infeasible


def bowl(p):
    """Two objectives with a known trade-off: f1 = x^2, f2 = (x - 2)^2 + y."""
    x, y = p["x"], p["y"]
    return {"f1": x * x, "f2": (x - 2) ** 2 + y, "size_mm2": abs(x)}


def slow_bowl(p):
    time.sleep(0.05)
    return bowl(p)


def troublemaker(p):
    """Fails in every way an evaluator can, chosen by parameter ``mode``."""
    mode = p["mode"]
    if mode == "ok":
        return {"edp": float(p["x"])}
    if mode == "raise":
        raise RuntimeError("simulator crashed")
    if mode == "nan":
        return {"edp": math.nan}
    if mode == "inf":
        return {"edp": math.inf}
    if mode == "missing":
        return {"energy_pj": 1.0}
    if mode == "infeasible":
        raise Infeasible("mapping does not fit", overflow_kib=3.0)
    if mode == "hang":
        time.sleep(60)
    if mode == "badtype":
        return [1, 2]
    if mode == "strval":
        return {"edp": "fast"}
    if mode == "boolval":
        return {"edp": 1.0, "fits": True}
    if mode == "arrayval":
        import numpy as np

        return {"edp": np.ones(3)}
    if mode == "wrongname":
        return {"EDP": 1.0}
    raise AssertionError(mode)


def noisy(p, seed):
    import numpy as np

    return {"edp": float(np.random.default_rng(seed).normal()) + p["x"]}


def slow_pid(p, seed=None):
    """Sleeps ``p['sleep_s']`` (default 0.6 s) and appends its pid to ``p['pidfile']``."""
    import os

    path = p.get("pidfile")
    if path:
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")
    time.sleep(p.get("sleep_s", 0.6))
    return {"edp": float(p["x"]) + 1.0, "pid": float(os.getpid())}


class PidRecorder:
    """Sleeps ``sleep_s`` and appends the worker's pid to ``pidfile`` (kill-a-worker tests)."""

    def __init__(self, pidfile: str, sleep_s: float = 0.5) -> None:
        self.pidfile, self.sleep_s = pidfile, float(sleep_s)

    def __call__(self, p):
        import os

        with open(self.pidfile, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(self.sleep_s)
        return {"f1": float(p["x"] - 20) ** 2 + float(p["y"]), "pid": float(os.getpid())}


def warns(p):
    """The bowl, with a library-style warning on every call (console tests)."""
    import warnings

    warnings.warn("a library complains about something you cannot change", UserWarning, stacklevel=1)
    return bowl(p)


def gated_bowl(p, gate_dir: str, free_calls: int = 3):
    """:func:`bowl`, but only the first ``free_calls`` calls (counted across processes by
    files in ``gate_dir``) return at once: later ones wait until ``gate_dir/release``
    exists (at most 120 s). A fault test thus knows that exactly ``free_calls`` trials
    finished and that the next ones are in flight when it strikes."""
    import os
    import uuid
    from pathlib import Path

    gate = Path(gate_dir)
    (gate / f"call-{os.getpid()}-{uuid.uuid4().hex}").touch()
    if len(list(gate.glob("call-*"))) > free_calls:
        deadline = time.monotonic() + 120.0
        while not (gate / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return bowl(p)


_MET: set[str] = set()  # per process: the meeting places this process has been to


def meeting_bowl(p, meet_dir: str, processes: int = 3):
    """:func:`bowl`; the first call in each process waits (at most 120 s) until
    ``processes`` different processes have made their first call. Drivers that share a
    study and evaluate in-process must therefore all take part in it."""
    import os
    from pathlib import Path

    if meet_dir not in _MET:
        _MET.add(meet_dir)
        meet = Path(meet_dir)
        (meet / str(os.getpid())).touch()
        deadline = time.monotonic() + 120.0
        while len(list(meet.iterdir())) < processes and time.monotonic() < deadline:
            time.sleep(0.01)
    return bowl(p)


def sleeps_or_spins(p):
    """``p["work"]`` = "sleep": 0.3 s asleep; "spin": busy until this process has used
    0.2 CPU seconds (however loaded the machine)."""
    t0, c0 = time.perf_counter(), time.process_time()
    if p["work"] == "sleep":
        time.sleep(0.3)
    else:
        x = 0.0
        while time.process_time() - c0 < 0.2:
            x += 1.0
    return {"seconds_s": time.perf_counter() - t0}


def spatial_area_ok(p):
    """A known constraint on the vectorized area of a SpatialArray (it reads every
    column the area model needs, ``rf_i_words`` among them)."""
    from accelerators.spatial import SpatialArray

    return SpatialArray.area_mm2_of(p) <= 100.0


def always_infeasible(p):
    """Every point is infeasible, with one of two reasons."""
    from evaluators.base import Infeasible

    raise Infeasible("needs more rows" if p["x"] < 0 else "needs more columns")


def nasty_strings(p):
    """Metrics of ``rows``; a point whose ``dataflow`` starts with ``<!--`` is infeasible
    with a reason that holds a script end tag and a template slot (the report's tests)."""
    if str(p["dataflow"]).startswith("<!--"):
        raise Infeasible("</script><script>window.pwned=3</script>{{APP}}")
    rows = float(p["rows"])
    return {"energy_uj": rows * 10.0, "latency_ms": 1000.0 / rows + len(str(p["dataflow"]))}
