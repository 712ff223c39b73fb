"""Parameterized accelerator models (the hardware half of a co-design point).

One frozen dataclass per accelerator kind (systolic array, Eyeriss-like spatial array,
FPGA PPR engine, diffractive optical stack, GPU), each built from a design point, with
``validate()`` raising named errors, an ``area_mm2`` model, and cost constants taken from
``accelerators/tech.py`` where every constant carries its source.

Data flow: design_space -> **accelerators** + mappers -> evaluators -> optimizer -> experiments.
Nothing here imports an optimizer or the study layer.
"""
