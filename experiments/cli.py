"""The ``coexplore`` command: a thin shell over :mod:`experiments.study`.

::

    coexplore run CONFIG.yaml [--storage URL] [--n-trials N] [--workers N] [--seed S] [--resume]
                  [--allow-changed]
    coexplore validate CONFIG.yaml
    coexplore status STORAGE [--study NAME]
    coexplore studies STORAGE
    coexplore delete-study STORAGE --study NAME [--yes]
    coexplore export STORAGE [--study NAME] [--pareto] [--format csv|json|parquet] [-o FILE]
    coexplore plot STORAGE [--study NAME] [-o DIR]
    coexplore report STORAGE [--study NAME] [-o FILE]
    coexplore dashboard STORAGE [--study NAME] [--host H] [--port P] [--allow-host NAME]
    coexplore show STORAGE TRIAL [--study NAME] [--layer L] [--format text|json|timeloop] [-o FILE]
    coexplore calibrate [--device cpu|cuda] [-o FILE] [--quick]
    coexplore map ARCH.yaml PROBLEM.yaml [--accounting timeloop] [--ert ERT.yaml] [-o MAP.yaml]
    coexplore --version | --install-completion | --show-completion

``STORAGE`` is a URL (``sqlite:///runs/demo.db``) or a path to an SQLite file. The
commands that read a study (``status``, ``export``, ``plot``, ``report``, ``dashboard``)
never import code the database names (:meth:`experiments.study.Study.load`); ``run`` takes
every reference from its config. The commands that only look at a study (those, and
``studies``, ``delete-study``) never create a file or folder for it. User errors (bad
config, unknown study, unknown optimizer ...) print one line naming the problem and exit
with status 2; no traceback. What is not the user's doing -- the database unreachable
past ``--storage-retry-s``, the Dask scheduler lost, the disk or quota full -- exits with
status 3: the study is resumable with the same command.

``-o`` means the same everywhere: where a command writes, defaulting to the study's
output folder -- the config's ``output`` as ``run`` recorded it, else ``runs/STUDY`` --
and, for one file, the file ``run`` writes there (``trials.csv``, or ``pareto_front.csv``
with ``--pareto``; ``report.html``).

Before ``run`` spends its budget it does what ``validate`` does
(:func:`experiments.preflight.preflight`: sampled designs built, constraints and the
vectorized area evaluated, one layer mapped), and it stops with status 2 when the whole
initial design -- the optimizer's ``n_init`` trials, else the first 10 -- is infeasible or
failed, printing the most common reasons.

The console shows progress and results. Library warnings (Python ``warnings``) and
informational log lines go to the log, which ``coexplore --verbose ...`` prints; a run
also appends them to ``run.log`` in its output folder.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import typer

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    help="coexplore: hardware/software co-design exploration.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: choices shown, flags without a <bool> type
)

StudyOpt = Annotated[str | None, typer.Option("--study", help="study name (optional if the storage holds one)")]
ExecutorKind = Literal["process", "inline", "auto", "dask"]
# fixed choices as Literals, so that --help lists them and a bad value is refused by name;
# tests/experiments/test_cli_first_hour.py checks them against the libraries' own tables
Accounting = Literal["coexplore", "timeloop", "zigzag"]       # evaluators.loopnest.conventions.ACCOUNTING
MapObjective = Literal["edp", "energy", "latency"]            # mappers.base.OBJECTIVES
ExportFormat = Literal["csv", "json", "parquet"]              # experiments.export.FORMATS
Device = Literal["cpu", "cuda"]
Statistic = Literal["median", "best"]                         # evaluators.kernels.calibrate.run_cpu
INITIAL_DESIGN = 10
"""Trials ``run`` judges the start by when the optimizer has no ``n_init`` option."""


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"coexplore {version('coexplore')}")
        except PackageNotFoundError:  # pragma: no cover - run from a bare checkout
            typer.echo("coexplore (not installed: no version)")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="also print library warnings and log messages")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    """coexplore: hardware/software co-design exploration."""
    configure_logging(verbose)
    if ctx.invoked_subcommand == "run":   # list the optimizers (registry import: only for `run`)
        from optimizer.registry import available_optimizers

        cmd = ctx.command.get_command(ctx, "run")  # type: ignore[attr-defined]
        for p in getattr(cmd, "params", ()):
            if p.name == "optimizer":
                p.help = (f"optimizer, one of: {', '.join(available_optimizers())} (and any a config's "
                          "plugins register); overrides the config's, without its options")


class _Stderr(logging.StreamHandler):
    """A console handler that writes to whatever ``sys.stderr`` is when a record comes."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def configure_logging(verbose: bool) -> None:
    """Console: our warnings and errors; with ``verbose``, also INFO lines and every
    Python warning (captured into the ``py.warnings`` logger, hidden otherwise)."""
    # captureWarnings(True) does nothing when it ran before, even if warnings.showwarning
    # was put back since (as a test harness does): switch it off and on to be sure.
    logging.captureWarnings(False)
    logging.captureWarnings(True)
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    console = next((h for h in root.handlers if getattr(h, "_coexplore_console", False)), None)
    if console is None:
        console = _Stderr()
        console._coexplore_console = True  # type: ignore[attr-defined]
        console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.filters.clear()
    if not verbose:
        console.addFilter(lambda r: r.name != "py.warnings")


