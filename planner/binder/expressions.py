"""Binding scalar expressions: syntax tree -> typed sqlglot tree over input fields.

Resolution follows GeaFlow: names are case-insensitive, ``t.c`` is a qualified
column when ``t`` is a relation in scope and a field access when ``t`` is a
struct (vertex/edge) value.  Types follow Calcite's rules as GeaFlow uses
them, including Java's integer division.  Aggregates, subqueries and graph
constructs are handed to hooks the query binders install.

(Over 500 lines on purpose: one ``_bind_<Node>`` method per kind of
expression, all in one class, so the dispatch on syntax nodes is one table a
reader can scan; subqueries and graph syntax already live in their hooks.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import (
    DataError,
    GeaflowError,
    TypeMismatchError,
    UnsupportedError,
    ValidationError,
)
from grammar import syntax as s
from planner.dialect import FloatArithmetic, template
from planner.expressions import (
    ARITHMETIC,
    COMPARISONS,
    cast_to,
    literal_for,
    paren,
    ref,
    type_of,
    typed,
)
from planner.functions import FunctionKind, builtin_aggregate, builtin_scalar
from planner.user_functions import (
    BuiltinAlias,
    ScalarUdf,
    UserFunction,
    parse_type_name,
    resolve_function,
)

from .context import BindContext
from .graph_functions import GRAPH_FUNCTIONS, bind_graph_function, compare_elements
from .scope import Scope, ScopeField


class ExprBinder:
    """Binds expressions against one scope.

    ``aggregate_hook`` (set by the SELECT binder) handles aggregate calls and
    group-key matching; ``subquery_hook`` handles ``IN (SELECT ...)``, EXISTS
    and scalar subqueries; ``graph_hook`` handles graph-only syntax (path
    subqueries, ``label()``, vertex comparisons...).
    """

    def __init__(
        self,
        ctx: BindContext,
        scope: Scope,
        *,
        aggregate_hook: Any = None,
        subquery_hook: Any = None,
        graph_hook: Any = None,
        local_relation: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.scope = scope
        self.aggregate_hook = aggregate_hook
        self.subquery_hook = subquery_hook
        self.graph_hook = graph_hook
        # In a node pattern ``(a WHERE id = 1)``, bare names mean fields of ``a``.
        self.local_relation = local_relation

    def derive(self, **changes: Any) -> ExprBinder:
        b = ExprBinder(
            self.ctx,
            changes.get("scope", self.scope),
            aggregate_hook=changes.get("aggregate_hook", self.aggregate_hook),
            subquery_hook=changes.get("subquery_hook", self.subquery_hook),
            graph_hook=changes.get("graph_hook", self.graph_hook),
            local_relation=changes.get("local_relation", self.local_relation),
        )
        return b

    def fail(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

    # ------------------------------------------------------------------ entry
    def bind(self, e: s.Expr) -> exp.Expression:
        if self.aggregate_hook is not None:
            handled = self.aggregate_hook.try_bind(self, e)
            if handled is not None:
                return handled
        method: Callable[[Any], exp.Expression] | None = getattr(
            self, "_bind_" + type(e).__name__, None
        )
        if method is None:
            raise self.fail(UnsupportedError(f"{type(e).__name__} is not supported here"), e)
        try:
            return method(e)
        except GeaflowError as err:
            raise self.fail(err, e) from None

    def bind_condition(self, e: s.Expr) -> exp.Expression:
        bound = self.bind(e)
        t = type_of(bound)
        if t.name not in ("BOOLEAN", "NULL", "ANY"):
            if t.is_string:
                return cast_to(bound, T.BOOLEAN)
            raise self.fail(TypeMismatchError(f"condition must be BOOLEAN, not {t}"), e)
        return bound

    # --------------------------------------------------------------- literals
    def _bind_Literal(self, e: s.Literal) -> exp.Expression:
        if e.kind == "int":
            if not -(2**63) <= int(e.value) < 2**63:
                raise ValidationError(f"integer literal {e.text} is out of the range of BIGINT")
            return literal_for(int(e.value))
        if e.kind == "decimal":
            text = str(e.value)
            negative = text.startswith("-")
            body = text[1:] if negative else text
            if body.startswith("."):
                body = "0" + body
            if body.endswith("."):
                body += "0"
            lit = exp.Literal.number(f"{'-' if negative else ''}{body}D")
            return typed(paren(lit) if negative else lit, T.DOUBLE)
        if e.kind == "string":
            return typed(exp.Literal.string(e.value), T.VARCHAR)
        if e.kind == "bool":
            return typed(exp.Boolean(this=bool(e.value)), T.BOOLEAN)
        return typed(exp.Null(), T.NULL)

    def _bind_Parameter(self, e: s.Parameter) -> exp.Expression:
        params = self.ctx.parameters
        if params is None:
            raise ValidationError("statement has parameters but none were given")
        if e.name is not None:
            if not isinstance(params, dict) or e.name not in params:
                raise ValidationError(f"no value for parameter :{e.name}")
            return _parameter_literal(params[e.name], f":{e.name}")
        if isinstance(params, dict) or e.index >= len(params):
            raise ValidationError(f"no value for parameter {e.index + 1}")
        return _parameter_literal(params[e.index], str(e.index + 1))

    # ------------------------------------------------------------------ names
    def _field_ref(self, f: ScopeField) -> exp.Expression:

        return ref(f.index, f.type)

    def _resolve_name(self, name: str, node: s.Node) -> exp.Expression:
        if self.local_relation is not None and name.lower() != self.local_relation.lower():
            # Inside ``(a WHERE id = 1)`` a bare name is a field of ``a`` first.
            local = [
                f
                for f in self.scope.lookup(self.local_relation)
                if f.relation is None and isinstance(f.type, T.StructType)
            ]
            if local and local[0].type.resolve_field(name) is not None:
                return self._struct_field(self._field_ref(local[0]), name, node)
        found = [f for f in self.scope.lookup(name) if not f.hidden] or self.scope.lookup(name)
        if len(found) == 1:
            return self._field_ref(found[0])
        if len(found) > 1:
            rels = sorted({f.relation or "?" for f in found})
            raise ValidationError(
                f"column {name!r} is ambiguous (it is in {', '.join(rels)}); qualify it"
            )
        if self.graph_hook is not None:
            resolved = self.graph_hook.resolve_unqualified(self, name, node)
            if resolved is not None:
                return resolved
        # Niladic functions may be written without parentheses (PI, CURRENT_DATE).
        spec = builtin_scalar(name)
        if spec is not None and spec.min_args == 0 and name.isupper():
            return self.apply_scalar(spec, [])
        raise ValidationError(f"unknown column {name!r}{self._known_hint()}")

    def _known_hint(self) -> str:
        names = [f.name for f in self.scope.fields if not f.hidden]
        if not names:
            return ""
        shown = ", ".join(names[:12])
        return f" (available: {shown}{', ...' if len(names) > 12 else ''})"

    def _bind_Column(self, e: s.Column) -> exp.Expression:
        return self._resolve_name(e.name, e)

    def _struct_field(self, base: exp.Expression, name: str, node: s.Node) -> exp.Expression:
        t = type_of(base)
        if not isinstance(t, T.StructType):
            raise ValidationError(f"cannot read field {name!r} of a {t} value")
        stored = t.resolve_field(name)
        if stored is None:
            if t.is_graph:
                # GeaFlow: a property that only some labels have reads as null elsewhere.
                if self.graph_hook is not None and name.lower() in self.graph_hook.known_properties(
                    t
                ):
                    return typed(exp.Null(), self.graph_hook.property_type(t, name))
                labels = "|".join(t.labels)
                raise ValidationError(f"{t.kind.lower()} {labels or ''} has no field {name!r}")
            raise ValidationError(f"no field {name!r} in {t}")
        field_type = t.field_type(stored)
        quoted = not stored.isidentifier() or stored.startswith("~")
        del quoted
        return typed(
            exp.Dot(this=base, expression=exp.Identifier(this=stored, quoted=True)), field_type
        )

    def _bind_Field(self, e: s.Field) -> exp.Expression:
        base = e.base
        if isinstance(base, s.Column):
            qualified = self.scope.lookup_qualified(base.name, e.name)
            is_relation = self.scope.has_relation(base.name)
            if qualified and is_relation:
                visible = [f for f in qualified if not f.hidden] or qualified
                if len(visible) > 1:
                    raise ValidationError(f"column {base.name}.{e.name} is ambiguous")
                return self._field_ref(visible[0])
            if is_relation and not self.scope.lookup(base.name):
                raise ValidationError(
                    f"unknown column {e.name!r} in {base.name!r}" + self._relation_hint(base.name)
                )
            if self.graph_hook is not None:
                resolved = self.graph_hook.resolve_field(self, base.name, e.name, e)
                if resolved is not None:
                    return resolved
        bound_base = self.bind(base)
        return self._struct_field(bound_base, e.name, e)

    def _relation_hint(self, relation: str) -> str:
        names = [f.name for f in self.scope.relation_fields(relation)]
        return f" (it has: {', '.join(names[:12])})" if names else ""

    def _bind_Subscript(self, e: s.Subscript) -> exp.Expression:
        base = self.bind(e.base)
        index = self.bind(e.index)
        t = type_of(base)
        if isinstance(t, T.ArrayType):
            # GeaFlow arrays index from 0 like Java.
            return typed(template("try_element_at({0}, {1} + 1)", base, index), t.element)
        if isinstance(t, T.MapType):
            return typed(template("try_element_at({0}, {1})", base, index), t.value)
        raise ValidationError(f"cannot index a {t} value")

    def _bind_Star(self, e: s.Star) -> exp.Expression:
        raise ValidationError("* is only allowed in a select list or COUNT(*)")

    # --------------------------------------------------------------- operators
    def _bind_Unary(self, e: s.Unary) -> exp.Expression:
        if e.op == "NOT":
            return typed(exp.Not(this=paren(self.bind_condition(e.operand))), T.BOOLEAN)
        operand = self.bind(e.operand)
        t = type_of(operand)
        if t.is_string:
            operand = cast_to(operand, T.DOUBLE)
            t = T.DOUBLE
        if not (t.is_numeric or t.name in ("NULL", "ANY")):
            raise TypeMismatchError(f"cannot negate a {t} value")
        if e.op == "-":
            return typed(
                exp.Neg(this=paren(operand) if not isinstance(operand, exp.Column) else operand), t
            )
        return operand

    def _bind_Binary(self, e: s.Binary) -> exp.Expression:
        if e.op in ("AND", "OR"):
            left = self.bind_condition(e.left)
            right = self.bind_condition(e.right)
            cls = exp.And if e.op == "AND" else exp.Or
            return typed(cls(this=paren(left), expression=paren(right)), T.BOOLEAN)
        left = self.bind(e.left)
        right = self.bind(e.right)
        if e.op in COMPARISONS:
            return self.compare(e.op, left, right, e)
        if e.op in ("IS DISTINCT FROM", "IS NOT DISTINCT FROM"):
            # Null-safe comparison: two nulls are not distinct, null and a value are.
            same = self.compare("=", left, right, e)
            node: exp.Expression = exp.NullSafeEQ(this=same.this, expression=same.expression)
            if e.op == "IS DISTINCT FROM":
                node = exp.Not(this=exp.Paren(this=node))
            return typed(node, T.BOOLEAN)
        if e.op == "||":
            return typed(
                exp.DPipe(
                    this=cast_to(left, T.VARCHAR), expression=cast_to(right, T.VARCHAR), safe=True
                ),
                T.VARCHAR,
            )
        return self.arithmetic(e.op, left, right)

    def arithmetic(self, op: str, left: exp.Expression, right: exp.Expression) -> exp.Expression:
        lt, rt = type_of(left), type_of(right)
        result = T.arithmetic_type(op, lt, rt)
        if result is None:
            if op in ("+", "-") and lt.name in ("DATE", "TIMESTAMP") and rt.is_integer:
                fn = "date_add" if op == "+" else "date_sub"
                return typed(exp.Anonymous(this=fn, expressions=[left, right]), T.DATE)
            raise TypeMismatchError(f"cannot apply {op} to {lt} and {rt}")
        if lt.is_string:
            left = cast_to(left, result)
        if rt.is_string:
            right = cast_to(right, result)
        if op == "/" and result.is_integer:
            # Java integer division truncates toward zero, like Spark's DIV.
            return cast_to(
                typed(exp.IntDiv(this=paren(left), expression=paren(right)), T.BIGINT), result
            )
        if op in ("/", "%") and result.name in ("DOUBLE", "FLOAT"):
            # Java's floating point, not Spark's NULL, by a zero.
            return typed(FloatArithmetic(this=left, expression=right, op=op), result)
        node: Any = ARITHMETIC[op](this=paren(left), expression=paren(right))
        return typed(node, result)

    def compare(
        self, op: str, left: exp.Expression, right: exp.Expression, node: s.Node
    ) -> exp.Expression:
        lt, rt = type_of(left), type_of(right)
        if isinstance(lt, T.StructType) or isinstance(rt, T.StructType):
            return compare_elements(self, op, left, right, node)
        common = T.common_type(lt, rt)
        if common is None:
            raise TypeMismatchError(f"cannot compare {lt} with {rt}")
        left = cast_to(left, common) if lt.name != "NULL" else left
        right = cast_to(right, common) if rt.name != "NULL" else right
        cmp: Any = COMPARISONS[op](this=paren(left), expression=paren(right))
        return typed(cmp, T.BOOLEAN)

    def _bind_IsTest(self, e: s.IsTest) -> exp.Expression:
        operand = self.bind(e.operand)
        if e.what == "NULL":
            test: exp.Expression = exp.Is(this=paren(operand), expression=exp.Null())
        else:
            cond = cast_to(operand, T.BOOLEAN) if type_of(operand).is_string else operand
            test = exp.Is(this=paren(cond), expression=exp.Boolean(this=e.what == "TRUE"))
        if e.negated:
            test = exp.Not(this=exp.Paren(this=test))
        return typed(test, T.BOOLEAN)

    def _bind_Like(self, e: s.Like) -> exp.Expression:
        operand = cast_to(self.bind(e.operand), T.VARCHAR)
        pattern = cast_to(self.bind(e.pattern), T.VARCHAR)
        if e.escape is not None:
            esc = self.bind(e.escape)
            node: exp.Expression = exp.Escape(
                this=exp.Like(this=paren(operand), expression=pattern), expression=esc
            )
        else:
            node = exp.Like(this=paren(operand), expression=pattern)
        if e.negated:
            node = exp.Not(this=exp.Paren(this=node))
        return typed(node, T.BOOLEAN)

    def _bind_InList(self, e: s.InList) -> exp.Expression:
        operand = self.bind(e.operand)
        items = [self.bind(i) for i in e.items]
        common = type_of(operand)
        for it in items:
            c = T.common_type(common, type_of(it))
            if c is None:
                raise TypeMismatchError(f"IN list mixes {common} and {type_of(it)}")
            common = c
        operand = cast_to(operand, common) if type_of(operand).name != "NULL" else operand
        items = [cast_to(i, common) if type_of(i).name != "NULL" else i for i in items]
        node: exp.Expression = exp.In(this=paren(operand), expressions=items)
        if e.negated:
            node = exp.Not(this=exp.Paren(this=node))
        return typed(node, T.BOOLEAN)

    def _bind_Between(self, e: s.Between) -> exp.Expression:
        operand = self.bind(e.operand)
        low = self.bind(e.low)
        high = self.bind(e.high)
        common = T.common_type(
            T.common_type(type_of(operand), type_of(low)) or T.ANY, type_of(high)
        )
        if common is None:
            raise TypeMismatchError("BETWEEN bounds do not match the value's type")
        node: exp.Expression = exp.Between(
            this=paren(cast_to(operand, common)),
            low=cast_to(low, common),
            high=cast_to(high, common),
        )
        if e.negated:
            node = exp.Not(this=exp.Paren(this=node))
        return typed(node, T.BOOLEAN)

    def _bind_Case(self, e: s.Case) -> exp.Expression:
        operand = self.bind(e.operand) if e.operand is not None else None
        conds: list[exp.Expression] = []
        values: list[exp.Expression] = []
        for when, then in e.whens:
            if operand is not None:
                conds.append(self.compare("=", operand, self.bind(when), when))
            else:
                conds.append(self.bind_condition(when))
            values.append(self.bind(then))
        default = self.bind(e.default) if e.default is not None else None
        result = T.NULL
        for v in values + ([default] if default is not None else []):
            c = T.common_type(result, type_of(v))
            if c is None:
                raise TypeMismatchError(f"CASE branches mix {result} and {type_of(v)}")
            result = c
        if result.name == "NULL":
            result = T.VARCHAR
        ifs = [exp.If(this=c, true=cast_to(v, result)) for c, v in zip(conds, values, strict=True)]
        node = exp.Case(ifs=ifs, default=cast_to(default, result) if default is not None else None)
        return typed(node, result)

    def _bind_Cast(self, e: s.Cast) -> exp.Expression:
        operand = self.bind(e.operand)
        target = self.resolve_type(e.type)
        if type_of(operand).name == "DATE" and target.name == "VARCHAR":
            return cast_to(operand, target)
        return (
            cast_to(operand, target)
            if type_of(operand) != target
            else typed(
                exp.Cast(
                    this=operand, to=exp.DataType.build(T.spark_sql_type(target), dialect="spark")
                ),
                target,
            )
        )

    def resolve_type(self, t: s.TypeName) -> Any:
        try:
            args = tuple(self.resolve_type(a) for a in t.args)
            return T.type_from_name(t.name, t.params, args)
        except ValidationError as err:
            raise self.fail(err, t) from None

    # --------------------------------------------------------------- functions
    def _bind_FunctionCall(self, e: s.FunctionCall) -> exp.Expression:
        name = e.name
        if self.graph_hook is not None:
            handled = self.graph_hook.bind_function(self, e)
        else:
            handled = bind_graph_function(self, e)
        if handled is not None:
            return handled
        resolved = self.resolve_function(name, e)
        if isinstance(resolved, UserFunction):
            if resolved.kind is FunctionKind.SCALAR:
                return self._bind_user_scalar(resolved, e)
            if resolved.kind is FunctionKind.AGGREGATE:
                raise ValidationError(f"aggregate function {name}() is not allowed here")
            raise ValidationError(f"table function {name}() can only be used in LATERAL TABLE(...)")
        builtin = resolved.builtin if isinstance(resolved, BuiltinAlias) else name
        if builtin.lower() != name.lower() and builtin.lower() in GRAPH_FUNCTIONS:
            # A name for one of GeaFlow's graph element functions (its class).
            return self._bind_FunctionCall(replace(e, name=builtin))
        spec = builtin_scalar(builtin)
        if spec is None:
            if builtin_aggregate(builtin) is not None:
                raise ValidationError(f"aggregate function {name}() is not allowed here")
            raise ValidationError(f"unknown function {name}()")
        if e.star or e.distinct:
            raise ValidationError(f"{name}() does not take {'*' if e.star else 'DISTINCT'}")
        if not spec.accepts(len(e.args)):
            raise ValidationError(
                f"{name}() takes {spec.arity_text()} argument"
                f"{'' if spec.arity_text() == '1' else 's'}, got {len(e.args)}"
            )
        args = [self.bind(a) for a in e.args]
        return self.apply_scalar(spec, args)

    def apply_scalar(self, spec: Any, args: list[exp.Expression]) -> exp.Expression:
        if spec.arg_types is not None:
            targets = spec.arg_types([type_of(a) for a in args])
            args = [
                cast_to(a, t) if t is not None else a for a, t in zip(args, targets, strict=False)
            ]
        types = [type_of(a) for a in args]
        result = spec.result(types)
        if callable(spec.spark):
            node = spec.spark(args, types)
        else:
            node = exp.Anonymous(this=spec.spark, expressions=args)
        return typed(node, result)

    def resolve_function(self, name: str, node: s.Node) -> Any:
        """A catalog function (user or alias), or the name itself for built-ins."""
        info = self.ctx.catalog.function(name)
        if info is None:
            return name
        if info.implementation is not None:
            return info.implementation
        return resolve_function(info)

    def _bind_user_scalar(self, fn: UserFunction, e: s.FunctionCall) -> exp.Expression:
        args = [self.bind(a) for a in e.args]
        arg_types = [str(type_of(a)) for a in args]
        try:
            result_name = (
                fn.instance.result_type(arg_types)
                if hasattr(fn.instance, "result_type")
                else getattr(fn.instance, "return_type", "VARCHAR")
            )
            result = parse_type_name(result_name) if isinstance(result_name, str) else result_name
        except Exception as err:  # user code
            raise ValidationError(
                f"function {fn.name}() could not give its result type: {err}"
            ) from None
        udf = ScalarUdf(fn, result, len(args))
        self.ctx.scalar_udfs[udf.spark_name] = udf
        return typed(exp.Anonymous(this=udf.spark_name, expressions=args), result)

    # -------------------------------------------------------------- subqueries
    def _bind_ScalarSubquery(self, e: s.ScalarSubquery) -> exp.Expression:
        if self.subquery_hook is None:
            raise UnsupportedError("a subquery is not allowed here")
        return self.subquery_hook.scalar(self, e)

    def _bind_InQuery(self, e: s.InQuery) -> exp.Expression:
        if self.subquery_hook is None and self.graph_hook is not None:
            return self.graph_hook.in_query(self, e)
        if self.subquery_hook is None:
            raise UnsupportedError("IN (subquery) is not allowed here")
        return self.subquery_hook.in_query(self, e)

    def _bind_Exists(self, e: s.Exists) -> exp.Expression:
        if e.path is not None:
            if self.graph_hook is None:
                raise ValidationError("EXISTS over a path pattern needs a graph (inside MATCH)")
            return self.graph_hook.exists_path(self, e)
        if e.query is None:
            raise ValidationError("EXISTS needs a subquery or a path pattern")
        if self.subquery_hook is None:
            raise UnsupportedError("EXISTS (subquery) is not allowed here")
        return self.subquery_hook.exists(self, e)

    # ------------------------------------------------------------------ graph
    def _bind_PathFunction(self, e: s.PathFunction) -> exp.Expression:
        if self.graph_hook is None:
            raise ValidationError(f"{e.name}(path => value) is only allowed inside MATCH")
        return self.graph_hook.path_function(self, e)

    def _bind_PathExpr(self, e: s.PathExpr) -> exp.Expression:
        path = e.path
        # ``(x) - (y)`` written as arithmetic reads like an undirected path.
        if (
            len(path.elements) == 3
            and isinstance(path.elements[1], s.EdgePattern)
            and path.elements[1].direction == "BOTH"
            and path.elements[1].variable is None
            and not path.elements[1].labels
            and path.elements[1].label_expr is None
            and path.elements[1].where is None
            and path.elements[1].min_hops == 1
            and path.elements[1].max_hops == 1
            and all(
                isinstance(n, s.NodePattern)
                and n.variable
                and not n.labels
                and n.label_expr is None
                and n.where is None
                for n in (path.elements[0], path.elements[2])
            )
            and (
                self.graph_hook is None
                or not self.graph_hook.is_path_variable(path.elements[0].variable)
            )  # type: ignore[union-attr]
        ):
            left = self.bind(s.Column(path.elements[0].variable, span=path.elements[0].span))  # type: ignore[union-attr, arg-type]
            right = self.bind(s.Column(path.elements[2].variable, span=path.elements[2].span))  # type: ignore[union-attr, arg-type]
            return self.arithmetic("-", left, right)
        raise ValidationError("a path pattern is only allowed after EXISTS or inside an aggregate")


def _parameter_literal(value: Any, label: str) -> exp.Expression:
    """A bound value as a typed literal; a DataError for a value no column
    type holds (an int outside BIGINT, a Decimal that is not finite or has
    more than 38 digits), rather than a string or a failure in Spark."""
    import decimal

    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise DataError(f"parameter {label} is outside BIGINT; bind it as a Decimal or a str")
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise DataError(
                f"parameter {label} is Decimal({str(value)!r}); DECIMAL holds finite numbers only"
            )
        _, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        if max(len(digits) + max(0, exponent), -exponent) > 38:
            raise DataError(f"parameter {label} needs more than the 38 digits DECIMAL holds")
    return literal_for(value)
