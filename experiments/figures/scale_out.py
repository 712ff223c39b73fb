"""Figures of docs/howto/scale-out.md from the ``--json`` records of the fault and scale
harnesses (``python -m experiments.harnesses.chaos|scaling|faults ... --json FILE``,
``docs/benchmarks/harness_*.json``; the record's layout is
``experiments/harnesses/record.py``). Each block names the record, its command, the commit
it ran at and the load average of the machine at its start and end."""

from __future__ import annotations

from pathlib import Path

from experiments.figures.fmt import fixed
from experiments.figures.records import RecordError, load_json

__all__ = ["FIGURES", "chaos", "faults", "pg_outages", "scaling"]

CHAOS_PROCESS = "docs/benchmarks/harness_chaos_process.json"
CHAOS_DASK = "docs/benchmarks/harness_chaos_dask.json"
SCALING = "docs/benchmarks/harness_scaling.json"
FAULTS_RACE = "docs/benchmarks/harness_faults_race.json"
FAULTS_DASK = "docs/benchmarks/harness_faults_dask_scheduler.json"
PG_RESTART = "docs/benchmarks/harness_faults_pg_restart.json"
PG_TIMEOUT = "docs/benchmarks/harness_faults_pg_timeout.json"
BACKENDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def _load(root: Path, rel: str, harness: str) -> dict:
    r = load_json(root, rel)
    for key in ("harness", "settings", "commit", "rows", "wall_s", "load_avg_1_5_15_start",
                "load_avg_1_5_15_end"):
        if key not in r:
            raise RecordError(f"{rel}: no entry {key!r} (has {sorted(r)})")
    if r["harness"] != harness:
        raise RecordError(f"{rel}: written by {r['harness']!r}, expected {harness!r}")
    return r


def _provenance(r: dict, rel: str) -> str:
    """`rel`, commit, wall time and load average (1 min) at start and end."""
    commit = (r["commit"] or "unknown")[:7] + (" with local changes" if r.get("dirty") else "")
    load = ""
    if r["load_avg_1_5_15_start"] and r["load_avg_1_5_15_end"]:
        load = (f", load average {r['load_avg_1_5_15_start'][0]:.1f} at its start and "
                f"{r['load_avg_1_5_15_end'][0]:.1f} at its end on {r.get('cpu_count', '?')} cores")
    return f"`{rel}`, commit {commit}, {r['started_at']}, {r['wall_s'] / 60:.1f} min{load}"


def _chaos_ok(row: dict) -> bool:
    """The harness's check, recomputed from the counts in the row."""
    n = row["trials"]
    return (row.get("COMPLETE") == n and row["numbers_ok"] and row["distinct_params"] == n
            and row.get("RUNNING", 0) == 0 and row.get("WAITING", 0) == 0)