def _log_to_file(path: Path) -> logging.Handler:
    """Append every log record (warnings included) of this command to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    h = logging.FileHandler(path, encoding="utf-8")
    h.setLevel(logging.INFO)
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(h)
    return h


MAX_ERROR_CHARS = 1000
"""Longest error message printed whole; a longer one (a 200 kB value echoed back) keeps
its start, which names the file and key, and its end."""


def _clip(msg: str) -> str:
    if len(msg) <= MAX_ERROR_CHARS:
        return msg
    cut = len(msg) - 800
    return f"{msg[:600]} ... [{cut} characters cut] ... {msg[-200:]}"


def _fail(msg: str) -> None:
    typer.secho(f"error: {_clip(msg)}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _user_errors():
    from design_space.errors import ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError
    from experiments.executors import WorkerStartError
    from experiments.storage import StorageError

    return (ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError, StorageError, ValueError,
            FileNotFoundError, WorkerStartError)


def _infrastructure_errors():
    from experiments.executors import ExecutorLostError
    from experiments.storage import StorageUnavailableError

    return (StorageUnavailableError, ExecutorLostError)


def _stop(e: Exception, written: bool = True) -> None:
    """The database or the Dask scheduler went away, or the disk is full: exit 3 with
    what to do. ``written=False``: a command that only writes files (it changes no study)."""
    typer.secho(f"error: {_clip(str(e))}", fg=typer.colors.RED, err=True)
    if not written:
        typer.echo("stopped: no study was changed; free disk space, then run the same command "
                   "again", err=True)
    elif _disk_full(e):
        typer.echo("stopped: nothing finished is lost and the study is resumable; free disk "
                   "space, then run the same command again", err=True)
    else:
        typer.echo("stopped: nothing finished is lost and the study is resumable; run the same "
                   "command again once it is back", err=True)
    raise typer.Exit(3)


@contextlib.contextmanager
def _writing() -> Iterator[None]:
    """Around a command that writes files (``export``, ``plot``, ``report``, ``show -o``,
    ``map``, ``calibrate``): a full disk or quota ends it with one ``error:`` line and
    status 3 (:func:`_disk_full`), a path the OS refuses to write (permission, a folder
    where a file goes, a file where a folder goes) and the user's other mistakes with one
    line and status 2; never a traceback."""
    try:
        yield
    except typer.Exit:
        raise
    except _infrastructure_errors() as e:
        _stop(e)
    except OSError as e:
        if _disk_full(e):
            _stop(e, written=False)
        if isinstance(e, (*_user_errors(), PermissionError, IsADirectoryError, NotADirectoryError,
                          FileExistsError)):
            _fail(str(e))
        raise
    except _user_errors() as e:
        _fail(str(e))


def _disk_full(e: BaseException) -> bool:
    """A full disk or quota: the database's (StorageFullError) or a file's (ENOSPC, EDQUOT).
    Not the user's mistake, so exit 3 (resumable), not 2."""
    import errno

    from experiments.storage import StorageFullError

    return isinstance(e, StorageFullError) or (
        isinstance(e, OSError) and e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)))


