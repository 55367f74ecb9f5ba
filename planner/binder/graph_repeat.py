"""Binding quantified path patterns: ``(x) ((a)-[e]->(b) WHERE ...){1,4} (y)``.

ISO GQL's quantified path pattern repeats a parenthesised sub-path.  The
sub-path is bound alone, as a MATCH of its own (its WHERE may read only its
own variables), giving one row per walk of it; a ``RepeatMatch`` chains
those walks from the vertex the path stands at, each starting where the one
before ended, ``m`` to ``n`` times.  Its variables are bound once per
repetition, so outside the parentheses each is a list of its values in the
order written (a group variable); the vertex after the pattern is where the
last repetition ended, and for no repetitions the vertex before it.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import MAX_OPEN_HOPS
from geaflow_sql.core.errors import ValidationError
from grammar import syntax as s
from planner.graph_nodes import RepeatMatch

from .graph_base import GraphBinderBase
from .path_values import Track
from .paths import PathState, _hidden
from .scope import ScopeField


class RepeatRules(GraphBinderBase):
    """Quantified sub-paths, for ``PatternRules`` (which provides the rest)."""

    _track: Track | None = None
    _first_reach: str | None = None

    def _bind_path(self, state: PathState, path: s.PathPattern, distinct: bool = True) -> PathState:
        raise NotImplementedError  # PatternRules

    def _labels_of(self, element: Any, vertex: bool) -> tuple[str, ...]:
        raise NotImplementedError  # PatternRules

    def _label_filter(self, state: PathState, idx: int, labels: tuple[str, ...]) -> PathState:
        raise NotImplementedError  # PatternRules

    def _element_conditions(self, state: PathState, element: Any, variable: str) -> PathState:
        raise NotImplementedError  # PatternRules

    def check_group_variables(self, state: PathState, path: s.PathPattern) -> None:
        """A list bound by a quantified pattern (an earlier one, or one of
        this path) is no vertex or edge to match again."""
        groups: dict[str, s.QuantifiedPattern] = {}
        for rep in path.quantified:
            for name in dict.fromkeys(n.lower() for n in rep.group_variables):
                if name in groups:
                    raise self.error(
                        ValidationError(
                            f"{name!r} is a variable of two quantified path patterns: each "
                            "binds its own list"
                        ),
                        rep,
                    )
                groups[name] = rep
        for element in path.elements:
            if element.variable and element.variable.lower() in groups:
                raise self.error(
                    ValidationError(
                        f"{element.variable!r} is bound inside a quantified path pattern of "
                        "this path (a list, once per repetition) and outside it"
                    ),
                    element,
                )
        for element in path.elements:
            idx = state.index_of(element.variable) if element.variable else None
            if idx is not None and isinstance(state.fields[idx].type, T.ArrayType):
                raise self.error(
                    ValidationError(
                        f"{element.variable!r} is a group variable (the list of its values in the "
                        "repetitions of a quantified path pattern): a pattern cannot match it again"
                    ),
                    element,
                )

    def _repeat(
        self,
        state: PathState,
        source_idx: int,
        rep: s.QuantifiedPattern,
        node: s.NodePattern,
        forward: bool,
    ) -> tuple[PathState, int]:
        """Extend the paths from field ``source_idx`` over the repetitions of
        ``rep`` to ``node`` (the node written after it when walked
        ``forward``, else the one before)."""
        assert self.vertex_type is not None and self.edge_type is not None
        assert state.node is not None
        for name in rep.group_variables:
            if state.index_of(name) is not None:
                raise self.error(
                    ValidationError(
                        f"{name!r} is bound outside the quantified path pattern too: inside "
                        "it a variable is bound once per repetition"
                    ),
                    rep,
                )
        body, track = self._bind_body(rep)
        assert body.node is not None
        elements = rep.body.elements
        names = list(dict.fromkeys(n.lower() for n in rep.group_variables))
        groups = tuple(body.index_of(n) for n in names)
        run = None
        if self._track is not None:
            run = (
                tuple(track.edges[id(e)][0] for e in rep.body.edges),
                tuple(track.nodes[id(n)] for n in rep.body.nodes[1:]),
            )
        max_hops = rep.max_hops
        if max_hops is None:
            max_hops = max(rep.min_hops, self.ctx.config.get_int(MAX_OPEN_HOPS))
        if max_hops < rep.min_hops:
            raise self.error(
                ValidationError(f"repetition range {{{rep.min_hops},{max_hops}}} is empty"), rep
            )
        target_bound = state.index_of(node.variable) if node.variable else None
        target_var = node.variable or _hidden("v")
        group_fields = [body.fields[i] for i in groups if i is not None]
        rm = RepeatMatch(
            state.node,
            body.node,
            source_idx,
            track.nodes[id(elements[0])],
            track.nodes[id(elements[-1])],
            tuple(f.index for f in group_fields),
            tuple(f.name for f in group_fields),
            target_var,
            self.vertex_type,
            self.edge_type,
            rep.min_hops,
            max_hops,
            forward,
            run,
            target_bound,
            node.variable is None,
        )
        fields = list(state.fields)
        for f in group_fields:
            fields.append(ScopeField(f.name, T.ArrayType(f.type), len(fields), None, False))
        run_fields, target_idx = self._run_and_target(
            fields, rm, run is not None, target_bound, target_var, node.variable is None
        )
        if self._track is not None:
            # (the run's lists are in the order written, whichever way it was walked)
            self._track.edge(rep, -1, run_fields, True)
            self._track.node(node, target_idx)
        new_state = PathState(rm, fields)
        if target_bound is None:
            new_state = self._apply_globals(new_state, target_idx)
        labels = self._labels_of(node, True)
        if labels:
            new_state = self._label_filter(new_state, target_idx, labels)
        return self._element_conditions(new_state, node, target_var), target_idx

    def _run_and_target(
        self,
        fields: list[ScopeField],
        node: Any,
        keeps_run: bool,
        target_bound: int | None,
        target_var: str,
        hidden: bool,
    ) -> tuple[tuple[int, int] | None, int]:
        """Add to ``fields`` what an expansion ``node`` adds after its own
        fields: a kept run's two hidden lists (edges, vertices between), then
        the vertex it ends at unless that is the bound field ``target_bound``.
        Where the run's lists are (or None), and the end vertex's field."""
        run = None
        if keeps_run:
            run = (len(fields), len(fields) + 1)
            for part in node.schema[len(fields) : len(fields) + 2]:
                fields.append(ScopeField(_hidden("run"), part.type, len(fields), None, True))
        if target_bound is not None:
            return run, target_bound
        fields.append(ScopeField(target_var, self.vertex_type, len(fields), None, hidden))
        return run, len(fields) - 1

    def _bind_body(self, rep: s.QuantifiedPattern) -> tuple[PathState, Track]:
        """The sub-path matched alone, with its WHERE, and where its elements are."""
        outer = (self._track, self._first_reach)
        track = Track()
        self._track, self._first_reach = track, None
        try:
            body = self._bind_path(PathState(None, []), rep.body, distinct=False)
        finally:
            self._track, self._first_reach = outer
        if rep.where is not None:
            body = self.filter(body, rep.where)
        return body, track
