"""Sub-graph extraction as native code does it: a compiled (numba) depth-limited BFS and
induced-CSR builder, for costing the host side of MeLoPPR's CPU+FPGA system.

In MeLoPPR's hybrid system the host extracts every sub-graph a query diffuses (BFS to
depth ``l``, then the node table and neighbour lists the FPGA's PEs read) and streams it
to the engine (Li et al., DAC 2021, Sec. V). The paper does not publish its host code
(github.com/sharc-lab/MeLoPPR holds only the RTL), so what its host cost is unknown. The
CSR code of :func:`evaluators.ppr.bfs_ball` + :func:`evaluators.ppr.induced` is
vectorized numpy, but each BFS level is a handful of numpy calls, so a small ball costs
about 0.1 ms of interpreter overhead -- far more than native code would spend.
:class:`NativeExtractor` is what a C/C++ host would run:

* one pass of a queue-based BFS over the CSR arrays, stopping after ``depth`` levels;
  a node-to-local-id array of ``n`` entries is allocated once per graph and reset only
  at the ball's nodes afterwards, so a query touches ``O(|ball| + its adjacency)`` memory;
* a second pass over the ball's rows that keeps the neighbours inside the ball,
  renumbered to local ids: the induced CSR (``indptr`` = each node's first/last
  neighbour address, ``indices`` = the neighbour list), which is already the table
  layout the PEs read.

The kernels are compiled by numba on first use (cached on disk). The ball is in BFS
discovery order, seed first; the neighbours of a row keep the graph's order (ascending
global id), so their local ids are not sorted -- fine for the diffusion's products.
``tests/evaluators/test_ppr_native.py`` checks balls and sub-graphs against
:func:`evaluators.ppr.bfs_ball` / :func:`evaluators.ppr.induced`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from evaluators.ppr.graph import Graph

__all__ = ["NativeExtractor"]

_KERNEL = None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        import numba

        @numba.njit(cache=True, nogil=True)
        def extract(indptr, indices, local, queue, source, depth, build):
            queue[0] = source
            local[source] = 0
            head = 0
            tail = 1
            level = 0
            while level < depth and head < tail:
                end = tail
                while head < end:
                    u = queue[head]
                    head += 1
                    for p in range(indptr[u], indptr[u + 1]):
                        w = indices[p]
                        if local[w] < 0:
                            local[w] = tail
                            queue[tail] = w
                            tail += 1
                level += 1
            nb = tail
            sub_indptr = np.zeros(nb + 1 if build else 1, dtype=np.int64)
            if build:
                count = 0
                for i in range(nb):
                    u = queue[i]
                    for p in range(indptr[u], indptr[u + 1]):
                        if local[indices[p]] >= 0:
                            count += 1
                    sub_indptr[i + 1] = count
            sub_indices = np.empty(sub_indptr[-1], dtype=np.int32)
            if build:
                q = 0
                for i in range(nb):
                    u = queue[i]
                    for p in range(indptr[u], indptr[u + 1]):
                        j = local[indices[p]]
                        if j >= 0:
                            sub_indices[q] = j
                            q += 1
            nodes = queue[:nb].copy()
            for i in range(nb):
                local[queue[i]] = -1
            return nodes, sub_indptr, sub_indices

        _KERNEL = extract
    return _KERNEL


class NativeExtractor:
    """Compiled BFS-ball extraction on one graph (see the module docstring).

    Holds ``O(n)`` scratch (a local-id array and a queue, 16 bytes per node) that every
    call reuses, as a native host would; not thread-safe.
    """

    def __init__(self, g: Graph) -> None:
        self.graph = g
        self._indptr = np.ascontiguousarray(g.adj.indptr, dtype=np.int64)
        self._indices = np.ascontiguousarray(g.adj.indices, dtype=np.int32)
        self._local = np.full(g.n, -1, dtype=np.int64)
        self._queue = np.empty(max(1, g.n), dtype=np.int64)
        self._fn = _kernel()

    def _check(self, source: int, depth: int) -> None:
        if not 0 <= source < self.graph.n:
            raise IndexError(f"source {source} out of range for {self.graph.n} nodes")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")

    def ball(self, source: int, depth: int) -> np.ndarray:
        """Nodes within ``depth`` hops of ``source``, BFS order, ``source`` first."""
        self._check(source, depth)
        nodes, _, _ = self._fn(self._indptr, self._indices, self._local, self._queue,
                               int(source), int(depth), False)
        return nodes

    def extract_arrays(self, source: int, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(nodes, indptr, indices)``: the ball and its induced CSR in local ids."""
        self._check(source, depth)
        return self._fn(self._indptr, self._indices, self._local, self._queue,
                        int(source), int(depth), True)

    def extract(self, source: int, depth: int) -> tuple[np.ndarray, sp.csr_array]:
        """The ball and its induced adjacency as a ``float64`` 0/1 ``csr_array`` (row
        ``i`` = ``nodes[i]``)."""
        nodes, indptr, indices = self.extract_arrays(source, depth)
        a = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(nodes.size, nodes.size))
        return nodes, a
