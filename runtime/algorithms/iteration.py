"""Supersteps on DataFrames, run as rounds of an iteration cycle.

A distributed algorithm is a ``step(frames, round) -> (frames, check)``: it
builds the next round's DataFrames (vertex state, frontier, ...) from this
round's.  ``iterate`` runs the steps as rounds of the call's iteration cycle
(its ExecutionGroup's, under the scheduler running the statement) and keeps
each round cheap:

* **Convergence.**  ``check`` (optional) looks at the frames and says
  whether the iteration is done (no messages, nothing changed); it runs where
  the frames are materialised anyway (see ``iterate``).
* **Lineage.**  Every ``interval`` rounds the frames are checkpointed (local
  checkpoint by default, a reliable one in a folder on request), so the plan
  of round 50 is no bigger than the plan of round 5.
* **Bound.**  At most ``max_rounds`` rounds.

The final frames are checkpointed once more so the caller gets data that does
not depend on the cached intermediates, which are then released.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .options import CheckpointPolicy, RunOptions

Frames = dict[str, Any]
Check = Callable[[Frames], bool]
Step = Callable[[Frames, int], tuple[Frames, Check | None]]


@dataclass
class IterationTrace:
    """What an iteration did (tests read it; EXPLAIN-style diagnostics)."""

    rounds: int = 0
    checkpoints: int = 0
    plan_sizes: list[int] = field(default_factory=list)


def cut_lineage(df: Any, policy: CheckpointPolicy) -> Any:
    """Materialise ``df`` and drop its lineage, the way the policy says."""
    if policy.mode == "reliable":
        from runtime.spark_adapter import set_checkpoint_dir

        set_checkpoint_dir(df.sparkSession, policy.directory)
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def iterate(
    frames: Frames,
    step: Step,
    max_rounds: int,
    opts: RunOptions,
    trace: IterationTrace | None = None,
    measure: str | None = None,
    check_every_round: bool = False,
) -> Frames:
    """Run ``step`` for up to ``max_rounds`` rounds, as rounds of the call's
    iteration cycle (``opts.iteration``); return the last frames.

    Convergence is checked when lineage is cut (every ``interval`` rounds,
    where the frames are materialised anyway), or every round when the policy
    never cuts.  A round run after convergence changes nothing — no vertex
    has anything left to send — so checking late costs a few cheap rounds and
    saves a Spark job per round.  ``measure`` names a frame whose plan size is
    recorded after every round (tests use it to show that lineage does not
    grow).  ``check_every_round`` is for steps whose frames are cheap to look
    at every round (they were materialised inside the step).
    """
    policy = opts.checkpoint
    trace = trace if trace is not None else IterationTrace()
    state: dict[str, Any] = {"frames": frames, "persisted": [], "dirty": False}
    if max_rounds <= 0:
        return frames

    def one_round(round_no: int) -> tuple[bool, Any]:
        new_frames, check = step(state["frames"], round_no)
        cut_now = policy.interval > 0 and (round_no + 1) % policy.interval == 0
        if cut_now:
            new_frames = {k: cut_lineage(v, policy) for k, v in new_frames.items()}
            trace.checkpoints += 1
            _release(state["persisted"])
            state["dirty"] = False
        else:
            state["dirty"] = True
            if check is not None and policy.interval == 0:
                new_frames = {k: v.persist() for k, v in new_frames.items()}
                state["persisted"].append(list(new_frames.values()))
        state["frames"] = new_frames
        trace.rounds = round_no + 1
        if measure is not None:
            from runtime.spark_adapter import plan_size

            trace.plan_sizes.append(plan_size(new_frames[measure]))
        done = False
        if check is not None and (cut_now or policy.interval == 0 or check_every_round):
            done = check(new_frames)
            if policy.interval == 0:
                # The check computed this round's frames: older caches are no longer read.
                older = state["persisted"][:-1]
                state["persisted"] = state["persisted"][-1:]
                _release(older)
        return not done, None

    opts.iteration.run(one_round, max_rounds)
    result = state["frames"]
    if state["dirty"] and policy.interval > 0:
        result = {k: cut_lineage(v, policy) for k, v in result.items()}
        trace.checkpoints += 1
    _release(state["persisted"])
    return result


def _release(groups: list[list[Any]]) -> None:
    for group in groups:
        for df in group:
            with contextlib.suppress(Exception):  # a session that went away
                df.unpersist()
    groups.clear()
