"""Cross-tool and silicon validation: coexplore's models against another tool's output or
a chip's published figures, case by case (``python -m experiments.validation.NAME``).

What goes here: scripts that run the same accelerator, workload and mapping through
coexplore and through a public reference (ZigZag 3.9.1 in ``.venv-zigzag``, SCALE-Sim
3.0.0 in ``.venv-scalesim``, published silicon tables) and print the agreement, count
for count where the reference counts. Their committed outputs are under
``docs/validation/``. The translators between coexplore's specs and other tools' formats
are library code (:mod:`accelerators.interop`, :mod:`mappers.interop`); the published
reference designs are in :mod:`accelerators.reference` and the row-stationary mappings in
:mod:`mappers.row_stationary`.

* :mod:`~experiments.validation.zigzag_crossval` -- the loop-nest model against ZigZag on
  coexplore's Eyeriss v1 (:mod:`~experiments.validation.zigzag_counts` is ZigZag's half,
  run inside ``.venv-zigzag``); :mod:`~experiments.validation.zigzag_bundled` -- the same
  on ZigZag's own bundled accelerators, read through :mod:`accelerators.interop.zigzag`.
* :mod:`~experiments.validation.timeloop_exercises` -- the loop-nest model under
  ``accounting="timeloop"`` against every Timeloop run of the public Timeloop/Accelergy
  exercises, read through :mod:`accelerators.interop.timeloop`.
* :mod:`~experiments.validation.scalesim_compare` -- the systolic cycle model against
  SCALE-Sim v3.
* :mod:`~experiments.validation.silicon_compare` -- Eyeriss v1 (JSSC 2017 Tables III and V)
  and TPU v1 published figures; :mod:`~experiments.validation.rs_baseline` -- the best
  row-stationary mapping of each AlexNet convolution against the chip's own.
* :mod:`~experiments.validation.meloppr_rtl` -- MeLoPPR's FPGA engine model
  (:mod:`accelerators.ppr_fpga_rtl`) against Icarus simulations of the authors' Verilog,
  read from a checkout the user names (never committed); ``--synth`` runs yosys on it.
"""

__all__: list[str] = []  # scripts: run them as modules
