"""Workloads, mappings and mapping strategies (the software half of a co-design point).

A *workload* says what runs (tensor layers, graphs, optical tasks); a *mapping* says how
it is laid onto an accelerator (tilings, loop orders, spatial unrolling, graph
decompositions, task-to-layer sharing); a *mapper* chooses mappings (exhaustive, random,
heuristic, Q-learning, BO). ``mapping_space(workload, accelerator)`` returns the legal
mappings as a :class:`design_space.DesignSpace`, the software factor of a
:class:`design_space.JointSpace`.
"""