def _open_existing(storage: str):
    """Open storage for reading; a missing SQLite file is an error, not a new database."""
    from pathlib import Path as _P

    from sqlalchemy.engine import make_url

    from experiments.storage import Storage, normalize_url

    url = normalize_url(storage, create_dirs=False)   # looking never creates a folder
    if url.startswith("sqlite"):
        db = make_url(url).database
        if db and db != ":memory:" and not _P(db).exists():
            raise FileNotFoundError(f"no such study storage: {db if db.isprintable() else repr(db)}")
    return Storage(url, create=False)


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, list | tuple):
        return ">".join(map(str, v))
    return str(v)


def _print_table(df, objectives, limit: int = 10) -> None:
    if df.empty:
        typer.echo("  (no feasible trials)")
        return
    pcols = [c for c in df.columns if c.startswith("params_")]
    ocols = [f"metrics_{o.name}" for o in objectives]
    cols = ["number", *ocols, *pcols]
    header = [c.removeprefix("params_").removeprefix("metrics_") for c in cols]
    rows = [[_fmt(r[c]) for c in cols] for _, r in df.head(limit).iterrows()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    typer.echo("  " + "  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        typer.echo("  " + "  ".join(v.rjust(w) for v, w in zip(r, widths)))
    if len(df) > limit:
        typer.echo(f"  ... {len(df) - limit} more")


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="study config (YAML)")],
    storage: Annotated[str | None, typer.Option(help="storage URL or SQLite path (overrides the config)")] = None,
    n_trials: Annotated[int | None, typer.Option("--n-trials", min=0, help="total finished trials")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="parallel worker processes (>= 1)")] = None,
    seed: Annotated[int | None, typer.Option(min=0, max=2**63 - 1, help="study seed, 0 .. 2**63-1 (overrides the config)")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="per-trial timeout in seconds")] = None,
    executor: Annotated[ExecutorKind | None, typer.Option(help="where trials run (default: the config's budget.executor)")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", help="run trials on an existing Dask scheduler, e.g. tcp://host:8786")] = None,
    study: Annotated[str | None, typer.Option("--study", help="study name (overrides the config)")] = None,
    optimizer: Annotated[str | None, typer.Option("--optimizer", help="optimizer name (overrides the config's, without its options)")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="output folder (default: the config's output, else runs/STUDY)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="require the study to exist already")] = False,
    allow_changed: Annotated[bool, typer.Option("--allow-changed", help="resume even though the evaluator (name, options or code) or a constraint / software function's code changed since the study's trials ran; recorded in the study")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="show a progress bar")] = True,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="also print library warnings and log messages")] = False,
    storage_retry_s: Annotated[float | None, typer.Option("--storage-retry-s", help="seconds to keep retrying a lost database connection before stopping (default 120)")] = None,
) -> None:
    """Run (or resume) the study a config describes, then export its Pareto front, plots
    and the interactive report.

    Checks the config as `validate` does before anything runs. Resuming a study whose
    evaluator or space functions changed (code, options) is refused, naming what changed,
    unless --allow-changed; a changed `pareto:` is applied. Exits with 2 on a user
    error or when every trial of the initial design is infeasible or failed, and with 3
    when the database stays unreachable past --storage-retry-s or the Dask scheduler is
    lost (the study is then resumable)."""
    if verbose:
        configure_logging(True)
    from experiments.config import load_config
    from experiments.preflight import preflight
    from experiments.storage import Storage
    from experiments.study import Study, resolve_evaluator

    try:
        loaded = load_config(config)
        cfg = loaded.config
        name = study or cfg.study
        url = storage or cfg.storage
        if storage_retry_s is not None and not 0 <= storage_retry_s < math.inf:
            _fail(f"--storage-retry-s must be a number of seconds >= 0, got {storage_retry_s}")
        checks = preflight(loaded.space, resolve_evaluator(cfg.evaluator.function, cfg.evaluator.options),
                           seed=cfg.seed if seed is None else seed)
        for line in checks:
            logging.getLogger(__name__).info("preflight: %s", line)
        st = Storage(url, retry_timeout_s=storage_retry_s)
        if resume and st.find_study(name) is None:
            _fail(f"--resume: no study {name!r} in {st.display_url} "
                  f"(studies: {[s.name for s in st.list_studies()]})")
        opt_name = optimizer or cfg.optimizer.name
        opt_options = cfg.optimizer.options if optimizer is None or optimizer == cfg.optimizer.name else {}
        out = output or loaded.output_dir
        s = Study.create(
            name, loaded.space, cfg.objectives, cfg.evaluator.function,
            opt_name, optimizer_options=opt_options,
            evaluator_options=cfg.evaluator.options, storage=st,
            seed=cfg.seed if seed is None else seed,
            extra_config={"config_file": str(config), "pareto": cfg.pareto,
                          "output": str(out.resolve())},
            allow_changed=allow_changed,
        )
    except _infrastructure_errors() as e:
        _stop(e)
    except OSError as e:
        if not _disk_full(e):
            if isinstance(e, _user_errors()):
                _fail(str(e))
            raise
        _stop(e)
    except _user_errors() as e:
        _fail(str(e))
    budget = cfg.budget
    n = n_trials if n_trials is not None else budget.n_trials
    log_file = out / "run.log"
    try:
        handler = _log_to_file(log_file)
    except OSError as e:
        if not _disk_full(e):
            raise
        _stop(e)

    def _close_log() -> None:
        logging.getLogger().removeHandler(handler)
        handler.close()

    try:
        before = s.n_finished()
        typer.echo(f"study {s.name!r} in {st.display_url}: {before} finished trial(s), target {n}")
        initial = opt_options.get("n_init", INITIAL_DESIGN)
        try:
            s.optimize(
                n, workers=workers if workers is not None else budget.workers,
                executor=executor or budget.executor,
                timeout_s=timeout if timeout is not None else budget.timeout_s, progress=progress,
                cluster=cluster or budget.cluster,
                stop_if_start_fails=initial if isinstance(initial, int) and initial > 0 else INITIAL_DESIGN,
            )
        except KeyboardInterrupt:
            typer.echo("interrupted; run the same command again to resume", err=True)
            raise typer.Exit(130) from None
        except _infrastructure_errors():
            raise
        except _user_errors() as e:
            _fail(str(e))
        counts = s.status_counts()
        typer.echo("trials: " + ", ".join(f"{k.value.lower()} {v}" for k, v in counts.items() if v))
        label = "best trials" if len(s.objectives) == 1 else "Pareto front (feasible)"
        typer.echo(f"{label}:")
        _print_table(s.best_trials(), s.objectives)
        if s.report_objectives != s.objectives:
            names = ", ".join(o.name for o in s.report_objectives)
            typer.echo(f"Pareto front of {names} (feasible):")
            front = s.pareto_front(objectives={o.name: o.direction for o in s.report_objectives})
            _print_table(front, s.report_objectives)
        front_csv = s.export(out / "pareto_front.csv", pareto=True)
        trials_csv = s.export(out / "trials.csv")
        pngs = s.plot(out)
        report_html = s.report(out / "report.html")
        typer.echo(f"study storage:  {st.display_url}")
        typer.echo(f"pareto front:   {front_csv}")
        typer.echo(f"all trials:     {trials_csv}")
        for p in pngs:
            typer.echo(f"plot:           {p}")
        typer.echo(f"report:         {report_html}   (open it in a browser; no network needed)")
        typer.echo(f"log:            {log_file}")
        typer.echo(f"live view:      coexplore dashboard {st.display_url}")
    except _infrastructure_errors() as e:
        _stop(e)
    except OSError as e:     # the exports, plots and report of a finished run
        if not _disk_full(e):
            raise
        _stop(e)
    finally:
        _close_log()


