"""Define a joint hardware/software design space in Python.

Parameters (:mod:`design_space.parameters`) are typed, frozen dataclasses: ``Integer``,
``Real``, ``PowerOfTwo``, ``Ordinal``, ``Categorical``, ``Permutation``, ``Fixed``; any of
them may be *conditional* (``active_if={"arch": ["systolic"]}``). Known constraints
(:mod:`design_space.constraints`) are vectorized predicates over columns of a batch of
points. :class:`DesignSpace` (:mod:`design_space.space`) samples feasible points,
validates, encodes to ``[0, 1]^d`` for Bayesian optimization and decodes back,
enumerates finite spaces and gives local neighbourhoods. :class:`JointSpace`
(:mod:`design_space.joint`) couples a hardware space with a software space that depends
on the chosen hardware point. :mod:`design_space.serialization` loads and saves spaces as
YAML with errors that name the key and line.

A *point* is a plain ``dict`` from parameter name to a Python value (``int``, ``float``,
``str``, ``bool`` or, for permutations, a ``tuple``); inactive conditional parameters are
absent from it.
"""

from design_space.constraints import Constraint
from design_space.errors import (
    ConfigError,
    SpaceDefinitionError,
    UnsatisfiableSpaceError,
    Violation,
)
from design_space.joint import JointSpace
from design_space.parameters import (
    Categorical,
    Fixed,
    Integer,
    Ordinal,
    Parameter,
    Permutation,
    PowerOfTwo,
    Real,
)
from design_space.serialization import load_space, save_space, space_from_dict, space_to_dict
from design_space.space import DesignSpace

__all__ = [
    "Categorical",
    "ConfigError",
    "Constraint",
    "DesignSpace",
    "Fixed",
    "Integer",
    "JointSpace",
    "Ordinal",
    "Parameter",
    "Permutation",
    "PowerOfTwo",
    "Real",
    "SpaceDefinitionError",
    "UnsatisfiableSpaceError",
    "Violation",
    "load_space",
    "save_space",
    "space_from_dict",
    "space_to_dict",
]
