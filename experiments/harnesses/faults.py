"""Infrastructure faults: drivers started together, PostgreSQL restarted, Dask scheduler lost.

Each scenario runs real ``coexplore run`` processes (random search over a two-parameter
space, :class:`experiments.harnesses.chaos.SleepyBowl` evaluations), checks the study in
storage afterwards, prints its figures and one JSON line, and exits with status 1 if a
check fails.

* ``race``: ``--drivers`` processes of the same command started at once on a new study,
  ``--rounds`` times, each round on a new database (SQLite file; PostgreSQL schema with
  ``--postgres``). Checks that every driver exits 0 and that the study ends with exactly
  ``--trials`` COMPLETE trials numbered 0..n-1, nothing left RUNNING or WAITING.
* ``pg-restart``: one sweep on PostgreSQL; ``--restarts`` times, after a share of the
  trials, the server is stopped for ``--down-s`` seconds (``service postgresql
  stop/start``: needs root, and disconnects every client of the server). Checks: the
  driver exits 0 having said it retried, exactly the budget COMPLETE, each number once,
  no trial evaluated twice (attempts 1).
* ``pg-timeout``: the server stays down longer than ``--retry-s``: the driver must exit 3
  saying the study is resumable; after the restart, the same command finishes it.
* ``dask-scheduler``: a sweep on an external cluster (a ``dask scheduler`` and a
  2-process ``dask worker``); ``--kills`` times the scheduler is SIGKILLed mid-study:
  the driver must exit 3 with no trial FAILED; a new cluster at the same address and the
  same command resume it; the last run finishes the study.

Run: ``python -m experiments.harnesses.faults race [--postgres URL]``,
``... pg-restart --postgres URL``, ``... pg-timeout --postgres URL``,
``... dask-scheduler`` (``--postgres`` defaults to ``COEXPLORE_TEST_POSTGRES_URL``); each takes
``--json FILE`` to write its rows, settings, commit, wall time and load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from experiments.harnesses.chaos import CONFIG, counts
from experiments.harnesses.record import Run, public_settings

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- helpers


def _config(workdir: Path, study: str, storage: str, trials: int, workers: int, sleep_s: float,
            executor: str = "process") -> Path:
    cfg = workdir / f"{study}.yaml"
    cfg.write_text(CONFIG.format(study=study, storage=f'"{storage}"', out=workdir / "out",
                                 trials=trials, workers=workers, sleep_s=sleep_s,
                                 optimizer="random", executor=executor))
    return cfg


def _env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), DASK_TEMPORARY_DIRECTORY=str(workdir),
               DASK_DISTRIBUTED__WORKER__DAEMON="False")
    if len(str(workdir)) < 75:  # room for multiprocessing's socket path under TMPDIR
        env["TMPDIR"] = str(workdir)
    return env


def _run_cmd(cfg: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress", *extra]


class _Driver:
    """A ``coexplore run`` process whose stderr is collected as it comes."""

    def __init__(self, cmd: list[str], workdir: Path) -> None:
        self.proc = subprocess.Popen(cmd, cwd=workdir, env=_env(workdir), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait(self, timeout: float = 1800) -> int:
        rc = self.proc.wait(timeout)
        self._reader.join(10)
        return rc

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


def _complete(url: str, study: str) -> int:
    from experiments.storage import Storage, StorageError
    from optimizer import TrialStatus

    try:
        with Storage(url, retry_timeout_s=0) as st:
            rec = st.find_study(study)
            return 0 if rec is None else st.count(rec.id, [TrialStatus.COMPLETE])
    except StorageError:
        return -1


def _wait_complete(url: str, study: str, n: int, driver: _Driver) -> None:
    while _complete(url, study) < n:
        if driver.proc.poll() is not None:
            raise RuntimeError(f"the driver exited ({driver.proc.returncode}) before {n} trials "
                               f"completed:\n{driver.stderr[-3000:]}")
        time.sleep(0.05)


def _check(c: dict, trials: int) -> bool:
    return (c.get("COMPLETE") == trials and c["numbers_ok"] and c.get("RUNNING", 0) == 0
            and c.get("WAITING", 0) == 0 and c.get("FAILED", 0) == 0)


@contextlib.contextmanager
def _pg_schema(base: str) -> Iterator[str]:
    import sqlalchemy as sa

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with contextlib.suppress(Exception), admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _service(action: str) -> None:
    subprocess.run(["service", "postgresql", action], check=True, capture_output=True, timeout=120)


def _require_restartable(url: str | None) -> str:
    import shutil

    import sqlalchemy as sa

    if not url:
        sys.exit("error: --postgres URL (or COEXPLORE_TEST_POSTGRES_URL) is required")
    if os.geteuid() != 0 or shutil.which("service") is None:
        sys.exit("error: restarting PostgreSQL needs root and `service postgresql`")
    host = sa.engine.make_url(url).host or "localhost"
    if host not in ("localhost", "127.0.0.1", "::1"):
        sys.exit(f"error: the PostgreSQL server is on {host!r}, not on this host")
    print("# this restarts the local PostgreSQL server: every client of it is disconnected")
    return url


def _report(rows: list[dict], ok: bool, args: argparse.Namespace) -> None:
    print(json.dumps(rows, default=str))
    run = getattr(args, "run", None)
    if run is not None:
        run.write(args.json, rows, ok)
    if not ok:
        print("MISMATCH: a check failed (see above)")
        sys.exit(1)


# ---------------------------------------------------------------- scenarios


def race(args: argparse.Namespace) -> list[dict]:
    backends = [("sqlite", None)]
    if args.postgres:
        backends.append(("postgresql", args.postgres))
    else:
        print("# PostgreSQL: skipped (no --postgres URL / COEXPLORE_TEST_POSTGRES_URL)")
    rows = []
    for backend, base in backends:
        walls, bad_rounds, failed_drivers, duplicates = [], [], 0, []
        for r in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="race-") as tmp, (
                    _pg_schema(base) if base else
                    contextlib.nullcontext(f"sqlite:///{Path(tmp) / 'race.db'}")) as url:
                workdir = Path(tmp)
                cfg = _config(workdir, "race", url, args.trials, args.workers, args.sleep_s)
                t0 = time.monotonic()
                drivers = [_Driver(_run_cmd(cfg), workdir) for _ in range(args.drivers)]
                rcs = [d.wait() for d in drivers]
                walls.append(time.monotonic() - t0)
                c = counts(url, "race")
            failed = [(rc, d.stderr[-500:]) for rc, d in zip(rcs, drivers) if rc != 0]
            failed_drivers += len(failed)
            duplicates.append(args.trials - c["distinct_params"])
            if failed or not _check(c, args.trials):
                bad_rounds.append({"round": r, "exit codes": rcs, "counts": c, "failed": failed})
        row = {"scenario": "race", "backend": backend, "drivers": args.drivers,
               "rounds": args.rounds, "trials": args.trials, "bad_rounds": len(bad_rounds),
               "failed_drivers": failed_drivers, "mean_round_s": statistics.mean(walls),
               "max_round_s": max(walls), "duplicate_points_per_round": statistics.mean(duplicates)}
        rows.append(row)
        for b in bad_rounds:
            print("# bad round:", json.dumps(b, default=str)[:2000])
    print(f"# race: {args.drivers} `coexplore run` started at once per round, {args.trials} trials "
          f"budget, {args.workers} worker(s) each, {args.sleep_s:g} s evaluations")
    print(f"{'backend':11} {'rounds':>6} {'bad rounds':>10} {'failed drivers':>14} "
          f"{'mean round s':>12} {'max round s':>11}  result")
    for r in rows:
        print(f"{r['backend']:11} {r['rounds']:>6} {r['bad_rounds']:>10} {r['failed_drivers']:>14} "
              f"{r['mean_round_s']:>12.1f} {r['max_round_s']:>11.1f}  "
              + ("every round: exact budget, each number once, no driver failed"
                 if r["bad_rounds"] == 0 else "MISMATCH"))
    _report(rows, all(r["bad_rounds"] == 0 for r in rows), args)
    return rows


_REACHABLE = re.compile(r"reachable again after ([0-9.]+) s \((\d+) retries\)")


def pg_restart(args: argparse.Namespace) -> list[dict]:
    base = _require_restartable(args.postgres)
    with tempfile.TemporaryDirectory(prefix="pg-restart-") as tmp:
        return _pg_restart(args, base, Path(tmp))


def _pg_restart(args: argparse.Namespace, base: str, workdir: Path) -> list[dict]:
    with _pg_schema(base) as url:
        cfg = _config(workdir, "restart", url, args.trials, args.workers, args.sleep_s)
        t0 = time.monotonic()
        driver = _Driver(_run_cmd(cfg), workdir)
        outages = []
        try:
            for i in range(args.restarts):
                _wait_complete(url, "restart", (i + 1) * args.trials // (args.restarts + 1), driver)
                t_stop = time.monotonic()
                _service("stop")
                time.sleep(args.down_s)
                _service("start")
                outages.append(time.monotonic() - t_stop)
        finally:
            _service("start")
        rc = driver.wait()
        wall = time.monotonic() - t0
        c = counts(url, "restart")
    recovered = [(float(s), int(n)) for s, n in _REACHABLE.findall(driver.stderr)]
    row = {"scenario": "pg-restart", "restarts": args.restarts, "outages_s": outages,
           "driver_exit": rc, "retry_warnings": driver.stderr.count("unreachable"),
           "recovered_after_s": [s for s, _ in recovered],
           "recovered_retries": [n for _, n in recovered], "wall_s": wall, **c}
    ok = (rc == 0 and _check(c, args.trials) and c["max_attempts"] == 1
          and len(recovered) == args.restarts)
    print(f"# pg-restart: {args.trials} trials, {args.workers} workers, {args.sleep_s:g} s "
          f"evaluations; server stopped {args.restarts} times for {args.down_s:g} s")
    print(f"driver exit {rc}; COMPLETE {c.get('COMPLETE', 0)} of {args.trials}; numbers 0..n-1 "
          f"once: {c['numbers_ok']}; max attempts {c['max_attempts']}; retry warnings "
          f"{row['retry_warnings']}; outages (stop..start) "
          + ", ".join(f"{s:.1f}" for s in outages) + " s; driver back after "
          + ", ".join(f"{s:.1f} s ({n} retries)" for s, n in recovered) + f"; wall {wall:.1f} s")
    _report([row], ok, args)
    return [row]


def pg_timeout(args: argparse.Namespace) -> list[dict]:
    base = _require_restartable(args.postgres)
    with tempfile.TemporaryDirectory(prefix="pg-timeout-") as tmp:
        return _pg_timeout(args, base, Path(tmp))


def _pg_timeout(args: argparse.Namespace, base: str, workdir: Path) -> list[dict]:
    with _pg_schema(base) as url:
        cfg = _config(workdir, "timeout", url, args.trials, args.workers, args.sleep_s)
        cmd = _run_cmd(cfg, "--storage-retry-s", f"{args.retry_s:g}")
        driver = _Driver(cmd, workdir)
        try:
            _wait_complete(url, "timeout", args.trials // 3, driver)
            t_stop = time.monotonic()
            _service("stop")
            rc = driver.wait()
            gave_up_s = time.monotonic() - t_stop
            time.sleep(max(0.0, args.down_s - gave_up_s))
        finally:
            _service("start")
        before = counts(url, "timeout")
        again = _Driver(cmd, workdir)
        rc2 = again.wait()
        c = counts(url, "timeout")
    last = [ln for ln in driver.lines if ln.startswith("error:") or ln.startswith("stopped:")]
    row = {"scenario": "pg-timeout", "retry_s": args.retry_s, "driver_exit": rc,
           "stopped_after_s": gave_up_s, "message": "".join(last).strip(),
           "complete_when_stopped": before.get("COMPLETE", 0), "resume_exit": rc2, **c}
    ok = (rc == 3 and "resumable" in driver.stderr and rc2 == 0 and _check(c, args.trials))
    print(f"# pg-timeout: server down past --storage-retry-s {args.retry_s:g}")
    print(f"driver exit {rc} after {gave_up_s:.1f} s, with {before.get('COMPLETE', 0)} COMPLETE; "
          f"the same command then: exit {rc2}, COMPLETE {c.get('COMPLETE', 0)} of {args.trials}, "
          f"numbers 0..n-1 once: {c['numbers_ok']}, re-run {c['requeued']}")
    print("driver said: " + row["message"].replace("\n", " | "))
    _report([row], ok, args)
    return [row]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Cluster:
    def __init__(self, port: int, workdir: Path, workers: int) -> None:
        common = dict(cwd=workdir, env=_env(workdir), stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL)
        self.address = f"tcp://127.0.0.1:{port}"
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(port), "--no-dashboard"], **common)
        self.workers = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nworkers",
             str(workers), "--nthreads", "1", "--no-dashboard", "--local-directory", str(workdir)],
            **common)

    def close(self) -> None:
        for p in (self.scheduler, self.workers):
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait(60)


def dask_scheduler(args: argparse.Namespace) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="dask-sched-") as tmp:
        return _dask_scheduler(args, Path(tmp))


def _dask_scheduler(args: argparse.Namespace, workdir: Path) -> list[dict]:
    url = f"sqlite:///{workdir / 'dask.db'}"
    cfg = _config(workdir, "dask", url, args.trials, args.workers, args.sleep_s)
    port = _free_port()
    cmd = _run_cmd(cfg, "--cluster", f"tcp://127.0.0.1:{port}")
    rng = random.Random(args.seed)
    kills, t0 = [], time.monotonic()
    for k in range(args.kills):
        cluster = _Cluster(port, workdir, args.workers)
        try:
            driver = _Driver(cmd, workdir)
            done = max(_complete(url, "dask"), 0)
            _wait_complete(url, "dask", done + 2, driver)   # it is running trials now
            time.sleep(rng.uniform(0.0, args.sleep_s))
            t_kill = time.monotonic()
            cluster.scheduler.send_signal(signal.SIGKILL)
            rc = driver.wait()
            exit_s = time.monotonic() - t_kill
        finally:
            cluster.close()
        c = counts(url, "dask")
        kills.append({"kill": k + 1, "driver_exit": rc, "exit_after_s": exit_s,
                      "COMPLETE": c.get("COMPLETE", 0), "WAITING": c.get("WAITING", 0),
                      "RUNNING": c.get("RUNNING", 0), "FAILED": c.get("FAILED", 0),
                      "said_lost": "lost the Dask scheduler" in driver.stderr})
    cluster = _Cluster(port, workdir, args.workers)
    try:
        final = _Driver(cmd, workdir)
        rc = final.wait()
    finally:
        cluster.close()
    c = counts(url, "dask")
    row = {"scenario": "dask-scheduler", "kills": kills, "final_exit": rc,
           "wall_s": time.monotonic() - t0, **c}
    ok = (rc == 0 and _check(c, args.trials)
          and all(k["driver_exit"] == 3 and k["FAILED"] == 0 and k["RUNNING"] == 0
                  and k["said_lost"] for k in kills))
    print(f"# dask-scheduler: {args.trials} trials on an external cluster of {args.workers} "
          f"workers, {args.sleep_s:g} s evaluations; scheduler SIGKILLed {args.kills} times")
    print(f"{'kill':>4} {'driver exit':>11} {'exit after s':>12} {'COMPLETE':>8} "
          f"{'WAITING':>7} {'RUNNING':>7} {'FAILED':>6}")
    for k in kills:
        print(f"{k['kill']:>4} {k['driver_exit']:>11} {k['exit_after_s']:>12.2f} {k['COMPLETE']:>8} "
              f"{k['WAITING']:>7} {k['RUNNING']:>7} {k['FAILED']:>6}")
    print(f"final run on a new cluster: exit {rc}; COMPLETE {c.get('COMPLETE', 0)} of "
          f"{args.trials}; numbers 0..n-1 once: {c['numbers_ok']}; FAILED {c.get('FAILED', 0)}; "
          f"re-run after a kill {c['requeued']}; wall {row['wall_s']:.1f} s")
    _report([row], ok, args)
    return [row]


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="scenario", required=True)
    pg_default = os.environ.get("COEXPLORE_TEST_POSTGRES_URL")

    p = sub.add_parser("race", help="drivers started together on a new study")
    p.add_argument("--drivers", type=int, default=4)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sleep-s", type=float, default=0.0)
    p.add_argument("--postgres", default=pg_default)

    p = sub.add_parser("pg-restart", help="PostgreSQL stopped and started during a sweep")
    p.add_argument("--restarts", type=int, default=3)
    p.add_argument("--down-s", type=float, default=5.0)
    p.add_argument("--trials", type=int, default=60)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sleep-s", type=float, default=0.25)
    p.add_argument("--postgres", default=pg_default)

    p = sub.add_parser("pg-timeout", help="PostgreSQL down longer than --storage-retry-s")
    p.add_argument("--retry-s", type=float, default=5.0)
    p.add_argument("--down-s", type=float, default=15.0)
    p.add_argument("--trials", type=int, default=30)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sleep-s", type=float, default=0.25)
    p.add_argument("--postgres", default=pg_default)

    p = sub.add_parser("dask-scheduler", help="the Dask scheduler SIGKILLed mid-study")
    p.add_argument("--kills", type=int, default=3)
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sleep-s", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)

    for p in sub.choices.values():
        p.add_argument("--json", metavar="FILE", help="also write the rows, settings, commit, wall "
                       "time and load average to FILE (experiments/harnesses/record.py)")
    args = ap.parse_args(argv)
    args.run = Run(f"experiments.harnesses.faults {args.scenario}", public_settings(args))
    return {"race": race, "pg-restart": pg_restart, "pg-timeout": pg_timeout,
            "dask-scheduler": dask_scheduler}[args.scenario](args)


if __name__ == "__main__":
    main()