def _print_reasons(s, indent: str = "  ") -> None:
    """The most common reasons of the study's INFEASIBLE and FAILED trials."""
    for status, reasons in s.reasons().items():
        typer.echo(f"{indent}{status.value.lower()} trials, most common reasons:")
        for reason, count in reasons:
            typer.echo(f"{indent}  {count:>5} x {reason}")


@app.command()
def status(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    study: StudyOpt = None,
) -> None:
    """Trial counts, the reasons of infeasible and failed trials, and the best results of
    the studies in STORAGE."""
    from experiments.study import Study

    try:
        st = _open_existing(storage)
        names = [study] if study else [s.name for s in st.list_studies()]
        if not names:
            typer.echo(f"{st.display_url}: no studies")
            return
        for name in names:
            s = Study.load(name, st)
            counts = s.status_counts()
            objs = ", ".join(f"{o.name} ({o.direction})" for o in s.objectives)
            typer.echo(f"study {name!r}: objectives {objs}; optimizer {s.optimizer_name}; seed {s.seed}")
            typer.echo("  trials: " + ", ".join(f"{k.value.lower()} {v}" for k, v in counts.items()))
            if getattr(s.space, "references", None):  # a SpaceView: the stored space as data
                typer.echo(f"  space: {len(s.space.names)} parameters, read from the stored data "
                           f"(code it names is not imported: {s.space.unresolved()})")
            _print_reasons(s)
            _print_table(s.best_trials(), s.objectives, limit=5)
    except _user_errors() as e:
        _fail(str(e))


