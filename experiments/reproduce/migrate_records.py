"""One-off conversion of the reproductions' caches of the format before the record store
(:mod:`experiments.records`) into records: ``python -m experiments.reproduce.migrate_records
shi2020 STEPS.json DEST [--results RESULTS.json]`` and ``... meloppr OUT`` (``OUT/graphs/*.json``
and ``OUT/host_models.json`` into ``OUT/records``) and ``... d2nn OUT`` (``OUT/units/*.pt``
into ``OUT/records``, the parameters in ``.pt`` files beside the records).

Only Shi 2020 committed its cache (``docs/reproduction/results/shi2020/steps.json``, converted
into ``records/`` beside it); MeLoPPR's ``graphs/*.json`` and D2NN's ``units/*.pt`` were
never committed. The converter stays for the caches of runs still in progress under
``runs/`` on some machine, which the new code does not read (Shi 2020 refuses to start on
one and says to run this).

A ``steps.json`` key says, as text, what its entry depends on; each is parsed (never
evaluated: the design points' ``repr`` is read by a regular expression) into the settings
of :mod:`experiments.reproduce.shi2020`'s record kinds. The spec of each workload is the
full run's (:data:`~experiments.reproduce.shi2020.WORKLOADS`; the old keys did not hold it,
and only full runs were committed); wall seconds are the entries' own ``seconds``, CPU
seconds were not recorded (``null``); a search's trials are its study's 0..budget-1 in the
invocation's ``studies.db``, a re-map's the search's best trial.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from experiments.records import RecordStore
from experiments.reproduce import shi2020 as s

__all__ = ["migrate_d2nn", "migrate_meloppr", "migrate_shi2020", "parse_shi2020_key", "restate_shi2020_gaps"]

_POINT = re.compile(r"\('(\w+)', (-?\d+)\)")
_NOTE = "converted from steps.json (its studies were in that invocation's studies.db, never committed)"


def _point(text: str) -> dict[str, int]:
    pairs = _POINT.findall(text)
    if not pairs or not text.startswith("[") or not text.endswith("]"):
        raise ValueError(f"not a design point: {text!r}")
    return {k: int(v) for k, v in pairs}


def _split_tag(head: str) -> tuple[str, str, str]:
    """``"dqn@32-eyeriss_normalized"`` -> (workload, tech, study tag)."""
    wl, _, tag = head.partition("-")
    if not tag:
        return wl, s.TECH, ""
    if tag == "innerbo":
        return wl, s.TECH, "-innerbo"
    return wl, tag, f"-{tag}"


def _spec(workload: str) -> str:
    return s.WORKLOADS[workload][0]


def parse_shi2020_key(key: str, value: Any, storage: str | None,
                      inner_bo_workload: str = "dqn") -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """(kind, settings, trials) of the record of one ``steps.json`` entry."""
    if key == "rs_check":
        return s.KINDS["rs_check"], s.RS_CHECK_SETTINGS, None
    m = re.fullmatch(r"innerbo:s(\d+):(\[.*\])(?::max_nodes=(\d+))?", key)
    if m:
        seed, point, nodes = int(m[1]), _point(m[2]), int(m[3] or 0)
        wl = inner_bo_workload
        st = s.remap_settings("inner-bo", wl, _spec(wl), s.TECH, "iso", "constrained-bo", seed, point,
                              s.search_mapper(0.0, nodes))
        return s.KINDS["remap"], st, s.trials_ref(s.study_name(wl, "iso", "constrained-bo", "-innerbo", seed),
                                                  [], storage)
    head, _, rest = key.partition(":")
    wl, tech, tag = _split_tag(head)
    if rest in ("baseline", "software_only"):
        return s.KINDS["step"], s.step_settings(rest, wl, _spec(wl), tech), None
    m = re.fullmatch(r"(iso|free):([\w-]+):s(\d+):run:b(\d+):(\{.*\})", rest)
    if m:
        mode, opt, seed, budget, mapper = m[1], m[2], int(m[3]), int(m[4]), json.loads(m[5])
        name = s.study_name(wl, mode, opt, tag, seed)
        if tag == "-innerbo":
            st = s.inner_bo_settings(wl, _spec(wl), seed, budget, mapper)
            return s.KINDS["inner_bo"], st, s.trials_ref(name, range(budget), storage)
        st = s.search_settings(wl, _spec(wl), opt, seed, mode, budget, mapper, tech)
        return s.KINDS["search"], st, s.trials_ref(name, range(len(value["curve"])), storage)
    m = re.fullmatch(r"(iso|free):([\w-]+):s(\d+):best(\[.*\])(?::max_nodes=(\d+))?", rest)
    if m:
        mode, opt, seed, point, nodes = m[1], m[2], int(m[3]), _point(m[4]), int(m[5] or 0)
        st = s.remap_settings("exact", wl, _spec(wl), tech, mode, opt, seed, point, s.search_mapper(0.0, nodes))
        return s.KINDS["remap"], st, s.trials_ref(s.study_name(wl, mode, opt, tag, seed), [], storage)
    raise ValueError(f"unknown steps.json key {key!r}")


def migrate_shi2020(steps: Path, dest: Path, results: Path | None = None,
                    storage: str | None = None) -> RecordStore:
    """Every entry of ``steps`` as a record of the store at ``dest``; a re-map's trial is
    its search's best one where the search's entry is in the file too. Refuses to finish
    (``ValueError``) unless each entry becomes one record of its own."""
    data = json.loads(Path(steps).read_text())
    inner = "dqn"
    if results is not None and Path(results).exists():
        inner = json.loads(Path(results).read_text())["settings"]["inner_bo"]["workload"]
    store = RecordStore(dest)
    parsed = [(k, *parse_shi2020_key(k, v, storage, inner)) for k, v in data.items()]
    best_of = {}   # (workload, tech, mode, optimizer, seed) -> best trial of its search
    for key, kind, st, _ in parsed:
        if kind == s.KINDS["search"]:
            best_of[(st["workload"], st["tech"], st["mode"], st["optimizer"], st["seed"])] = \
                s._best_trial(data[key]["curve"])
    keys = set()
    for key, kind, st, trials in parsed:
        value = data[key]
        if kind == s.KINDS["remap"] and trials is not None:
            n = best_of.get((st["workload"], st["tech"], st["mode"], st["optimizer"], st["seed"]))
            trials = dict(trials, numbers=[] if n is None or st["search"] != "exact" else [n])
        wall = value.get("seconds") if isinstance(value, dict) else None
        rec = store.put(kind, st, value, wall_s=wall, trials=trials, note=f"{_NOTE} key {key!r}")
        keys.add(rec.key)
    if len(keys) != len(data):
        raise ValueError(f"{len(data)} entries became {len(keys)} records: two entries share settings")
    return store


def restate_shi2020_gaps(root: Path) -> list[str]:
    """Rewrite, in place, every Shi 2020 figure record (steps and re-maps) of the store at
    ``root`` whose ``worst_layer_gap`` has the meaning before commit af00e52
    (:func:`experiments.reproduce.shi2020.restate_gap`: nonzero beside
    ``all_layers_proven_optimal: true``) into today's: gap 0, the old number kept under
    :data:`~experiments.reproduce.shi2020.STALE_GAP_FIELD`, a note saying so; settings, key,
    times and trials unchanged. Returns the keys rewritten (none on a second call)."""
    store = RecordStore(root)
    done = []
    for rec in list(store):
        if rec.kind not in (s.KINDS["step"], s.KINDS["remap"]) or not isinstance(rec.value, dict):
            continue
        new = s.restate_gap(rec.value)
        if new is rec.value:
            continue
        note = (f"{rec.note}; " if rec.note else "") + (
            f"worst_layer_gap restated as 0 (every layer proven optimal); the number of the earlier meaning "
            f"(worst layer's EDP over the exact mapper's lower bound - 1) kept as {s.STALE_GAP_FIELD}")
        store.put(rec.kind, rec.settings, new, wall_s=rec.wall_s, cpu_s=rec.cpu_s, trials=rec.trials, note=note,
                  replace=True)
        done.append(rec.key)
    return done


def migrate_meloppr(out: Path) -> RecordStore:
    """MeLoPPR's ``OUT/graphs/*.json`` (``{"signature", "result"}`` each) and
    ``OUT/host_models.json`` as records of ``OUT/records``; the old files are left as they are."""
    from experiments.reproduce import meloppr as m

    store = RecordStore(Path(out) / "records")
    for path in sorted((Path(out) / "graphs").glob("*.json")):
        data = json.loads(path.read_text())
        kind = m.KINDS["operating_points"] if path.name.endswith(("-operating-points.json",
                                                                   "-operating-points-unbounded.json")) else m.KINDS["graph"]
        wall = data["result"].get("seconds")
        store.put(kind, data["signature"], data["result"], wall_s=wall if isinstance(wall, float | int) else None,
                  note=f"converted from {path.name}")
    hosts = Path(out) / "host_models.json"
    if hosts.exists():
        store.put(m.KINDS["hosts"], {"graph": "cora", "extractors": list(m.HOST_EXTRACTORS)},
                  json.loads(hosts.read_text()), note="converted from host_models.json")
    return store


def migrate_d2nn(out: Path) -> RecordStore:
    """D2NN's ``OUT/units/KEY.pt`` (``torch.save`` of ``record``, ``state`` and / or ``rows``,
    read with ``weights_only=True``) as records of ``OUT/records``; the old files are left."""
    import torch

    from experiments.reproduce.d2nn import UnitRecords

    units = UnitRecords(out)
    for path in sorted((Path(out) / "units").glob("*.pt")):
        units.save(path.stem, torch.load(path, weights_only=True, map_location="cpu"))
    return units.store


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.migrate_records",
                                 description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("shi2020", help="a Shi 2020 steps.json into a record store")
    p.add_argument("steps", type=Path)
    p.add_argument("dest", type=Path)
    p.add_argument("--results", type=Path, default=None, help="the invocation's results.json (inner-BO workload)")
    p.add_argument("--storage", default=None, help="the invocation's studies.db URL, for the trials' provenance")
    p = sub.add_parser("shi2020-gaps", help="restate the stale worst_layer_gap of a Shi 2020 record store in place")
    p.add_argument("records", type=Path)
    p = sub.add_parser("meloppr", help="MeLoPPR's OUT/graphs/ and host_models.json into OUT/records")
    p.add_argument("out", type=Path)
    p = sub.add_parser("d2nn", help="D2NN's OUT/units/*.pt into OUT/records")
    p.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    if args.what == "shi2020-gaps":
        keys = restate_shi2020_gaps(args.records)
        print(f"{len(keys)} records restated in {args.records}")
        return
    if args.what == "meloppr":
        store = migrate_meloppr(args.out)
    elif args.what == "d2nn":
        store = migrate_d2nn(args.out)
    else:
        store = migrate_shi2020(args.steps, args.dest, args.results, args.storage)
    print(f"{len(store.keys())} records in {store.root}")


if __name__ == "__main__":
    main()
