"""Free-space diffractive optics in torch: propagation, layers, detector, noise, the
(multi-task) diffractive network, its training and the co-design evaluator.

Modules: :mod:`.propagation` (band-limited ASM, Fresnel, Rayleigh-Sommerfeld, validity
checks), :mod:`.layers` (quantized phase layers, detector regions), :mod:`.noise`
(every system component), :mod:`.model` (:class:`DiffractiveNetwork`), :mod:`.data`
(offline MNIST / Fashion-MNIST), :mod:`.train`, :mod:`.robustness`, :mod:`.multitask_evaluator`.
"""

from evaluators.optics.layers import (
    Detector,
    PhaseLayer,
    grid_layout,
    lightridge_layout,
    quantize_ste,
)
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.noise import NOISE_SWEEPS, Noise
from evaluators.optics.propagation import (
    PropagationValidityError,
    PropagationValidityWarning,
    Propagator,
    asm_transfer,
    check_propagation,
    fresnel_transfer,
    propagate,
    rs_transfer,
)

__all__ = [
    "NOISE_SWEEPS",
    "Detector",
    "DiffractiveNetwork",
    "Noise",
    "PhaseLayer",
    "PropagationValidityError",
    "PropagationValidityWarning",
    "Propagator",
    "asm_transfer",
    "check_propagation",
    "fresnel_transfer",
    "grid_layout",
    "lightridge_layout",
    "propagate",
    "quantize_ste",
    "rs_transfer",
]
