"""Reproductions of the seed systems, one module each, runnable as
``coexplore reproduce NAME [--quick]``: ``shi2020`` (constrained-BO co-design of neural
accelerators), ``meloppr`` (memory-efficient local PPR on CPU and a modelled FPGA engine).
Each writes a table (paper value, ours, command), JSON results and plots under
``runs/reproduce/NAME/``."""

REPRODUCTIONS = ("shi2020", "meloppr", "hasco", "d2nn")
