"""MeLoPPR's FPGA diffusion step as the authors' RTL executes it, cycle by cycle.

A model of ``FPGA/diffusion/`` in github.com/sharc-lab/MeLoPPR (``diffusion_rw.v``, the
PE; ``scheduler_*``/``conflict_block.v``, the partition schedulers; ``add_up_score.v``;
the ``top_{dual,quad,octa,hex}*`` tops), checked against Icarus simulations of that RTL
(``experiments/validation/meloppr_rtl.py``, data in ``docs/validation/meloppr_rtl.json``).

**PE state machine** (``diffusion_rw.v``, one transition per falling clock edge). Per node
``u`` of degree ``d`` (in-sub-graph), from entering its first state:

======================  ========  =====================================================
state                   cycles    score address the PE holds afterwards
======================  ========  =====================================================
read previous score     1         ``u``'s previous-score word (own partition)
clear it                1         same
read last-nbr address   1         same (a graph-table read)
trigger divider         1         same
divider running         32        same (``divide.v``: 32 quotient bits)
per neighbour ``v``:
  read neighbour id     1         unchanged (a graph-table read)
  read ``v``'s score    1         ``v``'s current-score word (``v``'s partition)
  write it back         1         same
======================  ========  =====================================================

so ``36 + 3 d`` cycles per node without stalls (:data:`NODE_CYCLES_RTL`,
:data:`EDGE_CYCLES_RTL`).

**Stall rule.** The score table of PE ``a`` holds nodes ``a*node_num ... (a+1)*node_num-1``
(its *partition*). Each scheduler grants its partition to the lowest-numbered PE whose
held score address lies in it; ``conflict[i]`` is raised when any PE ``j < i`` holds an
address in the same partition as PE ``i``. The transitions out of the states other than
"trigger divider" and "divider running" wait while ``conflict`` is high; the conflict
seen at an edge is that of the addresses set at the previous edge (the conflict blocks
update through non-blocking assignments). A PE keeps its last score address while it
reads the graph table and through its 32-cycle division, so it blocks every
higher-numbered PE that addresses its partition meanwhile. A PE that has finished its
nodes releases its address (``rdy`` low drives it to ``z``).

**Data.** A PE latches a neighbour's score in the last cycle of its "read score" state and
writes ``score + floor(s_u / d)`` in the last cycle of its "write" state; nothing makes that
read-modify-write atomic, so a PE stalled between the two writes back a stale sum when
another PE updated the same word meanwhile (a *lost update*). :func:`simulate_step` can
carry the scores to reproduce this (``scores=``).

**Per step, per top** [measured on the RTL, fitted: :data:`STEP_OVERHEAD_CYCLES`]: the
step ends when the slowest PE has finished; the quad/octa/hex tops then run
``add_up_score.v`` on every PE at once, ``3 (node_num - 1) + 1`` cycles (it visits
``node_num - 1`` nodes: the last node of each PE is never accumulated), and hand over to
the next step; the dual top has no accumulation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DIVIDER_CYCLES_RTL",
    "EDGE_CYCLES_RTL",
    "NODE_CYCLES_RTL",
    "STEP_OVERHEAD_CYCLES",
    "TOP_NAMES",
    "accumulation_cycles",
    "simulate_run",
    "simulate_step",
    "step_cycles",
]

#: diffusion_rw.v: read previous score, clear it, read the last-neighbour address, trigger.
NODE_STATES_BEFORE_DIVIDE = 4
#: divide.v: 32 iterations, during which diffusion_rw.v waits in ``div_running``.
DIVIDER_CYCLES_RTL = 32
NODE_CYCLES_RTL = NODE_STATES_BEFORE_DIVIDE + DIVIDER_CYCLES_RTL
#: read neighbour id, read its score, write it back.
EDGE_CYCLES_RTL = 3
#: The tops by PE count.
TOP_NAMES = {2: "dual", 4: "quad", 8: "octa", 16: "hex"}

# state codes
_RP, _OW, _RNA, _DT, _DR, _RN, _RNS, _W, _DONE = range(9)

#: Cycles between the slowest PE's last transition and the start of the next step,
#: besides the accumulation: per top. Fitted to the RTL runs (see
#: ``tests/accelerators/test_ppr_fpga_rtl.py``, which names the cases used).
STEP_OVERHEAD_CYCLES: dict[str, int] = {"dual": 1, "quad": 0, "octa": 0, "hex": 0}


def accumulation_cycles(n_pes: int, node_num: int) -> int:
    """``add_up_score.v`` per step: ``3 (node_num - 1) + 1`` on the quad/octa/hex tops
    (all PEs at once), 0 on the dual top and on one PE (no accumulation there)."""
    if n_pes <= 2:
        return 0
    return 3 * (node_num - 1) + 1


def _partition_layout(n: int, n_pes: int) -> tuple[int, int]:
    node_num = -(-n // n_pes)
    return node_num, n - (n_pes - 1) * node_num


def simulate_step(
    indptr: Any,
    indices: Any,
    n_pes: int,
    node_num: int | None = None,
    scores: np.ndarray | None = None,
    divider_cycles: int = DIVIDER_CYCLES_RTL,
) -> dict[str, Any]:
    """One diffusion step of the PEs' state machines until the slowest PE has finished.

    ``indptr``/``indices``: the sub-graph's CSR (rows = nodes in PE order, 0-based
    neighbour indices); PE ``a`` owns rows ``a*node_num ...`` (``node_num`` default
    ``ceil(n / n_pes)``). ``scores`` (int64, optional): previous-step scores; the result
    then has ``"scores"``, the new scores with the RTL's lost updates.
    ``divider_cycles``: 32 in the RTL (``divide.v``); other widths [inferred] take one
    cycle per quotient bit. A node without neighbours (which the RTL's tables cannot
    express: ``degree = last - first + 1 >= 1``) is taken to leave after its division
    [inferred], and passes no score.

    Returns ``cycles`` (edges until the last PE finished), ``finish`` (per PE),
    ``stalls`` (cycles each PE waited on ``conflict``), ``busy`` (per PE, stall-free
    cycles ``sum 36 + 3 d``) and ``lost_updates`` (writes that overwrote another PE's
    update; with ``scores``).
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n = indptr.size - 1
    if n_pes < 1:
        raise ValueError(f"n_pes must be >= 1, got {n_pes!r}")
    if node_num is None:
        node_num = -(-n // n_pes) if n else 1
    if n_pes * node_num < n:
        raise ValueError(f"node_num={node_num} x n_pes={n_pes} < {n} nodes")
    deg = np.diff(indptr)
    if indptr.size < 1 or indptr[0] != 0 or (deg < 0).any() or indptr[-1] != indices.size:
        raise ValueError(
            f"indptr must start at 0, not decrease and end at len(indices)={indices.size}"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError(f"indices must lie in [0, {n}), got [{indices.min()}, {indices.max()}]")
    carry = scores is not None
    prev = np.asarray(scores, dtype=np.int64) if carry else np.zeros(n, dtype=np.int64)
    cur = np.zeros(n, dtype=np.int64)
    if (
        isinstance(divider_cycles, bool)
        or not isinstance(divider_cycles, int | np.integer)
        or divider_cycles < 1
    ):
        raise ValueError(f"divider_cycles must be an integer >= 1, got {divider_cycles!r}")
    out = _kernel()(indptr, indices, n_pes, node_num, prev, cur, carry, int(divider_cycles))
    finish, stalls, lost = out
    per_node = NODE_STATES_BEFORE_DIVIDE + int(divider_cycles)
    busy = np.array(
        [
            int(
                per_node * (min(n, (a + 1) * node_num) - min(n, a * node_num))
                + EDGE_CYCLES_RTL * deg[min(n, a * node_num) : min(n, (a + 1) * node_num)].sum()
            )
            for a in range(n_pes)
        ],
        dtype=np.int64,
    )
    res = {
        "cycles": int(finish.max()) if n else 0,
        "finish": finish,
        "stalls": stalls,
        "busy": busy,
        "node_num": node_num,
    }
    if carry:
        res["scores"] = cur
        res["lost_updates"] = int(lost)
    return res


def step_cycles(
    indptr: Any,
    indices: Any,
    n_pes: int,
    node_num: int | None = None,
    divider_cycles: int = DIVIDER_CYCLES_RTL,
) -> dict[str, int]:
    """Cycles of one full step on the ``n_pes``-PE top: the PEs (:func:`simulate_step`),
    then the accumulation and the hand-over. Returns ``cycles``, ``pe_cycles`` (slowest
    PE), ``stall_cycles`` (its excess over the stall-free slowest PE), ``accum_cycles``."""
    sim = simulate_step(indptr, indices, n_pes, node_num, divider_cycles=divider_cycles)
    top = TOP_NAMES.get(n_pes)
    acc = accumulation_cycles(n_pes, sim["node_num"])
    over = STEP_OVERHEAD_CYCLES.get(top, 0) if top else 0
    free = int(sim["busy"].max()) if sim["busy"].size else 0
    return {
        "cycles": sim["cycles"] + acc + over,
        "pe_cycles": sim["cycles"],
        "stall_cycles": sim["cycles"] - free,
        "accum_cycles": acc,
        "free_cycles": free,
    }


def simulate_run(
    indptr: Any, indices: Any, n_pes: int, r0: Any, steps: int, node_num: int | None = None
) -> dict[str, Any]:
    """``steps`` steps of the RTL's arithmetic from integer scores ``r0``: the residual
    walk ``R <- A floor(R / deg)`` with the lost updates of :func:`simulate_step`, and the
    score sums of ``add_up_score.v`` (``sum += 15 * s / 16`` per step, for every node but
    the last of each PE; quad/octa/hex tops only). Returns ``scores``, ``sums`` (None on
    the dual top), ``lost_updates`` (total) and ``cycles`` (:func:`step_cycles` x steps)."""
    r = np.asarray(r0, dtype=np.int64).copy()
    n = r.size
    lost = 0
    sums = np.zeros(n, dtype=np.int64) if n_pes > 2 else None
    sim = None
    for _ in range(steps):
        sim = simulate_step(indptr, indices, n_pes, node_num, scores=r)
        r = sim["scores"]
        lost += sim["lost_updates"]
        if sums is not None:
            nn = sim["node_num"]
            visit = (np.arange(n) % nn) < nn - 1
            sums[visit] += 15 * r[visit] // 16
    cyc = step_cycles(indptr, indices, n_pes, node_num)["cycles"] * steps
    return {"scores": r, "sums": sums, "lost_updates": lost, "cycles": cyc}


_KERNEL = None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        import numba

        _KERNEL = numba.njit(cache=True, nogil=True)(_step_py)
    return _KERNEL


def _step_py(indptr, indices, n_pes, node_num, prev, cur, carry, div_cycles):
    n = indptr.size - 1
    st = np.empty(n_pes, np.int64)
    node = np.empty(n_pes, np.int64)
    end = np.empty(n_pes, np.int64)
    edge = np.zeros(n_pes, np.int64)
    cnt = np.zeros(n_pes, np.int64)
    part = np.full(n_pes, -1, np.int64)
    finish = np.zeros(n_pes, np.int64)
    stalls = np.zeros(n_pes, np.int64)
    held = np.zeros(n_pes, np.int64)  # latched neighbour score
    prop = np.zeros(n_pes, np.int64)
    blocked = np.zeros(n_pes, np.bool_)
    lastw = np.full(max(n, 1), -1, np.int64)  # PE that last wrote each current-score word
    readw = np.full(n_pes, -1, np.int64)  # writer of the word when this PE read it
    lost = 0
    active = 0
    for a in range(n_pes):
        lo = min(n, a * node_num)
        hi = min(n, (a + 1) * node_num)
        node[a] = lo
        end[a] = hi
        if lo < hi:
            st[a] = _RP
            part[a] = a
            active += 1
        else:
            st[a] = _DONE
    t = 0
    while active > 0:
        t += 1
        # conflict from the addresses held after the previous edge
        for i in range(n_pes):
            b = False
            p = part[i]
            if p >= 0:
                for j in range(i):
                    if part[j] == p:
                        b = True
                        break
            blocked[i] = b
        for i in range(n_pes):
            s = st[i]
            if s == _DONE:
                continue
            if s == _DT:
                st[i] = _DR
                cnt[i] = 1
                continue
            if s == _DR:
                if cnt[i] < div_cycles:
                    cnt[i] += 1
                elif indptr[node[i]] < indptr[node[i] + 1]:
                    st[i] = _RN
                    edge[i] = indptr[node[i]]
                else:  # no neighbour: on to the next node [inferred]
                    node[i] += 1
                    if node[i] < end[i]:
                        st[i] = _RP
                        part[i] = i
                    else:
                        st[i] = _DONE
                        part[i] = -1
                        finish[i] = t
                        active -= 1
                continue
            if blocked[i]:
                stalls[i] += 1
                continue
            if s == _RP:
                st[i] = _OW
                if carry:
                    u = node[i]
                    du = indptr[u + 1] - indptr[u]
                    prop[i] = prev[u] // du if du > 0 else 0
            elif s == _OW:
                st[i] = _RNA
            elif s == _RNA:
                st[i] = _DT
            elif s == _RN:
                st[i] = _RNS
                part[i] = indices[edge[i]] // node_num
            elif s == _RNS:
                # the read happened in the last cycle of this state (granted)
                st[i] = _W
                if carry:
                    v = indices[edge[i]]
                    held[i] = cur[v]
                    readw[i] = lastw[v]
            else:  # _W: the write happened in the last cycle of this state
                if carry:
                    v = indices[edge[i]]
                    if lastw[v] != readw[i]:
                        lost += 1
                    cur[v] = held[i] + prop[i]
                    lastw[v] = i * (n + 1) + edge[i]
                if edge[i] + 1 < indptr[node[i] + 1]:
                    edge[i] += 1
                    st[i] = _RN
                else:
                    node[i] += 1
                    if node[i] < end[i]:
                        st[i] = _RP
                        part[i] = i
                    else:
                        st[i] = _DONE
                        part[i] = -1
                        finish[i] = t
                        active -= 1
    return finish, stalls, lost
