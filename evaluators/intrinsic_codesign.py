"""HASCO's co-design problem on tensor-intrinsic arrays: workloads, hardware spaces, the
generator's limit, and :class:`HascoCoDesign`, the evaluator that scores a hardware point
with its software searched (the nested evaluator with HASCO's schedule mapper).

* **Workloads** (:func:`workload`): the networks ResNet-50, MobileNetV2 and Xception
  (:mod:`mappers.zoo`, as :class:`~mappers.tensor_ir.Computation` s; HASCO feeds its
  Keras models 224x224 images, so Xception defaults to 224 here) and HASCO's kernel
  benchmarks with the shapes of its testbenches (``testbench/sw_*_test.py`` of
  github.com/pku-liang/HASCO): :data:`KERNELS`. For the CONV intrinsic a network's
  fully connected layer is written as a 1x1 convolution (HASCO: "We treat GEMMs as 1x1
  CONVs").
* **Hardware spaces** (:func:`hardware_space`, defined as
  :func:`accelerators.spaces.hasco_space`): :data:`accelerators.intrinsic.HASCO_SPACES`
  as a :class:`~design_space.DesignSpace`, with the known constraint HASCO's code
  comment says is missing (``local_kib <= sp_kib``) and optionally an area budget
  (:func:`reference_area_mm2`: that of a Gemmini-like reference design).
* **Evaluation** (:class:`HascoCoDesign`, a :class:`~evaluators.nested.NestedEvaluator`):
  build the accelerator; a point the hardware generator cannot build raises
  :class:`~evaluators.base.Infeasible` -- here a memory bank larger than
  :data:`MAX_BANK_KIB` (see there); then every unique layer is mapped by
  :class:`mappers.schedule.ScheduleMapper` (every decomposition of a computation with
  more than two inputs is tried, stage latencies add up; a layer without any partition
  onto the intrinsic is infeasible), minimizing latency. Network totals
  (:func:`evaluators.nested.network_metrics`): latency = sum of layer latencies x
  repeats (layers run one after another), energy likewise, power = energy / latency
  (HASCO averages per-layer powers instead), area of the accelerator. HASCO's +3 %
  uniform noise on every metric is not reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from accelerators.intrinsic import ACC_BANKS, DATAFLOWS, HASCO_SPACES, IntrinsicAccelerator
from accelerators.spaces import hasco_space as hardware_space
from evaluators.nested import NestedEvaluator
from mappers import tensor_ir as ir
from mappers import zoo
from mappers.schedule import SCHEDULE_SEARCHES, ScheduleMapper
from mappers.searches import SEARCHES
from mappers.tensor_ir import Computation
from mappers.workloads import Layer, conv2d

__all__ = ["KERNELS", "MAX_BANK_KIB", "NETWORKS", "PROXIES", "HascoCoDesign", "build", "generator_check",
           "hardware_space", "reference_area_mm2", "reference_point", "workload"]

MAX_BANK_KIB = 128.0
"""[inferred] Largest SRAM bank the hardware generator can build (KiB): a stand-in for
HASCO's generator failures (``generator.instantiate`` returning None), discovered only by
trying to build the design. Memory compilers do have a largest macro; the value is an
assumption. A scratchpad of ``sp_kib`` in ``sp_banks`` banks, or the accumulator in
:data:`~accelerators.intrinsic.ACC_BANKS` banks, with a bank above it is infeasible. It is
deliberately *not* a known constraint of :func:`hardware_space`: it is the unknown
constraint that the MOBO's feasibility model (or HASCO's reject-and-resample) handles."""

KERNELS: dict[str, list[Computation]] = {
    "gemm": [ir.gemm(M=256, N=512, K=1024, name="mm_1"), ir.gemm(M=64, N=64, K=64, name="mm_2")],
    "gemv": [ir.gemv(M=128, L=512, B=256, name="gemv_1")],
    "conv2d": [ir.conv2d(N=1, K=32, C=128, P=30, Q=254, R=3, S=3, name="conv_1"),
               ir.conv2d(N=1, K=256, C=256, P=64, Q=64, R=1, S=1, name="conv_2")],
    "depthwise": [ir.depthwise(G=128, P=30, Q=254, R=3, S=3, name="dwconv_1"),
                  ir.depthwise(G=64, P=222, Q=222, R=3, S=3, multiplier=2, name="dwconv_2")],
    "mttkrp": [ir.mttkrp(M=128, N=256, K=512, L=1024, name="mttkrp_1"),
               ir.mttkrp(M=64, N=64, K=64, L=64, name="mttkrp_2")],
    "ttm": [ir.ttm(M=128, N=256, K=512, L=1024, name="ttm_1"), ir.ttm(M=64, N=64, K=64, L=64, name="ttm_2")],
}
"""HASCO's kernel benchmarks (``testbench/sw_{mm,gemv,conv,dwconv,mttkrp,ttm}_test.py``):
``mm_compute(256, 512, 1024)`` and ``(64, 64, 64)``; ``gemv_compute(M=128, N=256, L=512)``
(a batch of 256 GEMVs); ``conv2d_compute(N=1, C=128, Y=32, X=256, K=32, 3x3)`` and
``(1, 256, 64x64, 256, 1x1)`` (no padding: outputs 30x254, 64x64); ``dwconv_compute(1, 128,
32x256, multiplier 1, 3x3)`` and ``(1, 64, 224x224, multiplier 2, 3x3)``; ``mttkrp`` and
``ttm`` ``(128, 256, 512, 1024)`` and ``(64, 64, 64, 64)``."""

NETWORKS = {"resnet50": zoo.resnet50, "mobilenet_v2": zoo.mobilenet_v2, "xception": zoo.xception}

PROXIES: dict[str, list[Computation]] = {
    "GEMM": [ir.gemm(M=512, N=512, K=512, name="proxy_gemm")],
    "GEMV": [ir.gemm(M=512, N=512, K=512, name="proxy_gemm")],
    "CONV": [ir.conv2d(N=1, K=64, C=64, P=56, Q=56, R=3, S=3, name="proxy_conv")],
    "DOT": [ir.depthwise(G=64, P=56, Q=56, R=3, S=3, name="proxy_dwconv")],
}
"""Generic workloads the *separate* flow designs hardware for (one per intrinsic): a
square 512^3 GEMM for the matrix intrinsics, a 3x3 64->64 convolution at 56x56 (a
ResNet stage-1 layer) for CONV, a 3x3 depthwise convolution at 56x56 for DOT."""


def _gemm_as_conv(layer: Layer) -> Layer:
    """``C[m, n] = A[m, k] B[k, n]`` as a 1x1 convolution (batch ``m``, ``n`` filters,
    ``k`` channels): same MACs and operands, a shape the CONV intrinsic matches."""
    a = layer.attrs
    return conv2d(layer.name, N=a["M"], K=a["N"], C=a["K"], P=1, Q=1, R=1, S=1, repeat=layer.repeat)


def workload(name: str | Sequence[Computation], intrinsic_kind: str, **kw: Any) -> list[Computation]:
    """The computations of workload ``name`` (a network of :data:`NETWORKS`, a kernel of
    :data:`KERNELS`, ``"proxy"`` for :data:`PROXIES`, or a list of computations) as the
    ``intrinsic_kind`` accelerator sees them. ``kw`` goes to the network builder
    (Xception's default ``image`` is 224, as HASCO's)."""
    if not isinstance(name, str):
        return list(name)
    kind = intrinsic_kind.upper()
    if name in NETWORKS:
        if name == "xception":
            kw.setdefault("image", 224)
        layers = NETWORKS[name](**kw)
        if kind == "CONV":
            layers = [_gemm_as_conv(x) if x.kind == "gemm" else x for x in layers]
        return [Computation.from_layer(x) for x in layers]
    if name in KERNELS:
        return list(KERNELS[name])
    if name == "proxy":
        return list(PROXIES[kind])
    raise ValueError(f"unknown workload {name!r}; choices: {sorted(NETWORKS) + sorted(KERNELS) + ['proxy']}")


def build(intrinsic_kind: str, point: Mapping[str, Any]) -> IntrinsicAccelerator:
    """The accelerator of a hardware point (``dataflow`` defaults to the kind's only or
    first one)."""
    p = dict(point)
    p.setdefault("dataflow", next(iter(DATAFLOWS[intrinsic_kind.upper()])))
    return IntrinsicAccelerator.from_point(p, intrinsic=intrinsic_kind.upper())


def generator_check(acc: IntrinsicAccelerator, max_bank_kib: float = MAX_BANK_KIB) -> str | None:
    """Why the generator cannot build ``acc`` (None if it can)."""
    if acc.sp_kib / acc.sp_banks > max_bank_kib:
        return (f"scratchpad bank of {acc.sp_kib / acc.sp_banks:g} KiB exceeds the {max_bank_kib:g} KiB "
                f"macro limit ({acc.sp_kib:g} KiB in {acc.sp_banks} banks)")
    if acc.local_kib / ACC_BANKS > max_bank_kib:
        return (f"accumulator bank of {acc.local_kib / ACC_BANKS:g} KiB exceeds the {max_bank_kib:g} KiB "
                f"macro limit ({acc.local_kib:g} KiB in {ACC_BANKS} banks)")
    return None


def reference_area_mm2(intrinsic_kind: str) -> float:
    """Area of :func:`reference_point` (the area budget of the reproduction)."""
    return build(intrinsic_kind, reference_point(intrinsic_kind)).area_mm2


def reference_point(intrinsic_kind: str) -> dict[str, Any]:
    """A Gemmini-like mid-size design in each HASCO space (16x16 PEs, 256 KiB scratchpad
    in 4 banks, 128 KiB accumulator, 128-bit DMA; WS for GEMM): its area is the area
    budget of the co-design vs separate comparison."""
    kind = intrinsic_kind.upper()
    p: dict[str, Any] = {"sp_kib": 256, "local_kib": 128, "sp_banks": 4, "dma_bus_bits": 128}
    if HASCO_SPACES[kind]["square"]:
        p["pe"] = 16
    else:
        p["pe_x"] = p["pe_y"] = 16
    if kind == "GEMM":
        p["dataflow"] = "WS"
    return p


class HascoCoDesign(NestedEvaluator):
    """``hardware point -> {latency_ms, power_mw, area_mm2, ...}`` with the software of
    every layer searched (see the module docstring).

    Args:
        intrinsic: ``"GEMM"``, ``"GEMV"``, ``"DOT"`` or ``"CONV"``.
        workload: a name for :func:`workload` or a list of computations.
        sw_method: the schedule search (``heuristic``, ``random``, or an ask/tell
            strategy such as ``qlearning``; :class:`~mappers.schedule.ScheduleMapper`).
        sw_factory: the ask/tell strategy's factory for a ``sw_method`` that is neither
            built in nor registered (:class:`experiments.inner_search.OptimizerSearch`).
        sw_budget: schedules evaluated per layer (and stage).
        schedule: ``"search"`` (co-design) or ``"default"`` (no software search: the
            default schedule only).
        max_bank_kib: the generator's largest SRAM bank (:data:`MAX_BANK_KIB`).
        workload_options: passed to :func:`workload`.
        sw_seed: seed of the schedule searches. It does not follow the trial's seed, so
            a hardware point always gets the same software (and cache hits).
    """

    MAPPER_OPTIONS: tuple[str, ...] = ()
    SEARCH_OPTIONS: Mapping[str, str] = {"sw_method": "sw_factory"}
    """``sw_method`` names a search whose ask/tell factory goes in ``sw_factory`` (wired by
    the study layer, :func:`experiments.inner_search.wire_evaluator_options`)."""

    def __init__(self, intrinsic: str, workload: str | Sequence[Computation], *, sw_method: str = "heuristic",
                 sw_budget: int = 60, schedule: str = "search", max_bank_kib: float = MAX_BANK_KIB,
                 workload_options: Mapping[str, Any] | None = None, sw_seed: int = 0,
                 sw_factory: Callable[..., Any] | None = None) -> None:
        kind = intrinsic.upper() if isinstance(intrinsic, str) else intrinsic
        if kind not in HASCO_SPACES:
            raise ValueError(f"unknown intrinsic {intrinsic!r}; choices: {sorted(HASCO_SPACES)}")
        if schedule not in ("search", "default"):
            raise ValueError(f"schedule must be 'search' or 'default', got {schedule!r}")
        if not isinstance(sw_method, str) or (sw_method == "default" and schedule == "search"):
            raise ValueError(f"sw_method must name a search ({list(SCHEDULE_SEARCHES[1:])} or an "
                             f"ask/tell strategy), got {sw_method!r}")
        self.intrinsic = kind
        self.max_bank_kib = float(max_bank_kib)
        method = "default" if schedule == "default" else sw_method
        if sw_factory is None and method not in SCHEDULE_SEARCHES and method not in SEARCHES:
            raise ValueError(f"sw_method={sw_method!r} is not a schedule search {list(SCHEDULE_SEARCHES[1:])} "
                             f"nor a registered search strategy (SEARCHES: {SEARCHES.names()}); for an "
                             f"ask/tell optimizer pass its factory, sw_factory=experiments.inner_search."
                             f"OptimizerSearch({sw_method!r}) (a study or config does this for you)")
        mapper = ScheduleMapper(method, sw_budget, fixed_seed=int(sw_seed), factory=sw_factory)
        super().__init__(_Builder(kind), _workload(workload, kind, **dict(workload_options or {})), mapper,
                         objective="latency", check=_GeneratorCheck(self.max_bank_kib))

    @property
    def comps(self) -> list[Computation]:
        """The computations of the workload."""
        return self.units


_workload = workload


class _Builder:
    """``point -> IntrinsicAccelerator`` of one intrinsic kind (picklable)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, point: Mapping[str, Any]) -> IntrinsicAccelerator:
        return build(self.kind, point)


class _GeneratorCheck:
    """``acc -> reason | None`` for the generator's largest bank (picklable)."""

    def __init__(self, max_bank_kib: float) -> None:
        self.max_bank_kib = max_bank_kib

    def __call__(self, acc: IntrinsicAccelerator) -> str | None:
        return generator_check(acc, self.max_bank_kib)
