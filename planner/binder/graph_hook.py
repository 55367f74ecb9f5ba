"""Graph syntax inside expressions: path variables, graph functions, vertex
comparison, EXISTS over a path and path aggregates (``COUNT((a)->(b) => b.id)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ValidationError
from grammar import syntax as s
from planner.expressions import and_all, cast_to, literal_for, ref, type_of, typed
from planner.logical import (
    AggCall,
    Aggregate,
    Field,
    Join,
    Project,
)

from .expressions import ExprBinder
from .paths import PathState, _hidden
from .scope import ScopeField

if TYPE_CHECKING:
    from .graph import GraphQueryBinder


_AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX"}


class GraphHook:
    """Resolves graph-only expressions while one clause is bound.

    Path subqueries add columns to ``state.node`` (appended on the right, so
    existing references stay valid); the clause's binder reads them.
    """

    def __init__(self, gb: GraphQueryBinder, state: PathState) -> None:
        self.gb = gb
        self.state = state

    # Names -------------------------------------------------------------------
    def is_path_variable(self, name: str) -> bool:
        return self.state.index_of(name) is not None

    def known_properties(self, t: Any) -> set[str]:
        return set()

    def property_type(self, t: Any, name: str) -> Any:
        return T.VARCHAR

    def resolve_unqualified(
        self, binder: ExprBinder, name: str, node: s.Node
    ) -> exp.Expression | None:
        """A bare name that is a property of exactly one path variable."""
        owners = []
        for f in binder.scope.fields:
            if f.relation is None and isinstance(f.type, T.StructType) and f.type.is_graph:
                stored = f.type.resolve_field(name)
                if stored is not None:
                    owners.append((f, stored))
        visible = [o for o in owners if not o[0].hidden] or owners
        if len(visible) == 1:
            f, stored = visible[0]
            return typed(
                exp.Dot(
                    this=ref(f.index, f.type), expression=exp.Identifier(this=stored, quoted=True)
                ),
                f.type.field_type(stored),
            )
        if len(visible) > 1:
            names = ", ".join(o[0].name for o in visible)
            raise ValidationError(
                f"{name!r} is ambiguous: it is a field of {names}; write var.{name}"
            )
        return None

    def resolve_field(
        self, binder: ExprBinder, base: str, name: str, node: s.Node
    ) -> exp.Expression | None:
        return None

    # Functions -----------------------------------------------------------------
    def bind_function(self, binder: ExprBinder, e: s.FunctionCall) -> exp.Expression | None:
        from .graph_functions import bind_graph_function

        return bind_graph_function(binder, e)

    def compare_elements(
        self, binder: ExprBinder, op: str, left: exp.Expression, right: exp.Expression, node: s.Node
    ) -> exp.Expression:
        from .graph_functions import compare_elements

        return compare_elements(binder, op, left, right, node)

    # Subqueries -----------------------------------------------------------------
    def in_query(self, binder: ExprBinder, e: s.InQuery) -> exp.Expression:
        """``x IN (subquery)`` (or ``x IN t``) in a graph clause: the subquery
        is joined to the paths as in SQL, its columns appended hidden."""
        from .subqueries import SubqueryHook

        state = self.state
        assert state.node is not None
        sub = SubqueryHook(self.gb.qb, state.node, binder.scope)
        found = sub.in_query(binder, e)
        appended = [
            ScopeField(_hidden("in"), f.type, i, None, True)
            for i, f in enumerate(sub.node.schema)
            if i >= state.width
        ]
        self.state = PathState(sub.node, list(state.fields) + appended)
        binder.scope = self.state.scope()
        return found

    # Path subqueries -------------------------------------------------------------
    def exists_path(self, binder: ExprBinder, e: s.Exists) -> exp.Expression:
        assert e.path is not None
        count = self._path_aggregate(binder, e.path, None, "COUNT", e)
        return typed(exp.GT(this=count, expression=exp.Literal.number(0)), T.BOOLEAN)

    def path_function(self, binder: ExprBinder, e: s.PathFunction) -> exp.Expression:
        name = e.name.upper()
        if name not in _AGGREGATES:
            raise ValidationError(
                f"{e.name}(path => value) is not an aggregate (use COUNT, SUM, AVG, MIN or MAX)"
            )
        return self._path_aggregate(binder, e.path, e.value, name, e)

    def _path_aggregate(
        self,
        binder: ExprBinder,
        path: s.PathPattern,
        value: s.Expr | None,
        function: str,
        at: s.Node,
    ) -> exp.Expression:
        """Aggregate a value over the paths matching ``path`` from each current row.

        The subquery only depends on the fields it reads, so it is evaluated
        once per distinct combination of them and joined back.
        """
        gb = self.gb
        state = self.state
        first = path.elements[0] if path.elements else None
        if (
            not isinstance(first, s.NodePattern)
            or not first.variable
            or state.index_of(first.variable) is None
        ):
            raise ValidationError("a path subquery must start at a variable of the enclosing MATCH")
        # The subquery reads the start variable and whatever else it names.
        named = _names_in(path) | (_names_in(value) if value is not None else set())
        start_idx = state.index_of(first.variable)
        assert start_idx is not None
        keys = sorted(
            {start_idx}
            | {
                f.index
                for f in state.fields
                if not f.hidden
                and ((f.relation or f.name).lower() in named or f.name.lower() in named)
            }
        )
        # Pass 2: from the distinct values of those fields.
        assert state.node is not None
        key_fields = [state.fields[i] for i in keys]
        key_project = Project(
            state.node,
            tuple(ref(f.index, f.type) for f in key_fields),
            tuple(Field(f.name, f.type) for f in key_fields),
        )
        distinct = Aggregate(
            key_project, tuple(range(len(keys))), (), key_project.schema, internal=True
        )
        base = PathState(
            distinct,
            [ScopeField(f.name, f.type, i, f.relation, f.hidden) for i, f in enumerate(key_fields)],
        )
        sub, sub_value = self._expand_sub(base, path, value)
        assert sub.node is not None
        k = len(keys)
        if sub_value is not None:
            # The value is carried along so set semantics cannot drop it.
            carrier = ScopeField("$value", type_of(sub_value), sub.width, None, False)
            sub = PathState(
                Project(
                    sub.node,
                    tuple([ref(f.index, f.type) for f in sub.fields] + [sub_value]),
                    tuple(
                        [Field(f.name, f.type) for f in sub.fields]
                        + [Field("$value", type_of(sub_value))]
                    ),
                ),
                list(sub.fields) + [carrier],
            )
        sub = gb.distinct_paths(sub)
        if sub_value is not None:
            sub_value = ref(sub.width - 1, type_of(sub_value))
        if sub_value is None:
            sub_value = typed(exp.Literal.number(1), T.INTEGER)
        vt = type_of(sub_value)
        assert sub.node is not None
        pre = Project(
            sub.node,
            tuple([ref(i, f.type) for i, f in enumerate(key_fields)] + [sub_value]),
            tuple([Field(f.name, f.type) for f in key_fields] + [Field("$value", vt)]),
        )
        if function == "COUNT":
            result_type: Any = T.BIGINT
            call = AggCall("COUNT", (k,), False, T.BIGINT)
        elif function == "AVG":
            result_type = T.DOUBLE
            call = AggCall("AVG", (k,), False, T.DOUBLE)
        elif function == "SUM":
            result_type = T.DOUBLE if vt.is_approx or vt.name == "DECIMAL" else T.BIGINT
            if not vt.is_numeric and vt.name not in ("NULL", "ANY"):
                raise ValidationError(f"SUM over a path needs a numeric value, not {vt}")
            call = AggCall("SUM", (k,), False, result_type)
        else:
            result_type = vt
            call = AggCall(function, (k,), False, vt)
        agg = Aggregate(
            pre,
            tuple(range(k)),
            (call,),
            tuple(Field(f.name, f.type) for f in key_fields) + (Field("$agg", result_type),),
            internal=True,
        )
        width = state.width
        conds = []
        for pos, f in enumerate(key_fields):
            conds.append(
                typed(
                    exp.NullSafeEQ(this=ref(f.index, f.type), expression=ref(width + pos, f.type)),
                    T.BOOLEAN,
                )
            )
        joined = Join(state.node, agg, "LEFT", and_all(conds))
        # Keep only the aggregate among the appended columns.
        exprs = [ref(f.index, f.type) for f in state.fields] + [ref(width + k, result_type)]
        agg_name = _hidden("agg")
        fields = list(state.fields) + [ScopeField(agg_name, result_type, width, None, True)]
        node = Project(joined, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
        self.state = PathState(node, fields)
        binder.scope = self.state.scope()
        result = ref(width, result_type)
        if function in ("COUNT", "SUM"):
            zero = (
                literal_for(0)
                if function == "COUNT" or result_type.is_integer
                else literal_for(0.0)
            )
            result = typed(
                exp.Coalesce(this=result, expressions=[cast_to(zero, result_type)]), result_type
            )
        return result

    def _expand_sub(
        self, state: PathState, path: s.PathPattern, value: s.Expr | None
    ) -> tuple[PathState, exp.Expression | None]:
        gb = self.gb
        saved = gb.global_fields
        sub = gb.bind_path(state, path)
        gb.global_fields = saved
        bound = None
        if value is not None:
            sub_hook = GraphHook(gb, sub)
            bound = ExprBinder(gb.ctx, sub.scope(), graph_hook=sub_hook).bind(value)
            sub = sub_hook.state
        return sub, bound


def _names_in(node: Any) -> set[str]:
    """Every name a syntax tree mentions (columns, qualifiers, variables), lower-cased."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, s.Column):
            out.add(n.name.lower())
        elif isinstance(n, (s.NodePattern, s.EdgePattern)) and n.variable:
            out.add(n.variable.lower())
        if isinstance(n, s.Node):
            for name in getattr(n, "__dataclass_fields__", {}):
                if name == "span":
                    continue
                v = getattr(n, name)
                if isinstance(v, s.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    for item in v:
                        if isinstance(item, s.Node):
                            stack.append(item)
                        elif isinstance(item, tuple):
                            stack.extend(x for x in item if isinstance(x, s.Node))
    return out