@app.command()
def studies(storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")]) -> None:
    """List the studies in STORAGE: name, trials by status, objectives, optimizer."""
    try:
        st = _open_existing(storage)
        records = st.list_studies()
        if not records:
            typer.echo(f"{st.display_url}: no studies")
            return
        rows = []
        for r in records:
            counts = st.status_counts(r.id)
            rows.append([r.name, str(sum(counts.values())),
                         ", ".join(f"{k.value.lower()} {v}" for k, v in counts.items() if v) or "-",
                         ", ".join(f"{k}:{v}" for k, v in r.objectives.items()),
                         str((r.config.get("optimizer") or {}).get("name", "?"))])
    except _user_errors() as e:
        _fail(str(e))
    header = ["study", "trials", "by status", "objectives", "optimizer"]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    typer.echo("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for row in rows:
        typer.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


@app.command("delete-study")
def delete_study(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    study: Annotated[str, typer.Option("--study", help="the study to delete, with all its trials")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")] = False,
) -> None:
    """Delete a study and all its trials from STORAGE."""
    try:
        st = _open_existing(storage)
        record = st.get_study(study)
        n = sum(st.status_counts(record.id).values())
        if not yes and not typer.confirm(f"delete study {study!r} and its {n} trial(s) from {st.display_url}?"):
            typer.echo("nothing deleted")
            raise typer.Exit(1)
        st.delete_study(study)
    except _user_errors() as e:
        _fail(str(e))
    typer.echo(f"deleted study {study!r} ({n} trial(s)) from {st.display_url}")


def _output_dir(s) -> Path:
    """Where ``run`` wrote this study's files: its recorded output folder, else runs/STUDY."""
    recorded = s.record.config.get("output")
    return Path(recorded) if recorded else Path("runs") / s.name


@app.command()
def export(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="output file (default: trials.csv, or pareto_front.csv with --pareto, in the study's output folder)")] = None,
    study: StudyOpt = None,
    pareto: Annotated[bool, typer.Option("--pareto", help="only the Pareto front")] = False,
    format: Annotated[ExportFormat | None, typer.Option("--format", help="file format (default: the output file's suffix)")] = None,
    include_infeasible: Annotated[bool, typer.Option("--include-infeasible", help="front over trials violating outcome constraints too")] = False,
    pareto_of: Annotated[str | None, typer.Option("--pareto-of", help="metrics of the front, e.g. 'energy_uj:min,latency_ms:min' (default: the study's)")] = None,
) -> None:
    """Write the trials (or the Pareto front) of a study to CSV, JSON or Parquet."""
    from experiments.study import Study

    with _writing():
        s = Study.load(study, _open_existing(storage))
        objs = None
        if pareto_of:
            objs = {}
            for item in pareto_of.split(","):
                name, _, direction = item.strip().partition(":")
                objs[name] = direction or "min"
        front = pareto or bool(pareto_of)
        if output is None:
            output = _output_dir(s) / f"{'pareto_front' if front else 'trials'}.{format or 'csv'}"
        path = s.export(output, pareto=front, format=format,
                        feasible_only=not include_infeasible, objectives=objs)
    typer.echo(str(path))


@app.command()
def plot(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="output folder (default: the study's output folder)")] = None,
    study: StudyOpt = None,
) -> None:
    """Pareto front, optimization history and parallel coordinates as PNG."""
    from experiments.study import Study

    with _writing():
        s = Study.load(study, _open_existing(storage))
        for p in s.plot(output or _output_dir(s)):
            typer.echo(str(p))


