"""A run of MATCH clauses as separate path tables, joined where they meet.

GeaFlow binds each pattern of a MATCH onto the paths so far: a pattern that
shares no variable with them multiplies them (every earlier path with every
new one), and only a later pattern or WHERE relates the two.  Built that way,
``MATCH <a> MATCH <b> WHERE <relates a and b> MATCH <c joins a and b>``
materialises |a| x |b| rows before ``c`` cuts them down, and on a graph of a
few thousand vertices that product outgrows a 1 GiB driver.

Here a run of consecutive MATCH clauses keeps *components*: path tables that
share no variable.  A pattern that meets no component starts one; a pattern
that meets one extends it; a pattern that meets several extends the one it
starts in (variables of the others are matched afresh there) and is then
joined with the others on the vertices they share.  A WHERE waits until the
variables it reads are in one component.  At the end of the run what is still
apart is multiplied, the waiting filters apply, and the fields are put back
in the order the one-table binding gives them.  The rows are the same:
filters commute with joins, and where a pattern's anonymous elements make the
paths a set, every component is made a set (a product of sets is the set of
the product).

Anything outside that shape (a union of paths that meets several
components, a named path, a bound edge variable, a condition in the pattern
on a vertex of another component that carries LET fields) is bound the
one-table way, after multiplying what it meets.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from grammar import syntax as s
from planner.expressions import ref, typed
from planner.logical import Aggregate, Field, Join, LogicalNode, Project

from .graph_patterns import drops_elements
from .paths import PathState, vertex_id
from .scope import ScopeField


def referenced_names(node: s.Node) -> set[str]:
    """Every name an expression or pattern may read as a variable (lower case)."""
    out: set[str] = set()
    for n in s.descendants(node):
        if isinstance(n, s.Column):
            out.add(n.name.lower())
        elif isinstance(n, (s.NodePattern, s.EdgePattern)) and n.variable:
            out.add(n.variable.lower())
    return out


def _variables(state: PathState) -> set[str]:
    return {f.name.lower() for f in state.fields if f.relation is None and not f.hidden}


class Components:
    """The path tables of one run of MATCH clauses (see the module docstring)."""

    def __init__(self, binder: Any, base: PathState, start: PathState) -> None:
        self.b = binder
        self.base = base  # what every component starts from (the request row, or nothing)
        self.parts: list[PathState] = [start] if _variables(start) else []
        # The one-table field order: the start's fields, then variables as bound.
        self.start_keys = [_key(f) for f in start.fields]
        self.order: list[str] = [f.name.lower() for f in start.fields if f.relation is None]
        self.waiting: list[s.Expr] = []

    # ------------------------------------------------------------- patterns
    def add_pattern(self, union: s.PatternUnion) -> None:
        names = referenced_names(union)
        touched = [k for k, part in enumerate(self.parts) if names & _variables(part)]
        known = set().union(*(_variables(p) for p in self.parts)) if self.parts else set()
        owner = self._owner(union.paths[0], touched) if len(touched) > 1 else None
        if owner is not None and not self._joinable(union, touched, owner):
            self._merge(touched)
            touched = [len(self.parts) - 1]
            owner = None
        if drops_elements(union):
            # The one-table binding makes every path so far a set after this
            # pattern: the component it extends becomes one as it is bound,
            # the others now (a set extended and made a set again is the same).
            extended = touched[0] if len(touched) == 1 else owner
            self.parts = [p if k == extended else _distinct(p) for k, p in enumerate(self.parts)]
        if not touched:
            state = self.b.bind_pattern_union(self._fresh(), union)
            self.parts.append(state)
        elif len(touched) == 1:
            k = touched[0]
            state = self.b.bind_pattern_union(self.parts[k], union)
            self.parts[k] = state
        else:
            assert owner is not None
            state = self._extend_and_join(union.paths[0], owner, touched)
        self._note_order(state, known)
        self._apply_ready()

    def _joinable(self, union: s.PatternUnion, touched: list[int], owner: int) -> bool:
        """Whether the pattern can extend ``owner`` and be joined with the
        other components it meets: their vertices are matched afresh in the
        owner and joined on id, keeping their own values (LET fields too),
        unless the pattern's own conditions on such a vertex might read what
        only its value has."""
        if len(union.paths) != 1:
            return False
        path = union.paths[0]
        if path.variable:
            return False
        for k in touched:
            part = self.parts[k]
            for e in path.edges:
                if e.variable and part.index_of(e.variable) is not None:
                    return False
            if k == owner:
                continue
            for n in path.nodes:
                idx = part.index_of(n.variable) if n.variable else None
                if (
                    idx is not None
                    and part.fields[idx].type != self.b.vertex_type
                    and (n.where is not None or n.properties)
                ):
                    return False  # may read LET fields a fresh match lacks
        return True

    def _owner(self, path: s.PathPattern, touched: list[int]) -> int:
        """The component the path starts in: the one binding its first bound
        vertex (where the one-table binding would start walking)."""
        return next(
            k
            for n in path.nodes
            if n.variable
            for k in touched
            if self.parts[k].index_of(n.variable) is not None
        )

    def _extend_and_join(self, path: s.PathPattern, owner: int, touched: list[int]) -> PathState:
        state = self.b.bind_path(self.parts[owner], path)
        for k in touched:
            if k != owner:
                state = self._join(state, self.parts[k])
        self.parts = [p for k, p in enumerate(self.parts) if k not in touched] + [state]
        return state

    def _note_order(self, state: PathState, known: set[str]) -> None:
        for f in state.fields:
            name = f.name.lower()
            if f.relation is None and not f.hidden and name not in known | set(self.order):
                self.order.append(name)

    # ---------------------------------------------------------------- WHERE
    def add_where(self, where: s.Expr) -> None:
        self.waiting.append(where)
        self._apply_ready()

    def _apply_ready(self) -> None:
        still = []
        for where in self.waiting:
            names = referenced_names(where)
            touched = [k for k, part in enumerate(self.parts) if names & _variables(part)]
            if len(touched) == 1:
                k = touched[0]
                self.parts[k] = self.b.filter(self.parts[k], where)
            else:
                still.append(where)
        self.waiting = still

    # ------------------------------------------------------------------ end
    def result(self) -> PathState:
        """The run's paths as one table, fields in the one-table order."""
        if not self.parts:
            state = self._fresh()
        else:
            self._merge(list(range(len(self.parts))))
            state = self.parts[0]
        for where in self.waiting:
            state = self.b.filter(state, where)
        self.waiting = []
        return self._reordered(state)

    # -------------------------------------------------------------- helpers
    def _fresh(self) -> PathState:
        return PathState(self.base.node, list(self.base.fields))

    def _merge(self, indexes: list[int]) -> None:
        """Multiply the components ``indexes`` into one (kept last)."""
        chosen = [self.parts[k] for k in indexes]
        state = chosen[0]
        for other in chosen[1:]:
            state = self._join(state, other)
        self.parts = [p for k, p in enumerate(self.parts) if k not in indexes] + [state]
        self._apply_ready()

    def _join(self, left: PathState, right: PathState) -> PathState:
        """Paths of ``left`` and ``right`` agreeing on their shared vertices
        (by id, as a bound variable is met) and request columns; each shared
        field once, as ``right`` had it."""
        assert left.node is not None and right.node is not None
        width = left.width
        shared = []
        terms: list[exp.Expression] = []
        for rf in right.fields:
            lf = field_named(left, rf)
            if lf is None:
                continue
            shared.append(lf.index)
            if rf.relation is not None:
                terms.append(
                    typed(
                        exp.NullSafeEQ(
                            this=ref(lf.index, lf.type), expression=ref(width + rf.index, rf.type)
                        ),
                        T.BOOLEAN,
                    )
                )
            else:
                terms.append(
                    typed(
                        exp.EQ(this=vertex_id(lf, 0), expression=vertex_id(rf, width)),
                        T.BOOLEAN,
                    )
                )
        condition: exp.Expression | None = None
        for term in terms:
            condition = (
                term
                if condition is None
                else typed(exp.And(this=condition, expression=term), T.BOOLEAN)
            )
        joined = Join(
            left.node, right.node, "INNER" if condition is not None else "CROSS", condition
        )
        keep = [f for f in left.fields if f.index not in shared]
        exprs = [ref(f.index, f.type) for f in keep] + [
            ref(width + f.index, f.type) for f in right.fields
        ]
        fields = [
            ScopeField(f.name, f.type, i, f.relation, f.hidden)
            for i, f in enumerate(keep + list(right.fields))
        ]
        node = Project(joined, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
        return PathState(node, fields)

    def _reordered(self, state: PathState) -> PathState:
        assert state.node is not None
        keys = list(self.start_keys)
        keys += [(name, None) for name in self.order if (name, None) not in keys]
        rank = {key: k for k, key in enumerate(keys)}
        ordered = sorted(state.fields, key=lambda f: rank.get(_key(f), len(rank)))
        if [f.index for f in ordered] == list(range(state.width)):
            return state
        exprs = tuple(ref(f.index, f.type) for f in ordered)
        fields = [
            ScopeField(f.name, f.type, i, f.relation, f.hidden) for i, f in enumerate(ordered)
        ]
        node = Project(state.node, exprs, tuple(Field(f.name, f.type) for f in fields))
        return PathState(node, fields)


def _key(f: ScopeField) -> tuple[str, str | None]:
    return (f.name.lower(), f.relation)


def field_named(state: PathState, other: ScopeField) -> ScopeField | None:
    """The field of ``state`` that is ``other`` (same name and relation)."""
    for f in state.fields:
        if f.name.lower() == other.name.lower() and f.relation == other.relation:
            return f
    return None


def _distinct(state: PathState) -> PathState:
    assert state.node is not None
    node: LogicalNode = Aggregate(
        state.node, tuple(range(state.width)), (), state.node.schema, internal=True
    )
    return PathState(node, list(state.fields))
