"""The `make demo` co-design sweep: a systolic array for ResNet-50, under an area budget.

Hardware space: array rows x cols (8..128 each), dataflow (OS / WS / IS), the three
SRAM partitions (16 KiB .. 1 MiB each) and the DRAM bandwidth (4..32 words/cycle), with
a known constraint of at most :data:`AREA_BUDGET_MM2` (the area model of
:class:`accelerators.systolic.SystolicArray`: Horowitz 45 nm MACs + flip-flop registers
+ 6T SRAM). Software: for every hardware point each layer is mapped by the heuristic
mapper (max PE utilization, then greedy descent on EDP; :mod:`mappers.heuristic`).
Objective: network EDP (energy x latency of the first six unique ResNet-50 layers, with
repeat counts); the energy-latency Pareto front is exported next to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelerators.systolic import SystolicArray

AREA_BUDGET_MM2 = 6.0


def within_area(p: Mapping[str, Any]) -> Any:
    """Vectorized known constraint: area <= AREA_BUDGET_MM2."""
    return SystolicArray.area_mm2_of(p) <= AREA_BUDGET_MM2
