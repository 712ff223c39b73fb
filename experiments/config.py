"""Study configuration files (YAML), validated with pydantic; errors name key and line.

A config names the space (inline, or a YAML file relative to the config), the evaluator
(``module:function`` or ``module:Class``, with options), the objectives, the optimizer
and the budget::

    study: demo-gemm                      # study name inside the storage
    storage: sqlite:///runs/demo.db       # relative paths: relative to the working directory
    output: runs/demo                     # where `coexplore run` writes the Pareto CSV/PNG
    seed: 0
    space: spaces/gemm.yaml               # or an inline mapping (design_space format)
    evaluator:
      function: experiments.examples.gemm_roofline:evaluate
      options: {}
    objectives: {energy_uj: min, latency_ms: min}
    pareto: {energy_uj: min, area_mm2: min}  # optional: the front to export/plot
    optimizer: {name: random, options: {}}   # or just `optimizer: random`
    budget: {n_trials: 200, workers: 2, timeout_s: 60}
    plugins: [mypkg.coexplore_plugin]     # optional: imported before anything is validated

The config file's folder is importable while the config is loaded and after (it is
appended to ``sys.path``, so an installed module of the same name still wins): a local
``evaluator: my_model:evaluate`` next to the config needs no ``PYTHONPATH=.``, and the
worker processes, which get the driver's ``sys.path``, import it too.

The evaluator is a ``module:attr`` reference or a name registered in
:data:`evaluators.registry.EVALUATORS` (``nested``, ``hasco``, ...); the optimizer a name
in :data:`optimizer.registry.OPTIMIZERS`. Modules under ``plugins`` are imported first
(:func:`experiments.plugins.load_plugins`), so names they register validate.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from design_space.errors import ConfigError, SpaceDefinitionError
from design_space.references import import_ref
from design_space.serialization import space_from_dict
from design_space.suggest import did_you_mean
from design_space.yamlio import LineMap, load_yaml, load_yaml_file
from experiments.plugins import load_plugins


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvaluatorConfig(_Model):
    function: str = Field(description="'module:function', 'module:Class' or a registered evaluator name")
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("function")
    @classmethod
    def _ref(cls, v: str) -> str:
        if ":" not in v:
            from evaluators.registry import EVALUATORS

            if v not in EVALUATORS:
                raise ValueError(f"expected 'module:function' or a registered evaluator "
                                 f"(available: {EVALUATORS.names()}), got {v!r}"
                                 f"{did_you_mean(v, EVALUATORS.names())}")
        return v


class OptimizerConfig(_Model):
    name: str = "random"
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        from optimizer.registry import available_optimizers

        if v not in available_optimizers():
            raise ValueError(f"unknown optimizer {v!r}{did_you_mean(v, available_optimizers())} "
                             f"(available: {available_optimizers()})")
        return v


class BudgetConfig(_Model):
    n_trials: int = Field(100, gt=0)
    workers: int = Field(1, ge=1)
    timeout_s: float | None = Field(None, gt=0)
    executor: Literal["auto", "inline", "process", "dask"] = "process"
    cluster: str | None = Field(None, description="Dask scheduler address, e.g. tcp://host:8786")


class StudyConfig(_Model):
    study: str = Field(min_length=1)
    space: dict[str, Any] | str
    evaluator: EvaluatorConfig
    objectives: dict[str, Literal["min", "max"]] = Field(min_length=1)
    pareto: dict[str, Literal["min", "max"]] | None = Field(
        None, description="metrics of the exported Pareto front/plots (default: the objectives)")
    optimizer: OptimizerConfig = Field(default_factory=OptimizerConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    seed: int = Field(0, ge=0, le=2**63 - 1, strict=True,
                      description="study seed: an integer in 0 .. 2**63-1 (numpy's SeedSequence "
                                  "takes no negative entropy; the database stores a 64-bit integer)")
    storage: str = "sqlite:///runs/coexplore.db"
    output: str | None = None
    plugins: list[str] = Field(default_factory=list, description="modules imported before validation")

    @field_validator("evaluator", mode="before")
    @classmethod
    def _evaluator_short(cls, v: Any) -> Any:
        return {"function": v} if isinstance(v, str) else v

    @field_validator("optimizer", mode="before")
    @classmethod
    def _optimizer_short(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v


class LoadedConfig:
    """A validated config plus what was built from it (space) and where it came from."""

    def __init__(self, config: StudyConfig, space: Any, source: str | None, raw: dict) -> None:
        self.config = config
        self.space = space
        self.source = source
        self.raw = raw

    @property
    def output_dir(self) -> Path:
        return Path(self.config.output or f"runs/{self.config.study}")


def _known_keys(loc: Any) -> list[str]:
    """The keys the config model accepts at ``loc`` (a path of keys), for hints."""
    model: Any = StudyConfig
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return []
        ann = field.annotation
        candidates = [ann, *typing.get_args(ann)]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return []
    return list(model.model_fields)


def _pydantic_error(e: ValidationError, lm: LineMap) -> ConfigError:
    err = e.errors()[0]
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p in ("function-after", "str", "dict[str,any]"))]
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = f"unknown key {loc[-1]!r}{did_you_mean(loc[-1], _known_keys(loc[:-1]))}"
    elif err["type"] == "missing":
        msg = f"missing required key {loc[-1]!r}"
        return lm.error(loc[:-1], msg)
    elif "input" in err and err["type"] not in ("value_error",):
        msg = f"{msg} (got {err['input']!r})"
    return lm.error(loc, msg.removeprefix("Value error, "))


def _resolve_spec_paths(cfg: StudyConfig, lm: LineMap, base_dir: Path | None) -> None:
    """An evaluator's ``accelerator: {spec: my_arch.yaml}`` (and a ``workload`` file:
    ``model.onnx``, ``{onnx: ...}``, ``{timeloop: ...}``) is relative to the config file; the spec is read here, so that an error in it names its
    file and line before the study starts."""
    acc = cfg.evaluator.options.get("accelerator")
    if isinstance(acc, Mapping) and "spec" in acc:
        p = Path(str(acc["spec"]))
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        acc = {**acc, "spec": str(p)}
        cfg.evaluator.options["accelerator"] = acc
        from accelerators.registry import resolve_accelerator
        from accelerators.spec import load_arch

        try:
            resolve_accelerator(acc)
        except ValueError as e:
            raise lm.error(("evaluator", "options", "accelerator"), str(e)) from None
        load_arch(p)
    wl = cfg.evaluator.options.get("workload")
    if base_dir is not None and isinstance(wl, str) and wl.endswith(".onnx") and not Path(wl).is_absolute():
        cfg.evaluator.options["workload"] = str(base_dir / wl)
    elif base_dir is not None and isinstance(wl, Mapping):
        for key in ("onnx", "timeloop", "zigzag", "accelforge"):
            if isinstance(wl.get(key), str) and not Path(wl[key]).is_absolute():
                cfg.evaluator.options["workload"] = {**wl, key: str(base_dir / wl[key])}


def config_from_dict(raw: Any, lm: LineMap | None = None, base_dir: Path | None = None) -> LoadedConfig:
    """Validate a parsed config and build its space."""
    lm = lm or LineMap({})
    if base_dir is not None and str(base_dir) not in sys.path:
        sys.path.append(str(base_dir))   # the config's own modules (module docstring)
    if not isinstance(raw, Mapping):
        raise lm.error((), f"a study config must be a mapping, got {type(raw).__name__}")
    plugins = raw.get("plugins", [])
    if not isinstance(plugins, list):
        raise lm.error(("plugins",), f"plugins must be a list of module names, got {plugins!r}")
    for i, name in enumerate(plugins):
        try:
            load_plugins([name])
        except ValueError as e:
            raise lm.error(("plugins", i), str(e)) from None
    try:
        cfg = StudyConfig.model_validate(raw)
    except ValidationError as e:
        raise _pydantic_error(e, lm) from None
    if ":" in cfg.evaluator.function:
        try:
            import_ref(cfg.evaluator.function, "evaluator")
        except SpaceDefinitionError as e:
            raise lm.error(("evaluator", "function"), str(e)) from None
    _resolve_spec_paths(cfg, lm, base_dir)
    if isinstance(cfg.space, str):
        p = Path(cfg.space)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        sdata, slm = load_yaml_file(p)
        space = space_from_dict(sdata, slm)
    else:
        space = space_from_dict(cfg.space, lm.sub(("space",)))
    return LoadedConfig(cfg, space, lm.source, dict(raw))


def load_config(path: str | Path) -> LoadedConfig:
    """Load and validate a study config file; every problem is a :class:`ConfigError`."""
    data, lm = load_yaml_file(path)
    return config_from_dict(data, lm, base_dir=Path(path).resolve().parent)


def load_config_text(text: str, base_dir: Path | None = None) -> LoadedConfig:
    data, lm = load_yaml(text)
    return config_from_dict(data, lm, base_dir)