@app.command()
def report(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="HTML file to write (default: report.html in the study's output folder)")] = None,
    study: StudyOpt = None,
    max_points: Annotated[int, typer.Option("--max-points", help="most trials drawn per scatter (the front is always drawn whole)")] = 4000,
    max_details: Annotated[int, typer.Option("--max-details", help="designs whose breakdown the file embeds (front and best first)")] = 1000,
) -> None:
    """One self-contained interactive HTML file: Pareto front, history, parallel
    coordinates, trial table, and the breakdown of selected designs."""
    from experiments.study import Study

    with _writing():
        if max_points < 1:
            raise ValueError(f"--max-points must be >= 1, got {max_points}")
        if max_details < 0:
            raise ValueError(f"--max-details must be >= 0, got {max_details}")
        s = Study.load(study, _open_existing(storage))
        path = s.report(output or _output_dir(s) / "report.html", max_points=max_points,
                        max_details=max_details)
    typer.echo(str(path))


@app.command()
def show(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    trial: Annotated[int, typer.Argument(help="trial number")],
    study: StudyOpt = None,
    layer: Annotated[str | None, typer.Option("--layer", help="one layer, by name or position (0 first)")] = None,
    format: Annotated[Literal["text", "json", "timeloop"], typer.Option(
        "--format", help="text: loop nests (as Timeloop's map.txt); json: the stored records; "
        "timeloop: Timeloop mapping YAML")] = "text",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="file to write (default: print)")] = None,
) -> None:
    """The mapping each layer of a trial was given, from the stored trial alone."""
    from experiments.show import show_text
    from experiments.storage import StorageError

    try:
        st = _open_existing(storage)
        if study is None:
            names = [s.name for s in st.list_studies()]
            if len(names) != 1:
                raise ValueError(f"{st.display_url} holds {len(names)} studies ({names}); name one with --study")
            study = names[0]
        if not 0 <= trial < 2**63:
            raise ValueError(f"TRIAL must be a trial number >= 0, got {trial}")
        sid = st.get_study(study).id
        try:
            record = st.trial(sid, trial)
        except StorageError:
            numbers = [t.number for t in st.trials(sid)]
            held = f"its {len(numbers)} trials are numbered {min(numbers)}..{max(numbers)}" if numbers else "it has no trials"
            raise ValueError(f"TRIAL {trial}: study {study!r} has no such trial ({held})") from None
        text = show_text(record, study, format, layer)
    except _user_errors() as e:
        _fail(str(e))
    if output is None:
        typer.echo(text)
    else:
        with _writing():
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text + "\n", encoding="utf-8")
        typer.echo(str(output))


