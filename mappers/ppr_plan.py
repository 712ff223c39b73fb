"""The MeLoPPR plan -- how a local-PPR query is decomposed and laid onto the FPGA engine --
as a :class:`~design_space.DesignSpace`, and its product with the engine's hardware space.

A plan (:class:`MeLoPPRPlan`) fixes

* the stage split ``l1 + l2 = L`` (paper: ``L = 6 = 3 + 3``; here ``l1`` varies and
  ``l2 = L - l1``, so the sum is exact by construction, with ``1 <= l1 <= L - 1``);
* which next-stage nodes get a stage-2 diffusion: the ``ns_count`` largest residuals
  (``ns_mode = count``; Fig. 7's x-axis) or that fraction of the non-zero-residual nodes
  (``ns_mode = fraction``; Fig. 6's x-axis) -- conditional parameters;
* the global score table size ``c * k`` (``c``: paper 10; ``k``: the top-k the
  application asks for, paper 200);
* the placement of stage-2 sub-graphs on PEs (:data:`accelerators.ppr_fpga.ASSIGNMENTS`:
  ``split`` over all PEs as the RTL does, ``round_robin`` or ``least_loaded`` whole
  sub-graphs).

``k`` defines what precision@k means, so by default it is a *fixed* parameter (a
requirement, not a knob: an optimizer free to lower ``k`` would be scoring a different
metric); pass several ``k_values`` to make it vary anyway.

:func:`codesign_space` is the joint FPGA x plan space of the co-design study, with the
known constraint that the engine fits the KC705's XC7K325T
(:func:`accelerators.ppr_fpga.fits_kc705`); ``experiments/configs/meloppr.yaml`` spells
the same space out in YAML (a test checks they are equal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accelerators.ppr_fpga import ASSIGNMENTS, fits_kc705
from accelerators.spaces import PPR_BRAM_WORDS, PPR_INT_BITS, ordinal_or_fixed
from accelerators.spaces import ppr_fpga_space as hardware_space
from design_space import (
    Categorical,
    Constraint,
    DesignSpace,
    Fixed,
    Integer,
    Real,
)

__all__ = [
    "HW_BRAM_WORDS",
    "HW_INT_BITS",
    "NS_MODES",
    "PAPER_POINT",
    "MeLoPPRPlan",
    "codesign_space",
    "hardware_space",
    "plan_space",
]

NS_MODES = ("count", "fraction")
HW_BRAM_WORDS = PPR_BRAM_WORDS
HW_INT_BITS = PPR_INT_BITS
C_VALUES = (1, 2, 4, 8, 10, 16)


@dataclass(frozen=True)
class MeLoPPRPlan:
    """One plan. ``next_stage``: an ``int`` count or a ``float`` fraction in ``(0, 1]``
    of the non-zero-residual nodes (:func:`evaluators.ppr.meloppr`); ``c=None`` keeps an
    unbounded score table."""

    L: int = 6
    l1: int = 3
    next_stage: int | float = 13
    c: int | None = 10
    k: int = 200
    pe_assignment: str = "split"

    def __post_init__(self) -> None:
        self.validate()

    @property
    def l2(self) -> int:
        return self.L - self.l1

    @property
    def table_entries(self) -> int | None:
        return None if self.c is None else self.c * self.k

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field."""
        def is_int(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        if not is_int(self.L) or self.L < 2:
            raise ValueError(f"MeLoPPRPlan.L must be an integer >= 2, got {self.L!r}")
        if not is_int(self.l1) or not 1 <= self.l1 <= self.L - 1:
            raise ValueError(f"MeLoPPRPlan.l1 must be an integer in [1, L-1] = [1, {self.L - 1}], "
                             f"got {self.l1!r}")
        ns = self.next_stage
        if isinstance(ns, bool) or not isinstance(ns, int | float):
            raise ValueError(f"MeLoPPRPlan.next_stage must be an int count or a float fraction, got {ns!r}")
        if isinstance(ns, int) and ns < 0:
            raise ValueError(f"MeLoPPRPlan.next_stage count must be >= 0, got {ns!r}")
        if isinstance(ns, float) and not 0 < ns <= 1:
            raise ValueError(f"MeLoPPRPlan.next_stage fraction must be in (0, 1], got {ns!r}")
        if self.c is not None and (not is_int(self.c) or self.c < 1):
            raise ValueError(f"MeLoPPRPlan.c must be a positive integer or None, got {self.c!r}")
        if not is_int(self.k) or self.k < 1:
            raise ValueError(f"MeLoPPRPlan.k must be a positive integer, got {self.k!r}")
        if self.pe_assignment not in ASSIGNMENTS:
            raise ValueError(f"MeLoPPRPlan.pe_assignment must be one of {list(ASSIGNMENTS)}, "
                             f"got {self.pe_assignment!r}")

    @classmethod
    def from_point(cls, point: Mapping[str, Any]) -> MeLoPPRPlan:
        """From a (joint) design point of :func:`plan_space` / :func:`codesign_space`
        (other keys are ignored; absent ones take the defaults)."""
        kw: dict[str, Any] = {}
        for key in ("L", "l1", "c", "k"):
            if key in point:
                kw[key] = int(point[key])
        if "pe_assignment" in point:
            kw["pe_assignment"] = str(point["pe_assignment"])
        mode = point.get("ns_mode", "count" if "ns_count" in point else None)
        if mode == "count":
            kw["next_stage"] = int(point["ns_count"])
        elif mode == "fraction":
            kw["next_stage"] = float(point["ns_fraction"])
        elif mode is not None:
            raise ValueError(f"ns_mode must be one of {list(NS_MODES)}, got {mode!r}")
        return cls(**kw)

    def key(self) -> tuple:
        """What determines the software result (precision, sub-graphs); not the placement."""
        return (self.L, self.l1, self.next_stage, self.c, self.k)


def plan_space(
    L: int = 6,
    max_next_stage: int = 32,
    k_values: Sequence[int] = (200,),
    c_values: Sequence[int] = C_VALUES,
    assignments: Sequence[str] = ASSIGNMENTS,
    min_fraction: float = 0.01,
) -> DesignSpace:
    """The MeLoPPR plan space (see the module docstring).

    Parameters: ``L`` (fixed), ``l1`` in ``[1, L-1]``, ``ns_mode`` in ``count`` /
    ``fraction``, ``ns_count`` in ``[1, max_next_stage]`` (log scale; active for
    ``count``), ``ns_fraction`` in ``[min_fraction, 1]`` (log scale; active for
    ``fraction``), ``c``, ``k`` (fixed unless several values), ``pe_assignment``.
    """
    if not isinstance(L, int) or L < 2:
        raise ValueError(f"L must be an integer >= 2, got {L!r}")
    if not isinstance(max_next_stage, int) or max_next_stage < 2:
        raise ValueError(f"max_next_stage must be an integer >= 2, got {max_next_stage!r}")
    if not 0 < min_fraction < 1:
        raise ValueError(f"min_fraction must be in (0, 1), got {min_fraction!r}")
    bad = [a for a in assignments if a not in ASSIGNMENTS]
    if bad or not assignments:
        raise ValueError(f"assignments must be a non-empty subset of {list(ASSIGNMENTS)}, got {list(assignments)}")
    return DesignSpace(
        Fixed("L", L),
        Integer("l1", 1, L - 1),
        Categorical("ns_mode", list(NS_MODES)),
        Integer("ns_count", 1, max_next_stage, log=True, active_if={"ns_mode": ["count"]}),
        Real("ns_fraction", min_fraction, 1.0, log=True, active_if={"ns_mode": ["fraction"]}),
        ordinal_or_fixed("c", c_values),
        ordinal_or_fixed("k", k_values),
        Fixed("pe_assignment", assignments[0]) if len(assignments) == 1
        else Categorical("pe_assignment", list(assignments)),
        name="meloppr-plan",
    )


#: MeLoPPR's chosen design as a point of :func:`codesign_space` (Secs. V-VI of the DAC 2021
#: paper): P = 16 PEs, l1 = l2 = 3 (13 next-stage nodes, the right end of its Fig. 7),
#: c = 10, the RTL's 8192 x 32-bit tables, PEs split between the stages.
PAPER_POINT = {"n_pes": 16, "bram_words_per_table": 8192, "int_bits": 32, "clock_mhz": 100.0,
               "L": 6, "l1": 3, "ns_mode": "count", "ns_count": 13, "c": 10, "k": 200,
               "pe_assignment": "split"}


def codesign_space(L: int = 6, max_next_stage: int = 32, k_values: Sequence[int] = (200,),
                   c_values: Sequence[int] = C_VALUES, assignments: Sequence[str] = ASSIGNMENTS,
                   n_pes: tuple[int, int] = (1, 32), bram_words: Sequence[int] = HW_BRAM_WORDS,
                   int_bits: Sequence[int] = HW_INT_BITS) -> DesignSpace:
    """FPGA engine x MeLoPPR plan, flattened, with the known constraint ``kc705_resources``
    (:func:`accelerators.ppr_fpga.fits_kc705`: LUT, BRAM36 and DSP of the engine with a
    ``c * k`` global table fit the XC7K325T, and ``int_bits`` can address every node). The
    LUTs are those of the model fitted to the paper's Table I (``lut_source="paper"``), not
    the yosys synthesis of the RTL (several times fewer; :data:`accelerators.ppr_fpga.YOSYS_LUT`):
    the conservative choice, and the one the paper's design point is judged by."""
    hw = hardware_space(n_pes, bram_words, int_bits)
    plan = plan_space(L, max_next_stage, k_values, c_values, assignments)
    return DesignSpace(
        *hw.params, *plan.params,
        constraints=[Constraint("kc705_resources", fits_kc705)],
        name="meloppr-codesign",
    )

