"""Binding MATCH patterns: paths, hops, variable-length edges, pattern unions."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.config import MAX_OPEN_HOPS
from geaflow_sql.core.errors import GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.expressions import and_all, ref, type_of, typed
from planner.graph_nodes import (
    REVERSED,
    UNBOUNDED_HOPS,
    Direction,
    EdgeMatch,
    VertexMatch,
    direction_of,
)
from planner.logical import (
    Aggregate,
    Field,
    Filter,
    GroupLimit,
    LogicalNode,
    Project,
    Union,
)

from .correlation import syntax_conjuncts
from .expressions import ExprBinder
from .graph_repeat import RepeatRules
from .path_values import (
    Track,
    cost_field,
    cost_type,
    first_reach,
    is_cost_field,
    mode_condition,
    path_cost,
    path_length,
    path_type,
)
from .paths import PathState, _hidden, vertex_id
from .scope import Scope, ScopeField

LOOP_EDGE = "loop"  # prefix of an anonymous variable-length edge's hidden name


def is_loop_edge(name: str) -> bool:
    """Whether a hidden field is an anonymous variable-length edge."""
    return name.startswith("$" + LOOP_EDGE)


def drops_elements(union: s.PatternUnion) -> bool:
    """Whether binding ``union`` makes the paths a set: it has an anonymous
    vertex, or an anonymous edge of one hop (in a quantified sub-path too:
    its anonymous elements are no group variable)."""
    return any(_drops(e) for path in union.paths for e in path.elements)


def _drops(element: Any) -> bool:
    if isinstance(element, s.QuantifiedPattern):
        return any(_drops(e) for e in element.body.elements)
    return element.variable is None and not (isinstance(element, s.EdgePattern) and element.is_loop)


class PatternRules(RepeatRules):
    """MATCH: each pattern extends or joins the paths so far."""

    def bind_match(self, state: PathState, clause: s.MatchClause) -> PathState:
        for union in clause.patterns:
            state = self.bind_pattern_union(state, union)
        if clause.where is not None:
            state = self.filter(state, clause.where)
        return state

    def distinct_paths(self, state: PathState) -> PathState:
        """GeaFlow's paths consist of their named elements: anonymous vertices
        and edges are dropped, and paths then agreeing on every named element
        are one path (so ``(a)-()-(b)`` yields each ``b`` once).  The last edge
        of an anonymous variable-length edge stays: GeaFlow's loop emits every
        run (its LDBC BI 8 counts a friend met over ``-[:knows]-{0,1}`` once
        per edge between the two)."""
        assert state.node is not None
        if not any(f.hidden and not _kept_hidden(f.name) for f in state.fields):
            return state
        kept = [f for f in state.fields if not f.hidden or _kept_hidden(f.name)]
        fields = [ScopeField(f.name, f.type, i, f.relation, f.hidden) for i, f in enumerate(kept)]
        node: LogicalNode = Project(
            state.node,
            tuple(ref(f.index, f.type) for f in kept),
            tuple(Field(f.name, f.type) for f in kept),
        )
        node = Aggregate(node, tuple(range(len(kept))), (), node.schema, internal=True)
        return PathState(node, fields)

    def bind_pattern_union(self, state: PathState, union: s.PatternUnion) -> PathState:
        branches = [self.bind_path(state, p) for p in union.paths]
        if len(branches) == 1:
            return branches[0]
        result = branches[0]
        for k, branch in enumerate(branches[1:]):
            # GeaFlow: ``|`` unites distinct paths, ``|+|`` keeps duplicates.
            keep_all = union.distinct[k] if k < len(union.distinct) else False
            result = self._union(state, result, branch, not keep_all)
        return result

    def _union(self, base: PathState, a: PathState, b: PathState, distinct: bool) -> PathState:
        """Union two branches that extend ``base``; variables one lacks are null."""
        names: list[ScopeField] = []
        seen: set[str] = set()
        for f in a.fields[base.width :] + b.fields[base.width :]:
            key = f.name.lower()
            if key not in seen:
                seen.add(key)
                names.append(f)
        out_fields = list(base.fields)
        for f in names:
            out_fields.append(ScopeField(f.name, f.type, len(out_fields), f.relation, f.hidden))

        def align(branch: PathState) -> LogicalNode:
            exprs = [ref(f.index, f.type) for f in base.fields]
            for f in names:
                idx = branch.index_of(f.name) if f.relation is None else None
                if idx is not None and idx >= base.width:
                    exprs.append(ref(idx, f.type))
                else:
                    exprs.append(typed(exp.Null(), f.type))
            assert branch.node is not None
            return Project(
                branch.node,
                tuple(exprs),
                tuple(Field(f.name, f.type) for f in out_fields),
            )

        node: LogicalNode = Union((align(a), align(b)), True)
        if distinct:
            width = len(out_fields)
            node = Aggregate(node, tuple(range(width)), (), node.schema, internal=True)
        return PathState(node, out_fields)

    def _label_check(self, labels: tuple[str, ...], vertex: bool, at: s.Node) -> tuple[str, ...]:
        assert self.graph is not None
        out = []
        for lab in labels:
            info = self.graph.vertex(lab) if vertex else self.graph.edge(lab)
            if info is None:
                kinds = self.graph.vertices if vertex else self.graph.edges
                known = ", ".join(k.label for k in kinds)
                raise self.error(
                    ValidationError(
                        f"graph {self.graph.name} has no {'vertex' if vertex else 'edge'} label "
                        f"{lab!r} (it has: {known})"
                    ),
                    at,
                )
            out.append(info.label)
        return tuple(dict.fromkeys(out))  # (A|A is A: each label read once)

    def _labels_of(self, element: s.NodePattern | s.EdgePattern, vertex: bool) -> tuple[str, ...]:
        """The labels an element pattern admits, () for every label.  A label
        expression is evaluated over the graph's labels (an element has one
        label); one that admits none is an error, not an empty match."""
        expr = element.label_expr
        if expr is None:
            return self._label_check(element.labels, vertex, element)
        assert self.graph is not None
        for leaf in expr.names():
            assert leaf.name is not None
            self._label_check((leaf.name,), vertex, leaf)
        every = tuple(k.label for k in (self.graph.vertices if vertex else self.graph.edges))
        found = expr.labels(every)
        if not found:
            kind = "vertex" if vertex else "edge"
            raise self.error(
                ValidationError(
                    f"the label expression admits no {kind} label of graph {self.graph.name} "
                    f"(it has: {', '.join(every)}; an element has one label)"
                ),
                expr,
            )
        return () if found == every else found

    # The elements of the path pattern being bound, for its path value (None
    # when it has neither a variable, a mode nor a search prefix).
    _track: Track | None = None
    # How the variable-length edge of a shortest-path search keeps its walks
    # (EdgeMatch.first_reach), None when every walk is kept.
    _first_reach: str | None = None
    # The cost of one edge when that search is by cost (EdgeMatch.reach_cost).
    _reach_cost: exp.Expression | None = None
    # The WHERE of the (not OPTIONAL) MATCH clause whose patterns are being
    # bound: its conjuncts on a search's end only are the search's ends.
    _match_where: s.Expr | None = None

    def bind_path(self, state: PathState, path: s.PathPattern) -> PathState:
        costs = self._edge_costs(path)
        if path.variable is None and path.mode in (None, "WALK") and path.search is None:
            return self._bind_path(state, path)
        steps = path.steps
        if path.mode not in (None, "WALK") and (
            not steps or (path.mode == "TRAIL" and len(steps) == 1 and not steps[0].is_loop)
        ):
            raise self.error(
                ValidationError(
                    f"path mode {path.mode} means nothing on "
                    + ("a lone vertex" if not steps else "one edge of one hop")
                    + ": it is about the vertices or edges a path repeats"
                ),
                path,
            )
        if path.search is not None:
            self._check_search(state, path, path.search)
        outer = (self._track, self._first_reach, self._reach_cost)
        self._track, self._first_reach = Track(), first_reach(path)
        self._reach_cost = None
        if self._first_reach is not None and path.search is not None and path.search.cheapest:
            step = path.steps[0]
            self._reach_cost = costs.get(id(step), typed(exp.Literal.number(1), T.BIGINT))
        try:
            base = state.width
            state = self._bind_path(state, path, distinct=False)
            return self.distinct_paths(self._path_value(state, path, base, costs))
        finally:
            self._track, self._first_reach, self._reach_cost = outer

    def _edge_costs(self, path: s.PathPattern) -> dict[int, exp.Expression]:
        """The COST of each edge pattern that has one (by ``id``), bound over
        the edge alone; COST is for a CHEAPEST search only."""
        edges = [
            e
            for step in path.steps
            for e in (step.body.edges if isinstance(step, s.QuantifiedPattern) else (step,))
        ]
        written = [(e, e.cost) for e in edges if e.cost is not None]
        if not written:
            return {}
        if path.search is None or not path.search.cheapest:
            raise self.error(
                ValidationError(
                    "COST is what an edge adds to its path's cost under a CHEAPEST search "
                    "(ANY CHEAPEST, ALL CHEAPEST or CHEAPEST k before the path), and this "
                    + (
                        "path has no search prefix"
                        if path.search is None
                        else f"path's search is {path.search}"
                    )
                ),
                written[0][1],
            )
        assert self.edge_type is not None
        out: dict[int, exp.Expression] = {}
        for e, cost in written:
            assert e.variable is not None  # (the grammar's rule: COST follows a named edge)
            binder = self._binder_alone(e.variable, self.edge_type)
            try:
                bound = binder.bind(cost)
            except GeaflowError as err:
                raise self.error(
                    ValidationError(f"the COST of an edge may only read the edge: {err.message}"),
                    cost,
                ) from None
            kind = type_of(bound)
            if not getattr(kind, "is_numeric", False):
                raise self.error(ValidationError(f"COST is a number, and this is {kind}"), cost)
            out[id(e)] = bound
        return out

    def _check_search(self, state: PathState, path: s.PathPattern, search: s.PathSearch) -> None:
        """A search prefix is about paths of different lengths (SHORTEST) or
        many paths (ANY k) between two vertices, each found on its own."""
        edges = path.steps
        if not edges:
            raise self.error(
                ValidationError(f"{search} means nothing on a lone vertex: it is one path"), search
            )
        if search.shortest and not any(_variable_length(e) for e in edges):
            raise self.error(
                ValidationError(
                    f"{search} means nothing on a pattern of fixed length: every path it "
                    f"matches has {len(edges)} edge{'s' if len(edges) > 1 else ''} (give an "
                    "edge a hop range, as -[e]->{1,5})"
                ),
                search,
            )
        for inner in path.nodes[1:-1]:
            if inner.variable and state.index_of(inner.variable) is not None:
                raise self.error(
                    ValidationError(
                        f"a path with a search prefix meets the patterns before it at its end "
                        f"vertices only, and {inner.variable!r} is inside it: the paths are "
                        "chosen between their ends before they are joined"
                    ),
                    inner,
                )

    def _path_value(
        self, state: PathState, path: s.PathPattern, base: int, costs: dict[int, exp.Expression]
    ) -> PathState:
        """The path as a field (named by the path variable, else hidden), the
        mode's filter on it, and the paths its search prefix keeps: per pair of
        end vertices (and per row of the ``base`` fields before the pattern).
        Under a CHEAPEST search the path's cost is a hidden field after it,
        and a path of null cost is no candidate."""
        assert self._track is not None and state.node is not None
        assert self.vertex_type is not None and self.edge_type is not None
        ptype = path_type(self.vertex_type, self.edge_type)
        value = self._track.value(path.elements, ptype)
        name = path.variable or _hidden("path")
        if path.variable is not None and state.index_of(path.variable) is not None:
            raise self.error(
                ValidationError(f"path variable {path.variable!r} is already bound"), path
            )
        fields = list(state.fields) + [
            ScopeField(name, ptype, state.width, None, path.variable is None)
        ]
        exprs = tuple(ref(f.index, f.type) for f in state.fields) + (value,)
        search = path.search
        cost: exp.Expression | None = None
        if search is not None and search.cheapest:
            ctype = cost_type(list(costs.values()))
            cost = ref(len(fields), ctype)
            name = cost_field(path.variable) if path.variable else _hidden("cost")
            fields.append(ScopeField(name, ctype, len(fields), None, True))
            exprs += (path_cost(self._track, path.steps, costs, ctype),)
        node: LogicalNode = Project(state.node, exprs, tuple(Field(f.name, f.type) for f in fields))
        condition = mode_condition(path.mode or "WALK", state.width, ptype)
        if condition is not None:
            node = Filter(node, condition)
        if cost is not None:
            node = Filter(
                node, typed(exp.Not(this=exp.Is(this=cost, expression=exp.Null())), T.BOOLEAN)
            )
        if search is not None:
            ends = [fields[self._track.nodes[id(path.elements[k])]] for k in (0, -1)]
            keys = [ref(f.index, f.type) for f in fields[:base]]
            keys += [vertex_id(f, 0) for f in ends]
            if cost is not None:
                order = cost
            else:
                order = path_length(ref(state.width, ptype)) if search.shortest else keys[-1]
            # A search chooses among paths, and walks over equal parallel
            # edges are one path (an edge is its value): one row each first.
            node = Aggregate(node, tuple(range(len(fields))), (), node.schema, internal=True)
            node = GroupLimit(node, tuple(keys), order, search.count, search.groups)
        return PathState(node, fields)

    def _bind_path(self, state: PathState, path: s.PathPattern, distinct: bool = True) -> PathState:
        self.check_group_variables(state, path)
        elements = list(path.elements)
        nodes = [e for e in elements if isinstance(e, s.NodePattern)]
        # Start at a variable the paths already have, so the pattern extends them;
        # a pattern bound at its end is walked backwards (edges reversed).
        start = next(
            (
                k
                for k, n in enumerate(elements)
                if isinstance(n, s.NodePattern)
                and n.variable
                and state.index_of(n.variable) is not None
            ),
            None,
        )
        if start is None:
            state = self._start(state, nodes[0])
            state = self._walk(state, elements, 0, forward=True)
        else:
            state = self._apply_node_constraints(state, elements[start])  # type: ignore[arg-type]
            state = self._walk(state, elements, start, forward=True)
            state = self._walk(state, elements, start, forward=False)
        return self.distinct_paths(state) if distinct else state

    def _walk(self, state: PathState, elements: list[Any], start: int, forward: bool) -> PathState:
        k = start
        step = 2 if forward else -2
        current_var = elements[start].variable
        current_idx = state.index_of(current_var) if current_var else state.width - 1
        while 0 <= k + step // 2 < len(elements) and 0 <= k + step < len(elements):
            edge: s.EdgePattern = elements[k + step // 2]
            node: s.NodePattern = elements[k + step]
            assert current_idx is not None
            if isinstance(edge, s.QuantifiedPattern):
                state, current_idx = self._repeat(state, current_idx, edge, node, forward)
                k += step
                continue
            direction = direction_of(edge.direction)
            if not forward:
                direction = REVERSED[direction]
            assert current_idx is not None
            # (a loop's body is the vertex written after its edge)
            body: s.NodePattern = elements[k + step] if forward else elements[k]
            state, current_idx = self._expand(state, current_idx, edge, direction, node, body)
            k += step
        return state

    def _start(self, state: PathState, node: s.NodePattern) -> PathState:
        assert self.graph is not None and self.vertex_type is not None
        labels = self._labels_of(node, True)
        variable = node.variable or _hidden("v")
        hidden = node.variable is None
        vm = VertexMatch(self.graph, variable, labels, self.vertex_type, None, state.node, hidden)
        new_field = ScopeField(variable, self.vertex_type, state.width, None, hidden)
        if self._track is not None:
            self._track.node(node, state.width)
        new_state = PathState(vm, list(state.fields) + [new_field])
        new_state = self._apply_globals(new_state, state.width)
        return self._element_conditions(new_state, node, variable)

    def _element_conditions(self, state: PathState, element: Any, variable: str) -> PathState:
        """A pattern element's ``{prop: value}`` map and WHERE, as filters."""
        for eq in property_equalities(element, variable):
            state = self.filter(state, eq, local=variable)
        if element.where is not None:
            state = self.filter(state, element.where, local=variable)
        return state

    def _apply_node_constraints(self, state: PathState, node: s.NodePattern) -> PathState:
        """Labels and WHERE of a node pattern naming an already bound variable."""
        idx = state.index_of(node.variable or "")
        assert idx is not None
        if self._track is not None:
            self._track.node(node, idx)
        if node.labels or node.label_expr is not None:
            labels = self._labels_of(node, True)
            if labels:
                state = self._label_filter(state, idx, labels)
        return self._element_conditions(state, node, node.variable or "")

    def _label_filter(self, state: PathState, idx: int, labels: tuple[str, ...]) -> PathState:
        t = state.fields[idx].type
        label = typed(
            exp.Dot(this=ref(idx, t), expression=exp.Identifier(this=T.LABEL_FIELD, quoted=True)),
            T.VARCHAR,
        )
        cond = typed(
            exp.In(this=label, expressions=[exp.Literal.string(x) for x in labels]), T.BOOLEAN
        )
        assert state.node is not None
        return state.with_node(Filter(state.node, cond))

    def _expand(
        self,
        state: PathState,
        source_idx: int,
        edge: s.EdgePattern,
        direction: Direction,
        node: s.NodePattern,
        body: s.NodePattern,
    ) -> tuple[PathState, int]:
        """Extend the paths from field ``source_idx`` over ``edge`` to ``node``;
        ``body`` is the vertex written after the edge (``node`` itself unless
        the pattern is walked backwards)."""
        assert self.graph is not None and state.node is not None
        edge_labels = self._labels_of(edge, False)
        target_labels = self._labels_of(node, True)
        forward = body is node
        via_labels: tuple[str, ...] = ()
        via_filter: exp.Expression | None = None
        node_conditions = True  # node's own WHERE and map still to apply
        if edge.is_loop:
            # GeaFlow's loop body is the edge step and the vertex step of the
            # vertex written after the edge, labels and inline conditions:
            # every vertex a hop reaches passes them (not the start, so a run
            # of no hops ends at its start whatever they say).
            via_labels = self._labels_of(body, True)
            via_filter = self._loop_vertex_condition(body, body.variable or _hidden("v"))
            if forward:
                target_labels = ()
                node_conditions = via_filter is None and _has_conditions(node)
        if edge.variable and state.index_of(edge.variable) is not None:
            raise self.error(
                UnsupportedError(f"edge variable {edge.variable!r} is already bound in this query"),
                edge,
            )
        edge_var = edge.variable or _hidden(LOOP_EDGE if edge.is_loop else "e")
        target_bound = state.index_of(node.variable) if node.variable else None
        target_var = node.variable or _hidden("v")
        max_hops = edge.max_hops
        if max_hops is None and self._first_reach is not None and self._reach_cost is None:
            max_hops = UNBOUNDED_HOPS  # the search ends when it reaches nothing new
        elif max_hops is None:
            max_hops = max(edge.min_hops, self.ctx.config.get_int(MAX_OPEN_HOPS))
        if max_hops < edge.min_hops:
            raise self.error(
                ValidationError(f"hop range {{{edge.min_hops},{max_hops}}} is empty"), edge
            )
        em = EdgeMatch(
            state.node,
            self.graph,
            source_idx,
            edge_var,
            edge_labels,
            direction,
            self.edge_type,
            target_var,
            target_labels,
            self.vertex_type,
            # On a variable-length edge the edge's conditions hold for every edge of the run.
            self._loop_edge_condition(edge, edge_var) if edge.is_loop else None,
            None,
            target_bound,
            edge.min_hops,
            max_hops,
            edge.variable is None,
            node.variable is None,
            via_labels=via_labels,
            via_filter=via_filter,
            via_end=forward,
            keep_run=self._track is not None and edge.is_loop,
            first_reach=self._first_reach if edge.is_loop else None,
            reach_cost=self._reach_cost if edge.is_loop and self._first_reach else None,
            search_ends=(
                self._search_ends(node.variable)
                if edge.is_loop
                and self._first_reach is not None
                and self._reach_cost is None
                and target_bound is None
                and forward
                else None
            ),
        )
        fields = list(state.fields)
        edge_idx = len(fields)
        fields.append(ScopeField(edge_var, self.edge_type, edge_idx, None, edge.variable is None))
        run, target_idx = self._run_and_target(
            fields, em, em.keep_run, target_bound, target_var, node.variable is None
        )
        if self._track is not None:
            self._track.edge(edge, edge_idx, run, forward)
            self._track.node(node, target_idx)
        new_state = PathState(em, fields)
        if target_bound is None:
            new_state = self._apply_globals(new_state, target_idx)
        if not em.is_loop:
            new_state = self._element_conditions(new_state, edge, edge_var)
        if target_bound is not None and target_labels:
            new_state = self._label_filter(new_state, target_bound, target_labels)
        if node_conditions:
            new_state = self._element_conditions(new_state, node, target_var)
        return new_state, target_idx

    def _loop_vertex_condition(self, node: s.NodePattern, var: str) -> exp.Expression | None:
        """WHERE and {prop: value} of the vertex in a loop's body, over the
        vertex alone; None when there are none or they read other variables
        (those are checked at the end of the run only, see the README)."""
        assert self.vertex_type is not None
        if not _has_conditions(node):
            return None
        binder = self._binder_alone(var, self.vertex_type)
        try:
            parts = [binder.bind_condition(eq) for eq in property_equalities(node, var)]
            if node.where is not None:
                parts.append(binder.bind_condition(node.where))
        except GeaflowError:
            return None
        return and_all(parts)

    def _loop_edge_condition(self, edge: s.EdgePattern, edge_var: str) -> exp.Expression | None:
        """WHERE and {prop: value} of a variable-length edge, over the edge alone."""
        assert self.edge_type is not None
        binder = self._binder_alone(edge_var, self.edge_type)
        parts = [binder.bind_condition(eq) for eq in property_equalities(edge, edge_var)]
        if edge.where is not None:
            try:
                parts.append(binder.bind_condition(edge.where))
            except GeaflowError as err:
                raise self.error(
                    ValidationError(
                        f"the condition of a variable-length edge may only read the edge: {err.message}"
                    ),
                    edge.where,
                ) from None
        return and_all(parts)

    def _search_ends(self, var: str | None) -> exp.Expression | None:
        """The conjuncts of the MATCH's WHERE that read the end vertex ``var``
        and nothing else, over the vertex alone (EdgeMatch.search_ends)."""
        if var is None or self._match_where is None:
            return None
        assert self.vertex_type is not None
        binder = self._binder_alone(var, self.vertex_type)
        parts = []
        for conjunct in syntax_conjuncts(self._match_where):
            if not _reads_only(conjunct, var):
                continue
            try:
                parts.append(binder.bind_condition(conjunct))
            except GeaflowError:
                continue  # (e.g. a function of the path: not the vertex's alone)
        return and_all(parts) if parts else None

    def _binder_alone(self, var: str, t: Any) -> ExprBinder:
        """Binds conditions over one pattern element alone (field 0)."""
        return ExprBinder(self.ctx, Scope([ScopeField(var, t, 0, None, False)]), local_relation=var)


def _reads_only(e: s.Expr, var: str) -> bool:
    """Does the expression's syntax read the variable ``var`` and nothing else
    (no other name, no subquery)?"""
    nodes = s.descendants(e)
    names = {n.name for n in nodes if isinstance(n, s.Column)}
    return names == {var} and all(isinstance(n, s.Expr) for n in nodes)


def _kept_hidden(name: str) -> bool:
    """Hidden fields a path keeps: an anonymous variable-length edge's last
    edge, and a path variable's cost (``path_cost``)."""
    return is_loop_edge(name) or is_cost_field(name)


def _variable_length(step: Any) -> bool:
    """Do the paths through this edge or quantified sub-path differ in length?"""
    if isinstance(step, s.QuantifiedPattern):
        return step.min_hops != step.max_hops
    return bool(step.is_loop)


def _has_conditions(element: Any) -> bool:
    return element.where is not None or bool(element.properties)


def property_equalities(element: Any, variable: str) -> list[s.Expr]:
    """A pattern element's ``{prop: value}`` map as ``variable.prop = value`` conditions."""
    return [
        s.Binary(
            "=",
            s.Field(s.Column(variable, span=value.span), name, span=value.span),
            value,
            span=value.span,
        )
        for name, value in element.properties
    ]
