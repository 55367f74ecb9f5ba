"""Binding in an aggregating SELECT (or RETURN): group keys and aggregate calls.

While the select list, HAVING and ORDER BY of an aggregating query are bound,
this hook intercepts aggregate calls (binding their arguments against the
input) and any sub-expression equal to a GROUP BY key.  The planner then
builds: Project(keys + call arguments) -> Aggregate -> the bound expressions,
which refer to the aggregate's output (keys first, then calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError, ValidationError
from grammar import syntax as s
from planner.expressions import copy_typed, input_refs, ref, type_of
from planner.functions import FunctionKind, builtin_aggregate
from planner.logical import AggCall
from planner.user_functions import BuiltinAlias, UserFunction, parse_type_name

from .constants import constant_value


def is_aggregate_name(binder: Any, name: str) -> bool:
    resolved = binder.resolve_function(name, None)
    if isinstance(resolved, UserFunction):
        return resolved.kind is FunctionKind.AGGREGATE
    if isinstance(resolved, BuiltinAlias):
        return resolved.kind is FunctionKind.AGGREGATE
    return builtin_aggregate(name) is not None


def contains_aggregate(binder: Any, e: Any) -> bool:
    """Does a syntax expression hold an aggregate call (outside subqueries)?"""
    if isinstance(e, s.FunctionCall):
        try:
            if is_aggregate_name(binder, e.name):
                return True
        except GeaflowError:
            pass
        return any(contains_aggregate(binder, a) for a in e.args)
    if isinstance(e, (s.ScalarSubquery, s.InQuery, s.Exists, s.PathFunction, s.PathExpr)):
        if isinstance(e, s.InQuery):
            return contains_aggregate(binder, e.operand)
        return False
    if isinstance(e, s.Node):
        for f in getattr(e, "__dataclass_fields__", {}):
            if f == "span":
                continue
            v = getattr(e, f)
            if isinstance(v, s.Expr) and contains_aggregate(binder, v):
                return True
            if isinstance(v, tuple):
                for item in v:
                    if isinstance(item, s.Expr) and contains_aggregate(binder, item):
                        return True
                    if isinstance(item, tuple) and any(
                        isinstance(x, s.Expr) and contains_aggregate(binder, x) for x in item
                    ):
                        return True
    return False


@dataclass
class AggregateHook:
    """Collects keys and calls while the aggregating clauses are bound."""

    input_binder: Any  # ExprBinder over the aggregate's input
    keys: list[exp.Expression]
    key_names: list[str]
    calls: list[AggCall] = field(default_factory=list)
    call_names: list[str] = field(default_factory=list)
    # Expressions computed before the aggregate: the keys, then call arguments.
    pre_exprs: list[exp.Expression] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pre_exprs = [copy_typed(k) for k in self.keys]

    @property
    def key_count(self) -> int:
        return len(self.keys)

    def output_types(self) -> list[Any]:
        return [type_of(k) for k in self.keys] + [c.type for c in self.calls]

    def try_bind(self, binder: Any, e: s.Expr) -> exp.Expression | None:
        if isinstance(e, s.FunctionCall) and is_aggregate_name(binder, e.name):
            return self._bind_call(binder, e)
        if isinstance(e, (s.Literal, s.Parameter)):
            return None
        try:
            bound = self.input_binder.bind(e)
        except GeaflowError:
            bound = None
        if bound is not None:
            for i, k in enumerate(self.keys):
                if bound == k:
                    return ref(i, type_of(k))
            if not input_refs(bound) and not _has_aggregate(bound):
                return None  # a constant: bind normally
        if isinstance(e, (s.Column, s.Field)) and bound is not None:
            name = e.name if isinstance(e, s.Column) else f"{_text(e)}"
            raise binder.fail(
                ValidationError(
                    f"{name} must appear in GROUP BY or be used inside an aggregate function"
                ),
                e,
            )
        return None

    def _bind_call(self, binder: Any, e: s.FunctionCall) -> exp.Expression:
        resolved = binder.resolve_function(e.name, e)
        user: UserFunction | None = resolved if isinstance(resolved, UserFunction) else None
        name = resolved.builtin.upper() if isinstance(resolved, BuiltinAlias) else e.name.upper()
        args_syntax = list(e.args)
        arg_exprs: list[exp.Expression] = []
        constants: list[Any] = []
        if user is None:
            spec = builtin_aggregate(name)
            if spec is None:
                raise binder.fail(ValidationError(f"unknown aggregate function {e.name}()"), e)
            if not e.star and not spec.accepts(len(args_syntax)):
                raise binder.fail(
                    ValidationError(
                        f"{e.name}() takes {spec.arity_text()} argument"
                        f"{'' if spec.arity_text() == '1' else 's'}, got {len(args_syntax)}"
                    ),
                    e,
                )
            data_args = len(args_syntax) if spec.data_args < 0 else spec.data_args
            for i, a in enumerate(args_syntax):
                bound = self._bind_arg(binder, a)
                if i < data_args:
                    arg_exprs.append(bound)
                else:
                    if input_refs(bound):
                        raise binder.fail(
                            ValidationError(f"argument {i + 1} of {e.name}() must be a constant"), a
                        )
                    constants.append(constant_value(bound))
            if name == "COUNT" and (e.star or not arg_exprs):
                arg_exprs = []
                arg_types: list[Any] = []
            else:
                arg_types = [type_of(a) for a in arg_exprs]
            if name in (
                "SUM",
                "AVG",
                "STDDEV_SAMP",
                "STDDEV_POP",
                "VAR_SAMP",
                "VAR_POP",
                "PERCENTILE",
            ):
                for a in arg_types:
                    if not (a.is_numeric or a.name in ("NULL", "ANY") or a.is_string):
                        raise binder.fail(
                            ValidationError(f"{e.name}() needs a numeric argument, not {a}"), e
                        )
            result = spec.result(arg_types or [T.BIGINT])
        else:
            arg_exprs = [self._bind_arg(binder, a) for a in args_syntax]
            arg_types = [type_of(a) for a in arg_exprs]
            try:
                rt = user.instance.result_type([str(t) for t in arg_types])
                result = parse_type_name(rt) if isinstance(rt, str) else rt
            except GeaflowError:
                raise
            except Exception as err:  # user code
                raise binder.fail(
                    ValidationError(f"function {e.name}() could not give its result type: {err}"), e
                ) from None
        indexes: list[int] = []
        for arg in arg_exprs:
            for i, existing in enumerate(self.pre_exprs):
                if existing == arg and type_of(existing) == type_of(arg):
                    indexes.append(i)
                    break
            else:
                self.pre_exprs.append(arg)
                indexes.append(len(self.pre_exprs) - 1)
        call = AggCall(
            name if user is None else e.name.upper(),
            tuple(indexes),
            e.distinct,
            result,
            tuple(constants),
            user,
        )
        for i, existing_call in enumerate(self.calls):
            if existing_call == call:
                return ref(self.key_count + i, result)
        self.calls.append(call)
        self.call_names.append(f"{e.name.upper()}${len(self.calls) - 1}")
        return ref(self.key_count + len(self.calls) - 1, result)

    def _bind_arg(self, binder: Any, a: s.Expr) -> exp.Expression:
        if contains_aggregate(binder, a):
            raise binder.fail(ValidationError("aggregate calls cannot be nested"), a)
        return self.input_binder.bind(a)


def _has_aggregate(e: exp.Expression) -> bool:
    return any(isinstance(n, exp.AggFunc) for n in e.walk())


def _text(e: s.Expr) -> str:
    if isinstance(e, s.Column):
        return e.name
    if isinstance(e, s.Field):
        return f"{_text(e.base)}.{e.name}"
    return "expression"