@app.command()
def dashboard(
    storage: Annotated[str, typer.Argument(help="storage URL or SQLite path")],
    study: Annotated[str | None, typer.Option("--study", help="study to open first (default: the first; the page lists all)")] = None,
    host: Annotated[str, typer.Option(help="address to listen on (localhost only by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port (0: any free one)")] = 8050,
    poll: Annotated[float, typer.Option("--poll", help="seconds between the page's checks for new trials")] = 2.0,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="a host name the page may be opened by, besides the loopback names and the "
        "listening address (repeatable; requests naming any other Host or Origin are refused)")] = None,
) -> None:
    """Serve the report's views on localhost, updated as trials finish (also while a
    study runs in another process)."""
    from experiments.dashboard import Dashboard

    try:
        if not 0 <= port <= 65535:
            raise ValueError(f"--port must be in 0..65535, got {port}")
        board = Dashboard(_open_existing(storage), study, host=host, port=port, poll_s=poll,
                          allowed_hosts=allow_host or ())
    except _user_errors() as e:
        _fail(str(e))
    typer.echo(f"dashboard: {board.url}   (Ctrl-C to stop)", err=False)
    sys.stdout.flush()
    try:
        board.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        board.close()


@app.command()
def validate(config: Annotated[Path, typer.Argument(help="study config (YAML)")]) -> None:
    """Check a config without running it: schema, space, evaluator import, and on sampled
    designs: construction, validate, the vectorized area over the constraint columns, one
    layer mapped with the configured mapper, every layer's smallest tiles."""
    from experiments.config import load_config
    from experiments.preflight import preflight
    from experiments.study import resolve_evaluator

    try:
        loaded = load_config(config)
        evaluator = resolve_evaluator(loaded.config.evaluator.function, loaded.config.evaluator.options)
        space = loaded.space
        card = space.cardinality() if getattr(space, "is_finite", False) else math.inf
        checks = preflight(space, evaluator, seed=loaded.config.seed)
    except _user_errors() as e:
        _fail(str(e))
    for line in checks:
        typer.echo(f"  {line}")
    typer.echo(f"ok: study {loaded.config.study!r}; {len(space.names)} parameters, "
               f"encoded dim {space.dim}, {card} feasible points")


@app.command()
def calibrate(
    device: Annotated[Device, typer.Option("--device", help="where the kernels run")] = "cpu",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="calibration file (default runs/calibrations/DEVICE.json)")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="tiny kernels, short timings (a smoke run)")] = False,
    seed: Annotated[int, typer.Option(help="seed of the tilings drawn and of the train/held-out split")] = 0,
    threads: Annotated[str, typer.Option(help="torch thread counts of the CPU torch kernels, e.g. '1,2'")] = "1,2",
    statistic: Annotated[Statistic, typer.Option(help="CPU: fit the median or the best (fastest) timed block")] = "median",
    json_record: Annotated[Path | None, typer.Option("--json", help="also write the calibration with the command's settings, commit, wall and CPU seconds and load average here (experiments/harnesses/record.py)")] = None,
) -> None:
    """Measure real kernels, fit the analytical model's constants, report held-out
    Spearman / Kendall / MAPE before and after, and save a versioned calibration file."""
    from evaluators.kernels import calibrate as cal
    from experiments.harnesses.record import Run

    run = Run("coexplore calibrate", {"device": device, "quick": quick, "seed": seed, "threads": threads,
                                      "statistic": statistic})
    try:
        from evaluators.kernels.measure import require_device

        require_device(device)
        counts = tuple(int(t) for t in threads.split(",") if t.strip())
        if device == "cuda":
            from evaluators.kernels.gpu_calibrate import run_cuda

            result, _ = run_cuda(quick=quick, seed=seed)
        else:
            result, _ = cal.run_cpu(quick=quick, seed=seed, thread_counts=counts, statistic=statistic,
                                    min_time_s=0.01 if quick else 0.05,
                                    max_time_s=0.05 if quick else 0.5)
    except (RuntimeError, ValueError) as e:
        _fail(str(e))
    with _writing():
        path = result.save(output or cal.default_path(device))
    typer.echo(cal.format_report(result))
    typer.echo(f"calibration:    {path}")
    if json_record is not None:
        with _writing():
            import json

            # the record holds the calibration file as written
            run.write(json_record, json.loads(Path(path).read_text()), ok=True)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def reproduce(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="which reproduction (shi2020, ...)")],
) -> None:
    """Run a paper reproduction; extra options (e.g. --quick) go to it (NAME --help)."""
    import importlib

    from design_space.suggest import did_you_mean
    from experiments.reproduce import REPRODUCTIONS

    if name not in REPRODUCTIONS:
        _fail(f"unknown reproduction {name!r}{did_you_mean(name, REPRODUCTIONS)} "
              f"(available: {list(REPRODUCTIONS)})")
    importlib.import_module(f"experiments.reproduce.{name}").main(list(ctx.args))