def chaos(root: Path) -> str:
    """The driver SIGKILLed at random moments and resumed: counts per executor and backend."""
    recs = [(rel, _load(root, rel, "experiments.harnesses.chaos")) for rel in (CHAOS_PROCESS, CHAOS_DASK)]
    lines = [
        "| executor | storage | kills | COMPLETE when each kill came | COMPLETE | distinct | re-queued | result |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for rel, r in recs:
        s = r["settings"]
        if r["settings"]["executor"] not in {row["executor"] for row in r["rows"]} or not r["rows"]:
            raise RecordError(f"{rel}: its rows are not of executor {s['executor']!r}")
        for row in r["rows"]:
            if row["ok"] != _chaos_ok(row):
                raise RecordError(f"{rel}: a row's 'ok' disagrees with its counts: {row}")
            result = "every trial once, none lost" if row["ok"] else "MISMATCH"
            lines.append(f"| {row['executor']} | {BACKENDS.get(row['backend'], row['backend'])} | "
                         f"{row['kills']} | {', '.join(map(str, row['complete_at_each_kill']))} | "
                         f"{row.get('COMPLETE', 0)} | {row['distinct_params']} | "
                         f"{row['requeued']} | {result} |")
        lo, hi = s["kill_window"]
        notes.append(f"{s['executor']} rows: {s['trials']} trials, {s['workers']} workers, "
                     f"{s['optimizer']} search, {s['sleep_s']:g} s evaluations, up to {s['kills']} kills "
                     f"each {lo:g}–{hi:g} s after the driver starts, fewer when the study finished first "
                     f"(seed {s['seed']}); "
                     + _provenance(r, rel))
    return ("\n".join(lines) + "\n\n(" + "; ".join(notes) + ". Re-queued: trials run more than "
            "once because a kill cut them short; a kill that came while the study had 0 trials "
            "COMPLETE may have come before the driver started any trial.)\n")


def scaling(root: Path) -> str:
    """Throughput at 1 and 2 workers and each executor's overhead per trial."""
    r = _load(root, SCALING, "experiments.harnesses.scaling")
    s, rows = r["settings"], r["rows"]
    over = {(o["executor"], o["workers"]): o for o in rows["overhead"]}
    try:
        inline = over[("inline", 1)]
    except KeyError:
        raise RecordError(f"{SCALING}: no inline row in 'overhead'") from None
    lines = [
        f"Random search, {s['sleep_s']:g} s evaluations, {s['trials']} trials per run, SQLite; the "
        f"overhead with a no-op evaluator over {s['overhead_trials']} trials, relative to evaluating "
        f"in the driver itself at {1e3 * inline['steady_s_per_trial']:.1f} ms/trial:",
        "",
        "| executor | workers | trials/min (end-to-end) | trials/min (steady) | overhead ms/trial |",
        "|---|---|---|---|---|",
    ]
    for t in rows["throughput"]:
        key = (t["executor"], t["workers"])
        if key not in over:
            raise RecordError(f"{SCALING}: no overhead row for {key}")
        lines.append(f"| {t['executor']} | {t['workers']} | {t['per_min']:.1f} | "
                     f"{t['steady_per_min']:.1f} | {fixed(over[key]['overhead_ms'])} |")
    ideal = 60.0 / s["sleep_s"]
    extra = ""
    execs = {t["executor"] for t in rows["throughput"]}
    if {"process", "dask"} <= execs:
        def mean(ex: str) -> float:
            v = [o["overhead_ms"] for (e, _w), o in over.items() if e == ex]
            return sum(v) / len(v)
        extra = (f" Dask costs {fixed(mean('dask') - mean('process'))} ms more per trial than the local "
                 "process pool here (mean over 1 and 2 workers).")
    if any(o["overhead_ms"] < 0 for o in rows["overhead"]):
        extra += (" A negative overhead means that run was faster per trial than the driver alone: "
                  "on this record the noise of the machine's load is larger than the cost measured.")
    return ("\n".join(lines) + "\n\n(Wall-clock rates, so they move with the machine's load: "
            + _provenance(r, SCALING) + f".) The ideal is {ideal:g} trials/min per worker." + extra
            + "\n")


def _race_cell(row: dict) -> str:
    return (f"{BACKENDS.get(row['backend'], row['backend'])}: {row['bad_rounds']} of {row['rounds']} "
            f"rounds wrong, {row['failed_drivers']} of {row['rounds'] * row['drivers']} drivers failed "
            f"(a round took {row['mean_round_s']:.1f} s on average, {row['max_round_s']:.1f} s at most)")


def faults(root: Path) -> str:
    """Drivers started together (race) and the Dask scheduler killed (dask-scheduler)."""
    race = _load(root, FAULTS_RACE, "experiments.harnesses.faults race")
    dask = _load(root, FAULTS_DASK, "experiments.harnesses.faults dask-scheduler")
    rs, ds = race["settings"], dask["settings"]
    work = "no-op evaluations" if rs["sleep_s"] == 0 else f"{rs['sleep_s']:g} s evaluations"
    n = rs["trials"]
    race_ok = all(row["bad_rounds"] == 0 for row in race["rows"])
    d = dask["rows"][0]
    kills = d["kills"]
    dn = ds["trials"]
    d_ok = (d["final_exit"] == 0 and d.get("COMPLETE") == dn and d["numbers_ok"]
            and d.get("FAILED", 0) == 0
            and all(k["driver_exit"] == 3 and k["FAILED"] == 0 and k["RUNNING"] == 0 for k in kills))
    if race_ok != race["ok"] or d_ok != dask["ok"]:
        raise RecordError(f"{FAULTS_RACE} or {FAULTS_DASK}: 'ok' disagrees with the rows")
    exits = sorted({k["driver_exit"] for k in kills})
    lines = [
        "| scenario (command) | what happened | result |",
        "|---|---|---|",
        f"| {rs['drivers']} drivers started at once on a new study, {rs['rounds']} rounds per "
        f"backend, each on a new database; {n}-trial budget, {rs['workers']} workers each, {work} "
        f"(`faults race --postgres URL`) | " + "; ".join(_race_cell(row) for row in race["rows"])
        + " | " + (f"every round exactly {n} COMPLETE, numbers 0..{n - 1} once" if race_ok
                   else "MISMATCH") + " |",
        f"| the scheduler of an external cluster ({ds['workers']} workers) SIGKILLed {ds['kills']} "
        f"times during a {dn}-trial sweep, {ds['sleep_s']:g} s evaluations; each time a new cluster "
        "at the same address and the same command (`faults dask-scheduler`) | the driver exited "
        f"{' or '.join(map(str, exits))} within "
        + ", ".join(f"{k['exit_after_s']:.2f}" for k in kills) + " s, with "
        + ", ".join(str(k["WAITING"]) for k in kills) + " trials WAITING, "
        f"{sum(k['RUNNING'] for k in kills)} RUNNING and {sum(k['FAILED'] for k in kills)} FAILED "
        f"after each; the last run exited {d['final_exit']}; {d['wall_s']:.1f} s in all | "
        + (f"{d['COMPLETE']} COMPLETE, numbers 0..{dn - 1} once, {d.get('FAILED', 0)} FAILED"
           if d_ok else "MISMATCH") + " |",
    ]
    dup = " and ".join(f"{row['duplicate_points_per_round']:g}" for row in race["rows"])
    return ("\n".join(lines) + f"\n\n(race: {_provenance(race, FAULTS_RACE)}; dask-scheduler: "
            f"{_provenance(dask, FAULTS_DASK)}.) Points evaluated twice in a race round, mean "
            f"per round ({' and '.join(BACKENDS.get(row['backend'], row['backend']) for row in race['rows'])}): "
            f"{dup} of the {n}.\n")


def _secs(values: list[float]) -> str:
    """``[8.1, 6.9, 8.2] -> '8.1, 6.9 and 8.2'``."""
    parts = [f"{v:.1f}" for v in values]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def pg_outages(root: Path) -> str:
    """The local PostgreSQL server stopped during a sweep: within the retry time
    (pg-restart) and past it (pg-timeout)."""
    rr = _load(root, PG_RESTART, "experiments.harnesses.faults pg-restart")
    tr = _load(root, PG_TIMEOUT, "experiments.harnesses.faults pg-timeout")
    rs, ts = rr["settings"], tr["settings"]
    r, t = rr["rows"][0], tr["rows"][0]
    n, tn = rs["trials"], ts["trials"]
    for key in ("outages_s", "recovered_after_s", "recovered_retries"):
        if key not in r:
            raise RecordError(f"{PG_RESTART}: its row has no {key!r} (has {sorted(r)})")
    r_ok = (r["driver_exit"] == 0 and r.get("COMPLETE") == n and r["numbers_ok"]
            and r.get("RUNNING", 0) == 0 and r.get("WAITING", 0) == 0 and r.get("FAILED", 0) == 0
            and r["max_attempts"] == 1 and len(r["recovered_after_s"]) == rs["restarts"])
    t_ok = (t["driver_exit"] == 3 and "resumable" in t["message"] and t["resume_exit"] == 0
            and t.get("COMPLETE") == tn and t["numbers_ok"] and t.get("RUNNING", 0) == 0
            and t.get("WAITING", 0) == 0 and t.get("FAILED", 0) == 0)
    if r_ok != rr["ok"] or t_ok != tr["ok"]:
        raise RecordError(f"{PG_RESTART} or {PG_TIMEOUT}: 'ok' disagrees with the rows")
    retries = sorted(set(r["recovered_retries"]))
    retry_s = (f"{retries[0]} retries each" if len(retries) == 1
               else f"{', '.join(map(str, r['recovered_retries']))} retries")
    rerun = t["requeued"]
    lines = [
        "| scenario (command) | what happened | result |",
        "|---|---|---|",
        f"| PostgreSQL stopped {rs['restarts']} times for {rs['down_s']:g} s "
        f"({min(r['outages_s']):.1f}–{max(r['outages_s']):.1f} s from `service postgresql stop` to "
        f"the end of `start`) during a {n}-trial sweep, {rs['workers']} workers, {rs['sleep_s']:g} s "
        f"evaluations (`faults pg-restart --postgres URL`) | the driver warned {r['retry_warnings']} "
        f"times, was back {_secs(r['recovered_after_s'])} s after its first failure ({retry_s}) "
        f"and exited {r['driver_exit']}; {r['wall_s']:.1f} s in all | "
        + (f"{r['COMPLETE']} COMPLETE, numbers 0..{n - 1} once, none evaluated twice" if r_ok
           else "MISMATCH") + " |",
        f"| PostgreSQL stopped for {ts['down_s']:g} s during a {tn}-trial sweep, {ts['workers']} workers, "
        f"{ts['sleep_s']:g} s evaluations, run with `--storage-retry-s {ts['retry_s']:g}` "
        f"(`faults pg-timeout --postgres URL`) | the driver exited {t['driver_exit']} after "
        f"{t['stopped_after_s']:.1f} s with {t['complete_when_stopped']} trials COMPLETE, saying the "
        f"study is resumable; the same command, once the server was back, exited {t['resume_exit']} | "
        + (f"{t['COMPLETE']} COMPLETE, numbers 0..{tn - 1} once; {rerun} trial"
           f"{'s' if rerun != 1 else ''} in flight at the stop re-run" if t_ok else "MISMATCH") + " |",
    ]
    return ("\n".join(lines) + f"\n\n(pg-restart: {_provenance(rr, PG_RESTART)}; pg-timeout: "
            f"{_provenance(tr, PG_TIMEOUT)}.)\n")


FIGURES = {
    "scale-out-chaos": ((CHAOS_PROCESS, CHAOS_DASK), chaos),
    "scale-out-scaling": ((SCALING,), scaling),
    "scale-out-faults": ((FAULTS_RACE, FAULTS_DASK), faults),
    "scale-out-pg-outages": ((PG_RESTART, PG_TIMEOUT), pg_outages),
}
