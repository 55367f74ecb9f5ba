"""How an algorithm call runs: engine, backend, iteration bound, checkpoints.

The keys are declared in ``geaflow_sql.core.config`` (so SET, SHOW and the shell
know them); this module reads and checks them for one CALL.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from geaflow_sql.core.config import (
    ALGORITHM_BACKEND,
    ALGORITHM_ENGINE,
    CHECKPOINT_DIR,
    CHECKPOINT_EVERY,
    CHECKPOINT_MODE,
    LOCAL_ITERATION_LIMIT,
    MAX_TRAVERSAL,
    Config,
    Key,
)
from geaflow_sql.core.errors import ConfigError
from runtime.scheduler import IterationRunner

from .base import CallContext

ENGINE = ALGORITHM_ENGINE

# GeaFlow bounds every algorithm call by ``geaflow.dsl.max.traversal`` iterations
# (64 unless set); an algorithm's own bound (PageRank's max_iter, ...) only
# lowers it.  A value <= 0 in our config means "GeaFlow's default".
GEAFLOW_MAX_ITERATIONS = 64

ENGINES = ("auto", "local", "distributed")
BACKENDS = ("auto", "builtin", "graphframes")
CHECKPOINT_MODES = ("local", "reliable")


@dataclass(frozen=True, slots=True)
class CheckpointPolicy:
    """Cut an iteration's lineage every ``interval`` rounds (0: never)."""

    interval: int = 5
    mode: str = "local"  # local: localCheckpoint(); reliable: checkpoint() to ``directory``
    directory: str | None = None


@dataclass(frozen=True, slots=True)
class RunOptions:
    engine: str = "auto"
    backend: str = "auto"
    local_max_edges: int = 5_000_000
    max_iterations: int = GEAFLOW_MAX_ITERATIONS
    checkpoint: CheckpointPolicy = CheckpointPolicy()
    # Runs the supersteps as rounds of the call's iteration cycle.
    iteration: IterationRunner = field(default_factory=IterationRunner.standalone)


def _choice(config: Config, key: Key, allowed: tuple[str, ...]) -> str:
    value = (config.get_str(key) or str(key.default)).strip().lower()
    if value not in allowed:
        raise ConfigError(
            f"configuration {key.name} must be one of {', '.join(allowed)}, got {value!r}"
        )
    return value


def run_options(config: Config | None) -> RunOptions:
    """Read (and check) the options of an algorithm call from the job config."""
    config = config if config is not None else Config()
    max_traversal = config.get_int(MAX_TRAVERSAL)
    interval = config.get_int(CHECKPOINT_EVERY)
    if interval < 0:
        raise ConfigError(f"configuration {CHECKPOINT_EVERY.name} must be >= 0, got {interval}")
    mode = _choice(config, CHECKPOINT_MODE, CHECKPOINT_MODES)
    directory = config.get_str(CHECKPOINT_DIR)
    if mode == "reliable" and not directory:
        raise ConfigError(
            f"configuration {CHECKPOINT_MODE.name}=reliable needs a folder in {CHECKPOINT_DIR.name}"
        )
    return RunOptions(
        engine=_choice(config, ENGINE, ENGINES),
        backend=_choice(config, ALGORITHM_BACKEND, BACKENDS),
        local_max_edges=config.get_int(LOCAL_ITERATION_LIMIT),
        max_iterations=max_traversal if max_traversal > 0 else GEAFLOW_MAX_ITERATIONS,
        checkpoint=CheckpointPolicy(interval, mode, directory),
    )


def options_of(ctx: CallContext, graph: Any = None) -> RunOptions:
    """The options of a call on ``graph`` (whose supersteps run as its
    ``iteration`` says) from the job config of ``ctx``."""
    opts = run_options(ctx.config)
    if graph is None:
        return opts
    return replace(opts, iteration=graph.iteration)
