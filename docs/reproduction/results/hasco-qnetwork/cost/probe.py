"""Per pair: CPU seconds of scoring hardware points with the Q-network in the loop (60 a layer,
fresh search cache each point) and with the heuristic, on the reference design and 2 random
designs of the capped space (seed 0)."""
import json
import time

from evaluators.base import Infeasible
from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2, reference_point
from experiments.reproduce.hasco import PAIRS, in_loop_evaluator
from mappers.schedule import SEARCH_CACHE

out = {}
for wl, kind in PAIRS:
    space = hardware_space(kind, reference_area_mm2(kind))
    pts = [reference_point(kind)] + [dict(p) for p in space.sample(2, 0)]
    row = {}
    for m in ("qnetwork", "heuristic"):
        ev = in_loop_evaluator(kind, wl, 60, m, 0)
        cpu = []
        for p in pts:
            SEARCH_CACHE.clear()
            c = time.process_time()
            try:
                ev(p)
            except Infeasible:
                pass
            cpu.append(time.process_time() - c)
        row[m] = cpu
    out[f"{wl}:{kind}"] = row
    print(wl, kind, {m: [round(x, 1) for x in v] for m, v in row.items()}, flush=True)
json.dump(out, open("runs/h49q-cost/probe.json", "w"), indent=1)
