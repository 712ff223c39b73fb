"""Every registered accelerator model against its protocol (:mod:`accelerators.testing`),
and proof that each check catches a broken model."""

from __future__ import annotations

import dataclasses

import pytest

from accelerators.base import InvalidParameter
from accelerators.gpu import GPUAccelerator
from accelerators.registry import ACCELERATORS
from accelerators.spatial import SpatialArray
from accelerators.testing import (
    ConformanceError,
    check_accelerator,
    check_area_vectorized,
    check_round_trip,
    check_validate_names_parameter,
    variants,
)

EXAMPLES = {  # a valid instance of each (the class's defaults, where it has them)
    "systolic": lambda cls: cls(),
    "spatial": lambda cls: cls(),
    "intrinsic": lambda cls: cls(),
    "diffractive": lambda cls: cls(),
    "ppr-fpga": lambda cls: cls(),
    "gpu": lambda cls: GPUAccelerator.preset("h100-sxm"),
}


def test_every_registered_accelerator_has_an_example():
    assert set(ACCELERATORS.names()) == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_registered_accelerator_conforms(name):
    cls = ACCELERATORS.get(name)
    check_accelerator(cls, EXAMPLES[name](cls))


# ------------------------------------------------------------------ the checks can fail
@dataclasses.dataclass(frozen=True)
class Mute(SpatialArray):
    """Its validate error omits the parameter."""

    def validate(self):
        if self.pe_x < 1:
            raise ValueError("bad hardware")
        super().validate()


@dataclasses.dataclass(frozen=True)
class AreaDrift(SpatialArray):
    """Its scalar area adds 10 % for a large GLB that the vectorized area does not."""

    @property
    def area_mm2(self):
        return SpatialArray.area_mm2.fget(self) * (1.1 if self.glb_kib > 108 else 1.0)


@dataclasses.dataclass(frozen=True)
class Lossy(SpatialArray):
    """from_point drops a field."""

    @classmethod
    def from_point(cls, point):
        return cls(**{k: v for k, v in point.items() if k != "glb_kib"})


def test_the_checks_catch_broken_models():
    check_accelerator(SpatialArray, SpatialArray())   # the unbroken base passes
    assert "pe_x" in check_validate_names_parameter(SpatialArray, SpatialArray())
    with pytest.raises(ConformanceError, match="does not name the parameter"):
        check_validate_names_parameter(Mute, Mute())
    with pytest.raises(ConformanceError, match="area_mm2_of gives"):
        check_area_vectorized(AreaDrift, variants(AreaDrift, AreaDrift()))
    with pytest.raises(ConformanceError, match="from_point"):
        check_round_trip(Lossy, Lossy(glb_kib=64.0))
    assert issubclass(InvalidParameter, ValueError)
