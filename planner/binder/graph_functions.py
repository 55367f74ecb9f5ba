"""Functions of vertex and edge values, usable wherever such values are.

``label(x)``, ``id(v)``, ``srcId(e)``, ``targetId(e)``, ``direction(e)``,
``ts(e)`` and ``IS_[NOT_]SOURCE_OF(v, e)`` / ``IS_[NOT_]DESTINATION_OF(v, e)``
work inside MATCH and in SQL over a MATCH's result alike.  Vertices compare by
id and edges by (source, target, label), as in GeaFlow.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError, ValidationError
from grammar import syntax as s
from planner.expressions import COMPARISONS, and_all, cast_to, type_of, typed
from planner.functions.graph_names import GRAPH_FUNCTIONS, PATH_FUNCTIONS

from .path_values import cost_field, is_path, path_function


def _element(binder: Any, e: s.Expr, kind: str | None = None) -> exp.Expression:
    bound = binder.bind(e)
    t = type_of(bound)
    if not (isinstance(t, T.StructType) and t.is_graph and (kind is None or t.kind == kind)):
        want = kind.lower() if kind else "vertex or edge"
        raise ValidationError(f"expected a {want}, got {t}")
    return bound


def meta(bound: exp.Expression, name: str) -> exp.Expression:
    t = type_of(bound)
    return typed(
        exp.Dot(this=bound, expression=exp.Identifier(this=name, quoted=True)), t.field_type(name)
    )


def bind_graph_function(binder: Any, e: s.FunctionCall) -> exp.Expression | None:
    """The bound call, or None when ``e`` is not a graph function call."""
    name = e.name.lower()
    if name == "path_cost" and len(e.args) == 1 and isinstance(e.args[0], s.Column):
        cost = _path_cost(binder, e.args[0])
        if cost is not None:
            return cost  # (else a function of that name, if there is one)
    if name in PATH_FUNCTIONS and len(e.args) == 1 and isinstance(e.args[0], s.Column):
        found = path_function(name, binder.bind(e.args[0]))
        if found is not None:
            return found  # (else length() of a string, or a function of that name)
    if name not in GRAPH_FUNCTIONS:
        return None
    n = len(e.args)
    if name == "label" and n == 1:
        return meta(_element(binder, e.args[0]), T.LABEL_FIELD)
    if name == "id" and n == 1:
        return meta(_element(binder, e.args[0], "VERTEX"), T.VERTEX_ID_FIELD)
    if name in ("srcid", "source_id") and n == 1:
        return meta(_element(binder, e.args[0], "EDGE"), T.EDGE_SRC_FIELD)
    if name in ("targetid", "target_id") and n == 1:
        return meta(_element(binder, e.args[0], "EDGE"), T.EDGE_DST_FIELD)
    if name == "direction" and n == 1:
        return meta(_element(binder, e.args[0], "EDGE"), T.EDGE_DIRECTION_FIELD)
    if name == "ts" and n == 1:
        edge = _element(binder, e.args[0], "EDGE")
        if type_of(edge).field_type(T.EDGE_TS_FIELD) is None:
            raise ValidationError("this edge has no TIMESTAMP column")
        return meta(edge, T.EDGE_TS_FIELD)
    roles = {
        "is_source_of": (T.EDGE_SRC_FIELD, False),
        "is_not_source_of": (T.EDGE_SRC_FIELD, True),
        "is_destination_of": (T.EDGE_DST_FIELD, False),
        "is_not_destination_of": (T.EDGE_DST_FIELD, True),
    }
    if name in roles and n == 2:
        vertex = _element(binder, e.args[0], "VERTEX")
        edge = _element(binder, e.args[1], "EDGE")
        field_name, negated = roles[name]
        vid = meta(vertex, T.VERTEX_ID_FIELD)
        end = meta(edge, field_name)
        common = T.common_type(type_of(vid), type_of(end)) or T.VARCHAR
        cond: exp.Expression = exp.EQ(this=cast_to(vid, common), expression=cast_to(end, common))
        if negated:
            cond = exp.Not(this=exp.Paren(this=cond))
        return typed(cond, T.BOOLEAN)
    if name in ("is_labeled", "is_not_labeled") and n == 2:
        # GeaFlow's IsLabeled / IsNotLabeled: the element's label is the name.
        element = _element(binder, e.args[0])
        label = binder.bind(e.args[1])
        cond = exp.EQ(this=meta(element, T.LABEL_FIELD), expression=cast_to(label, T.VARCHAR))
        if name == "is_not_labeled":
            cond = exp.Not(this=exp.Paren(this=cond))
        return typed(cond, T.BOOLEAN)
    if name == "property_exists" and n == 2:
        return _property_exists(binder, e)
    if name in ("id", "label", "ts", "direction"):
        return None  # e.g. a user function of that name with other arguments
    two = name in roles or name in ("is_labeled", "is_not_labeled", "property_exists")
    raise ValidationError(f"{e.name}() takes {'2' if two else '1'} argument(s), got {n}")


def _path_cost(binder: Any, arg: s.Column) -> exp.Expression | None:
    """``path_cost(p)``: the cost of path ``p`` under the CHEAPEST search that
    matched it (the hidden field the path pattern added); None when ``p`` is
    no path."""
    if not is_path(type_of(binder.bind(arg))):
        return None
    try:
        return binder.bind(s.Column(cost_field(arg.name), span=arg.span))  # type: ignore[no-any-return]
    except GeaflowError:
        raise ValidationError(
            f"path {arg.name!r} has no cost: path_cost() reads the cost of a path matched by "
            "a CHEAPEST search (ANY CHEAPEST, ALL CHEAPEST, CHEAPEST k), in the query that "
            "matches it"
        ) from None


def _property_exists(binder: Any, e: s.FunctionCall) -> exp.Expression:
    """Does the element have the named property: NULL for a NULL element.

    GeaFlow's PropertyExists answers TRUE for every non-null element whatever
    the name; here the answer is whether the element's label declares the
    property, so a misspelt or other-label property answers FALSE."""
    element = _element(binder, e.args[0])
    name_expr = e.args[1]
    if not isinstance(name_expr, s.Literal) or not isinstance(name_expr.value, str):
        raise ValidationError("property_exists() takes a property name as a string literal")
    wanted = name_expr.value.lower()
    t = type_of(element)
    hook = getattr(binder, "graph_hook", None)
    graph = getattr(getattr(hook, "gb", None), "graph", None)
    tables = () if graph is None else (graph.vertices if t.kind == "VERTEX" else graph.edges)
    declared = {
        table.label
        for table in tables
        if (not t.labels or table.label in t.labels)
        and any(c.name.lower() == wanted for c in table.fields)
    }
    if graph is None:
        answer: exp.Expression = exp.Boolean(this=t.resolve_field(name_expr.value) is not None)
    elif not declared:
        answer = exp.Boolean(this=False)
    else:
        answer = exp.In(
            this=meta(element, T.LABEL_FIELD),
            expressions=[exp.Literal.string(label) for label in sorted(declared)],
        )
    cond = exp.If(
        this=exp.Is(this=element, expression=exp.Null()),
        true=exp.Null(),
        false=answer,
    )
    return typed(cond, T.BOOLEAN)


def compare_elements(
    binder: Any, op: str, left: exp.Expression, right: exp.Expression, node: s.Node
) -> exp.Expression:
    lt, rt = type_of(left), type_of(right)
    if not (isinstance(lt, T.StructType) and isinstance(rt, T.StructType) and lt.kind == rt.kind):
        raise ValidationError(f"cannot compare {lt} with {rt}")
    keys = (
        [T.VERTEX_ID_FIELD]
        if lt.kind == "VERTEX"
        else [T.EDGE_SRC_FIELD, T.EDGE_DST_FIELD, T.LABEL_FIELD]
    )
    if lt.kind not in ("VERTEX", "EDGE"):
        keys = [f.name for f in lt.fields]
    if op in ("=", "<>"):
        parts = [
            typed(exp.EQ(this=meta(left, k), expression=meta(right, k)), T.BOOLEAN) for k in keys
        ]
        cond = and_all(parts)
        assert cond is not None
        if op == "<>":
            cond = typed(exp.Not(this=exp.Paren(this=cond)), T.BOOLEAN)
        return cond
    if len(keys) == 1:
        return binder.compare(op, meta(left, keys[0]), meta(right, keys[0]), node)

    lk = exp.Anonymous(this="struct", expressions=[meta(left, k) for k in keys])
    rk = exp.Anonymous(this="struct", expressions=[meta(right, k) for k in keys])
    cmp: Any = COMPARISONS[op](this=lk, expression=rk)
    return typed(cmp, T.BOOLEAN)
