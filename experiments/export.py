"""Trial tables, Pareto fronts and files (CSV, JSON, Parquet).

Data first: :func:`trials_dataframe` and :func:`pareto_dataframe` are what plots and
exports are built from, so a figure and a file always show the same points.

Columns of a trials table (Optuna-like prefixes so names never collide): ``number``,
``status``, ``feasible``, ``params_<name>``..., ``metrics_<name>``...,
``constraints_<name>``..., ``reason``, ``wall_time_s``, ``cpu_time_s``, ``seed``, ``attempts``,
``created_at``, ``started_at``, ``finished_at`` (UTC timestamps), and ``info`` (the
evaluator's ``Evaluation.info`` as a dict, None where a trial has none; the column is
there only when some trial has one). Permutation values are lists. Non-finite metric
values are missing (NaN). CSV and Parquet files hold ``info`` as JSON text, JSON files
as an object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from optimizer.base import Objective, TrialStatus
from optimizer.pareto import pareto_mask

FORMATS = ("csv", "json", "parquet")


def _ts(x: float | None) -> Any:
    return pd.Timestamp(x, unit="s", tz="UTC") if x is not None else pd.NaT


def trials_dataframe(records: Sequence[Any], objectives: Sequence[Objective] = ()) -> pd.DataFrame:
    """One row per trial record (``experiments.storage.TrialRecord``), ordered by number."""
    rows = []
    any_info = any(getattr(r, "info", None) for r in records)
    for r in records:
        row: dict[str, Any] = {"number": r.number, "status": str(r.status)}
        cons = {k: v for k, v in (r.constraints or {}).items()}
        row["feasible"] = r.status == TrialStatus.COMPLETE and all(
            v is not None and v <= 0 for v in cons.values()
        )
        for k, v in r.params.items():
            row[f"params_{k}"] = list(v) if isinstance(v, tuple) else v
        for k, v in (r.metrics or {}).items():
            row[f"metrics_{k}"] = float("nan") if v is None else float(v)
        for k, v in cons.items():
            row[f"constraints_{k}"] = float("nan") if v is None else float(v)
        row.update(
            reason=r.reason,
            wall_time_s=r.wall_time_s,
            cpu_time_s=getattr(r, "cpu_time_s", None),
            seed=r.seed,
            attempts=r.attempts,
            created_at=_ts(r.created_at),
            started_at=_ts(r.started_at),
            finished_at=_ts(r.finished_at),
        )
        if any_info:
            row["info"] = getattr(r, "info", None) or None
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        cols = ["number", "status", "feasible"] + [f"metrics_{o.name}" for o in objectives]
        return pd.DataFrame(columns=cols)
    for o in objectives:
        if f"metrics_{o.name}" not in df:
            df[f"metrics_{o.name}"] = np.nan
    return df.sort_values("number").reset_index(drop=True)


def objective_columns(objectives: Sequence[Objective]) -> list[str]:
    return [f"metrics_{o.name}" for o in objectives]


def with_objective_columns(df: pd.DataFrame, objectives: Sequence[Objective]) -> pd.DataFrame:
    """``df`` with a (NaN) column for every objective it lacks."""
    missing = [c for c in objective_columns(objectives) if c not in df.columns]
    return df.assign(**dict.fromkeys(missing, np.nan)) if missing else df


def pareto_dataframe(
    df: pd.DataFrame, objectives: Sequence[Objective], *, feasible_only: bool = True
) -> pd.DataFrame:
    """The non-dominated COMPLETE trials of ``df`` (all tied copies kept), sorted by the
    first objective. ``feasible_only`` drops trials violating an outcome constraint
    (``constraints_* > 0``) before the front is computed."""
    if df.empty:
        return df.copy()
    df = with_objective_columns(df, objectives)
    cols = objective_columns(objectives)
    cand = df[df["status"] == str(TrialStatus.COMPLETE)]
    if feasible_only:
        cand = cand[cand["feasible"].astype(bool)]
    y = cand[cols].to_numpy(dtype=float)
    finite = np.isfinite(y).all(axis=1)
    cand, y = cand[finite], y[finite]
    if cand.empty:
        return cand.copy()
    mask = pareto_mask(y, [o.direction for o in objectives])
    front = cand[mask]
    return front.sort_values([cols[0], "number"]).reset_index(drop=True)


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, np.generic):
        return _jsonable(v.item())
    if isinstance(v, pd.Timestamp):
        return None if pd.isna(v) else v.isoformat()
    if v is pd.NaT:
        return None
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    return v


def write_table(df: pd.DataFrame, path: str | Path, format: str | None = None) -> Path:
    """Write ``df`` as CSV, JSON (a list of records, strict JSON: NaN -> null) or Parquet.

    The format is taken from ``format`` or else from the file suffix.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (formats: {list(FORMATS)})")
    path.parent.mkdir(parents=True, exist_ok=True)
    if "info" in df.columns and fmt != "json":  # free-form dicts: JSON text per trial
        df = df.assign(info=df["info"].map(lambda v: None if not v else json.dumps(v)))
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "json":
        records = [{k: _jsonable(v) for k, v in rec.items()} for rec in df.to_dict("records")]
        path.write_text(json.dumps(records, indent=1, allow_nan=False))
    else:
        out = df.copy()
        for c in out.columns:
            if out[c].dtype == object:
                vals = out[c].dropna()
                if len(vals) and not all(isinstance(v, list) for v in vals) and not all(
                    isinstance(v, str) for v in vals
                ):
                    out[c] = out[c].map(lambda v: None if v is None else str(v))
        out.to_parquet(path, index=False)
    return path
