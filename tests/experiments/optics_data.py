"""Skip a test when the image data sets of the diffractive-optics code are not installed."""

from __future__ import annotations

import pytest

__all__ = ["need_optics_data"]


def need_optics_data() -> None:
    """Skip, saying why, unless MNIST and Fashion-MNIST are both installed
    (:func:`evaluators.optics.data.available`)."""
    from evaluators.optics import data

    for name in ("mnist", "fashion"):
        why = data.available(name)
        if why:
            pytest.skip(f"{name} data not installed: {why}")
