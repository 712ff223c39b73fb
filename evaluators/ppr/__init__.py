"""Local personalized PageRank evaluators (MeLoPPR, DAC 2021) on ``scipy.sparse`` CSR.

* :mod:`evaluators.ppr.graph`: :class:`Graph` (symmetric 0/1 CSR + degrees), loaders
  (:func:`load_edgelist`, :func:`from_networkx`, :func:`from_scipy`), synthetic power-law
  stand-ins (:func:`synthetic_powerlaw`, :func:`synthetic_like`), local extraction
  (:func:`bfs_ball`, :func:`induced`).
* :mod:`evaluators.ppr.diffusion`: truncated graph diffusion (:func:`diffuse`), the
  ground truth :func:`local_ppr`, :func:`meloppr`, :func:`forward_push`,
  :func:`power_iteration_ppr`, :class:`PPRResult` / :class:`PPRStats` and
  :func:`precision_at_k`.

Conventions: ``alpha`` = continuation probability (0.95), ``W = A D^-1`` with the full
graph's degrees; see the :mod:`evaluators.ppr.diffusion` docstring.
"""

from evaluators.ppr.diffusion import (
    ALPHA,
    PPRResult,
    PPRStats,
    diffuse,
    forward_push,
    local_ppr,
    meloppr,
    power_iteration_ppr,
    precision_at_k,
    precision_at_k_pprpy,
)
from evaluators.ppr.graph import (
    GRAPH_DIR_ENV,
    PACKAGED_GRAPHS,
    PLANETOID_COUNTS,
    SYNTHETIC_LIKE,
    Graph,
    bfs_ball,
    edge_count,
    from_networkx,
    from_scipy,
    graph_dir,
    graph_path,
    induced,
    load_edgelist,
    load_graph,
    packaged_graph_path,
    synthetic_like,
    synthetic_powerlaw,
)

__all__ = [
    "ALPHA",
    "GRAPH_DIR_ENV",
    "PACKAGED_GRAPHS",
    "PLANETOID_COUNTS",
    "SYNTHETIC_LIKE",
    "Graph",
    "PPRResult",
    "PPRStats",
    "bfs_ball",
    "diffuse",
    "edge_count",
    "forward_push",
    "from_networkx",
    "from_scipy",
    "graph_dir",
    "graph_path",
    "induced",
    "load_edgelist",
    "load_graph",
    "local_ppr",
    "meloppr",
    "packaged_graph_path",
    "power_iteration_ppr",
    "precision_at_k",
    "precision_at_k_pprpy",
    "synthetic_like",
    "synthetic_powerlaw",
]
