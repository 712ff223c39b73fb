"""Accelerator models by name, so configs can say ``accelerator: systolic``.

One :class:`design_space.registry.Registry` (entry-point group ``coexplore.accelerators``):
the built-in models below, any registered with :func:`register`, and any an installed
package declares. :func:`resolve_accelerator` also takes a class (or any builder
``point -> accelerator``) or a ``"module:Class"`` reference, and an architecture spec file (``{"spec": "my_arch.yaml",
"parameters": {...}}``, :class:`accelerators.spec.ArchFile`).
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
    """A class or builder as given; a registered name; ``"module:Class"``; or a mapping
    ``{"spec": path, "parameters": {point key: field path}}`` naming an architecture spec
    file (:class:`accelerators.spec.ArchFile`, whose ``from_point`` reads the spec with
    the point's values in the named fields).

    Raises:
        ValueError: an unknown name (listing the registered ones), a reference that
            does not import, or a spec mapping with other keys or a missing file.
    """
    if isinstance(spec, dict) and "spec" in spec:
        from accelerators.spec import ArchFile

        unknown = sorted(set(spec) - {"spec", "parameters"})
        if unknown:
            raise ValueError(f"accelerator {{spec: ...}}: unknown keys {unknown}; known keys: ['parameters', 'spec']")
        return ArchFile(str(spec["spec"]), spec.get("parameters") or {})
    if not isinstance(spec, str):
        return spec
    if ":" in spec:
        try:
            return import_ref(spec, "accelerator")
        except SpaceDefinitionError as e:
            raise ValueError(str(e)) from None
    return ACCELERATORS.get(spec)