@app.command("map")
def map_(
    arch: Annotated[Path, typer.Argument(help="architecture: a coexplore spec, a Timeloop v0.4 arch or a ZigZag accelerator")],
    problem: Annotated[Path, typer.Argument(help="the layer: a Timeloop v0.4 problem")],
    accounting: Annotated[Accounting, typer.Option(help="counting rules (evaluators.loopnest.ACCOUNTING)")] = "coexplore",
    objective: Annotated[MapObjective, typer.Option(help="what the mapping minimizes")] = "edp",
    ert: Annotated[Path | None, typer.Option(help="Accelergy ERT of a Timeloop architecture")] = None,
    art: Annotated[Path | None, typer.Option(help="Accelergy ART of a Timeloop architecture")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="seconds before the search stops with its best")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Timeloop mapping YAML to write (default PROBLEM.coexplore-map.yaml)")] = None,
    no_constraints: Annotated[bool, typer.Option("--no-constraints", help="ignore a Timeloop spec's mapspace constraints: search every divisor mapping")] = False,
    mapping: Annotated[Path | None, typer.Option("--mapping", help="your own mapping (Timeloop mapping YAML, coexplore's form, AccelForge or ZigZag): checked, scored beside the optimum and offered as a warm start")] = None,
    constraints: Annotated[Path | None, typer.Option("--constraints", help="a Timeloop mapspace-constraints file (its targets, named by the design's level names), applied on top of the spec's (alone with --no-constraints)")] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="a key of a Timeloop (its tree, ERT or ART), AccelForge or ZigZag architecture to drop rather than refuse (e.g. latency, allow_overbooking; repeatable; the importers' IGNORABLE): what is dropped is printed")] = None,
) -> None:
    """The mapping of PROBLEM on ARCH proven optimal over divisor tilings under ACCOUNTING, within a Timeloop spec's mapspace constraints (its scope printed), and written as Timeloop mapping YAML."""
    from experiments.map_command import format_loop_nest, map_design, summary
    from mappers.base import SearchStoppedEmpty

    try:
        out = map_design(arch, problem, accounting=accounting, objective=objective, ert=ert, art=art,
                         time_limit_s=time_limit, constraints=not no_constraints, mapping=mapping,
                         constraints_file=constraints,
                         ignore=tuple(ignore or ()))
    except (*_user_errors(), SearchStoppedEmpty) as e:
        _fail(str(e))
    path = output or Path(problem.name.removesuffix(".yaml") + ".coexplore-map.yaml")
    fmt, text = out.mapping_yaml()
    with _writing():
        path.write_text(text, encoding="utf-8")
    for line in format_loop_nest(out.result.mapping, out.translation, out.layer):
        typer.echo(line)
    for line in summary(out):
        typer.echo(line)
    if fmt == "timeloop":
        typer.echo(f"mapping:     {path} (Timeloop mapping YAML)")
    else:
        typer.echo(f"mapping:     {path} (coexplore's form: the mapping unrolls one dimension on both axes of a "
                   "fanout, which Timeloop's mapping format cannot express)")


def main() -> None:
    configure_logging(False)
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
