"""Accelerator models by name, so configs can say ``accelerator: systolic``.

One :class:`design_space.registry.Registry` (entry-point group ``coexplore.accelerators``):
the built-in models below, any registered with :func:`register`, and any an installed
package declares. :func:`resolve_accelerator` also takes a class (or any builder
``point -> accelerator``) or a ``"module:Class"`` reference.
"""

from __future__ import annotations

from typing import Any

from design_space.errors import SpaceDefinitionError
from design_space.references import import_ref
from design_space.registry import Registry

__all__ = ["ACCELERATORS", "register", "resolve_accelerator"]

ACCELERATORS: Registry[Any] = Registry("accelerator", "coexplore.accelerators", {
    "systolic": "accelerators.systolic:SystolicArray",
    "spatial": "accelerators.spatial:SpatialArray",
    "intrinsic": "accelerators.intrinsic:IntrinsicAccelerator",
    "diffractive": "accelerators.diffractive:DiffractiveAccelerator",
    "ppr-fpga": "accelerators.ppr_fpga:PPRFpgaEngine",
    "gpu": "accelerators.gpu:GPUAccelerator",
})


def register(name: str, model: Any, *, replace: bool = False) -> Any:
    """Make an accelerator class (with ``from_point``) available as ``name``."""
    return ACCELERATORS.register(name, model, replace=replace)


def resolve_accelerator(spec: Any) -> Any:
    """A class or builder as given; a registered name; or ``"module:Class"``.

    Raises:
        ValueError: an unknown name (listing the registered ones) or a reference that
            does not import.
    """
    if not isinstance(spec, str):
        return spec
    if ":" in spec:
        try:
            return import_ref(spec, "accelerator")
        except SpaceDefinitionError as e:
            raise ValueError(str(e)) from None
    return ACCELERATORS.get(spec)
