"""Subqueries in expressions (scalar, IN, EXISTS), planned as joins to the
current input: uncorrelated ones directly, correlated ones decorrelated on
the equalities of their WHERE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.expressions import and_all, cast_to, paren, ref, type_of, typed
from planner.logical import (
    AggCall,
    Aggregate,
    Field,
    Join,
    JoinType,
    LogicalNode,
    Project,
)

from .aggregates import contains_aggregate
from .expressions import ExprBinder
from .scope import Scope

if TYPE_CHECKING:
    from .query import QueryBinder


class SubqueryHook:
    """Plans subqueries in expressions by joining them to the current input.

    Joins append fields on the right, so references to the existing input stay
    valid; the expression then reads the appended field.
    """

    def __init__(self, qb: QueryBinder, node: LogicalNode, scope: Scope) -> None:
        self.qb = qb
        self.node = node
        self.scope = scope

    def _plan(self, query: s.Query) -> LogicalNode:
        try:
            return self.qb.bind_query(query).node
        except GeaflowError as err:
            if "unknown column" in err.message:
                raise UnsupportedError(
                    "a subquery may refer to the outer query only through equalities "
                    "in its WHERE (outer = inner); " + err.message
                ) from None
            raise

    def _append(self, right: LogicalNode, kind: JoinType, condition: exp.Expression | None) -> int:
        offset = len(self.node.schema)
        self.node = Join(self.node, right, kind, condition)
        return offset

    def _marked(
        self, sub: LogicalNode, extra: exp.Expression | None, outer_keys: tuple[exp.Expression, ...]
    ) -> int:
        """Left-join ``sub`` (keys first) with a TRUE marker after its fields.

        Returns the offset of ``sub``'s first field in the joined input; the
        marker is at ``offset + len(sub.schema)``.
        """
        from .correlation import key_condition

        fields = sub.schema
        marked = Project(
            sub,
            tuple(ref(i, f.type) for i, f in enumerate(fields))
            + (typed(exp.Boolean(this=True), T.BOOLEAN),),
            fields + (Field("$found", T.BOOLEAN),),
        )
        offset = len(self.node.schema)
        conds = [
            key_condition(k, ref(offset + j, fields[j].type)) for j, k in enumerate(outer_keys)
        ]
        if extra is not None:
            conds.append(extra)

        self._append(marked, "LEFT", and_all(conds))
        return offset

    def _correlated(self, binder: ExprBinder, query: s.Query) -> Any:
        from .correlation import decorrelate

        return decorrelate(self.qb, binder, query)

    def scalar(self, binder: ExprBinder, e: s.ScalarSubquery) -> exp.Expression:
        corr = self._correlated(binder, e.query)
        if corr is not None:
            return self._correlated_scalar(binder, e, corr)
        sub = self._plan(e.query)
        if len(sub.schema) != 1:
            raise ValidationError("a scalar subquery must return exactly one column")
        offset = self._append(sub, "LEFT", typed(exp.Boolean(this=True), T.BOOLEAN))
        return ref(offset, sub.schema[0].type)

    def _correlated_scalar(
        self, binder: ExprBinder, e: s.ScalarSubquery, corr: Any
    ) -> exp.Expression:
        select = corr.select
        if len(select.items) != 1 or not contains_aggregate(binder, select.items[0].expr):
            raise ValidationError(
                "a correlated scalar subquery must compute one aggregate (one row per outer row)"
            )
        keys = corr.inner_keys
        grouped = s.Select(
            tuple(s.SelectItem(k) for k in keys) + select.items,
            select.from_,
            select.where,
            group_by=keys,
            span=select.span,
        )
        sub = self._plan(grouped)
        offset = self._marked(sub, None, corr.outer_keys)
        vtype = sub.schema[len(keys)].type
        value = ref(offset + len(keys), vtype)
        marker = ref(offset + len(sub.schema), T.BOOLEAN)
        # An outer row no inner row matches gets the aggregate over no rows
        # (COUNT 0, SUM 0 as GeaFlow sums, count(*) + 1 is 1, MAX null), not
        # null: the same select over an empty input, one row, joined once.
        try:
            empty = self._plan(
                s.Select(
                    select.items,
                    select.from_,
                    s.Literal(False, "bool", "FALSE", span=select.span),
                    span=select.span,
                )
            )
        except GeaflowError:
            empty = None  # the item reads the outer row: keep null
        if empty is None or len(empty.schema) != 1:
            return value
        at = self._append(empty, "CROSS", None)
        common = T.common_type(vtype, empty.schema[0].type) or vtype
        return typed(
            exp.Case(
                ifs=[
                    exp.If(
                        this=exp.Is(this=marker, expression=exp.Null()),
                        true=cast_to(ref(at, empty.schema[0].type), common),
                    )
                ],
                default=cast_to(value, common),
            ),
            common,
        )

    def in_query(self, binder: ExprBinder, e: s.InQuery) -> exp.Expression:
        operand = paren(binder.bind(e.operand))  # (a part of larger expressions below)
        corr = self._correlated(binder, e.query)
        if corr is not None:
            select = corr.select
            if len(select.items) != 1:
                raise ValidationError("IN (subquery) needs a subquery with one column")
            keys = corr.inner_keys
            sub = self._plan(
                s.Select(
                    tuple(s.SelectItem(k) for k in keys) + select.items,
                    select.from_,
                    select.where,
                    distinct=True,
                    span=select.span,
                )
            )
            value_type = sub.schema[len(keys)].type
            offset = len(self.node.schema)
            common = T.common_type(type_of(operand), value_type) or type_of(operand)
            match = typed(
                exp.EQ(
                    this=cast_to(operand, common),
                    expression=cast_to(ref(offset + len(keys), value_type), common),
                ),
                T.BOOLEAN,
            )
            offset = self._marked(sub, match, corr.outer_keys)
            found: exp.Expression = ref(offset + len(sub.schema), T.BOOLEAN)
            # Three-valued IN per outer row: the inner rows of its keys counted,
            # and their non-null values, as in the uncorrelated case below.
            from .correlation import key_condition

            k = len(keys)
            counts = Aggregate(
                sub,
                tuple(range(k)),
                (
                    AggCall("COUNT", (), False, T.BIGINT),
                    AggCall("COUNT", (k,), False, T.BIGINT),
                ),
                sub.schema[:k] + (Field("$rows", T.BIGINT), Field("$values", T.BIGINT)),
                internal=True,
            )
            at = len(self.node.schema)
            self._append(
                counts,
                "LEFT",
                and_all(
                    [
                        key_condition(key, ref(at + j, counts.schema[j].type))
                        for j, key in enumerate(corr.outer_keys)
                    ]
                ),
            )
            return self._three_valued(
                found, ref(at + k, T.BIGINT), ref(at + k + 1, T.BIGINT), operand, e.negated
            )
        sub = self._plan(e.query)
        if len(sub.schema) != 1:
            raise ValidationError("IN (subquery) needs a subquery with one column")
        distinct = Aggregate(sub, (0,), (), sub.schema, internal=True)
        marked = Project(
            distinct,
            (ref(0, sub.schema[0].type), typed(exp.Boolean(this=True), T.BOOLEAN)),
            (sub.schema[0], Field("$found", T.BOOLEAN)),
        )
        offset = len(self.node.schema)
        common = T.common_type(type_of(operand), sub.schema[0].type) or type_of(operand)
        cond = typed(
            exp.EQ(
                this=cast_to(operand, common),
                expression=cast_to(ref(offset, sub.schema[0].type), common),
            ),
            T.BOOLEAN,
        )
        self._append(marked, "LEFT", cond)
        found = ref(offset + 1, T.BOOLEAN)
        # SQL's three-valued IN: no match is UNKNOWN (not FALSE) when the value
        # is null or the subquery yields a null, unless the subquery is empty.

        counts = Aggregate(
            sub,
            (),
            (AggCall("COUNT", (), False, T.BIGINT), AggCall("COUNT", (0,), False, T.BIGINT)),
            (Field("$rows", T.BIGINT), Field("$values", T.BIGINT)),
            internal=True,
        )
        c = self._append(counts, "CROSS", None)
        return self._three_valued(found, ref(c, T.BIGINT), ref(c + 1, T.BIGINT), operand, e.negated)

    @staticmethod
    def _three_valued(
        found: exp.Expression,
        rows: exp.Expression,
        values: exp.Expression,
        operand: exp.Expression,
        negated: bool,
    ) -> exp.Expression:
        """SQL's ``x [NOT] IN (...)``: a match is TRUE; no match is UNKNOWN
        when ``x`` is null or the (non-empty) set holds a null, else FALSE.
        ``rows``/``values``: the set's rows and non-null values (null: none)."""
        hit, miss = (not negated, negated)

        def boolean(e: exp.Expression) -> exp.Expression:
            return typed(e, T.BOOLEAN)

        def truth(value: bool) -> exp.Expression:
            return boolean(exp.Boolean(this=value))

        zero = typed(exp.Literal.number(0), T.BIGINT)
        none = typed(exp.Coalesce(this=rows, expressions=[zero]), T.BIGINT)
        unknown = exp.Or(
            this=boolean(exp.Is(this=operand, expression=exp.Null())),
            expression=boolean(exp.GT(this=rows.copy(), expression=values)),
        )
        # (written as sqlglot's CASE, not Spark text, so the local engine runs it too)
        return boolean(
            exp.Case(
                ifs=[
                    exp.If(
                        this=boolean(
                            exp.Not(this=boolean(exp.Is(this=found, expression=exp.Null())))
                        ),
                        true=truth(hit),
                    ),
                    exp.If(
                        this=boolean(exp.EQ(this=none, expression=zero.copy())), true=truth(miss)
                    ),
                    exp.If(this=boolean(unknown), true=typed(exp.Null(), T.BOOLEAN)),
                ],
                default=truth(miss),
            )
        )

    @staticmethod
    def _found(marker: int, negated: bool) -> exp.Expression:
        test: exp.Expression = exp.Is(this=ref(marker, T.BOOLEAN), expression=exp.Null())
        if not negated:
            test = exp.Not(this=exp.Paren(this=test))
        return typed(test, T.BOOLEAN)

    def exists(self, binder: ExprBinder, e: s.Exists) -> exp.Expression:
        assert e.query is not None
        corr = self._correlated(binder, e.query)
        if corr is not None:
            keys = corr.inner_keys
            sub = self._plan(
                s.Select(
                    tuple(s.SelectItem(k) for k in keys),
                    corr.select.from_,
                    corr.select.where,
                    distinct=True,
                    span=corr.select.span,
                )
            )
            offset = self._marked(sub, None, corr.outer_keys)
            return self._found(offset + len(sub.schema), False)
        sub = self._plan(e.query)
        counted = Aggregate(
            Project(sub, (typed(exp.Literal.number(1), T.INTEGER),), (Field("one", T.INTEGER),)),
            (),
            (self.qb.count_call(),),
            (Field("n", T.BIGINT),),
            internal=True,
        )
        offset = self._append(counted, "CROSS", None)
        return typed(
            exp.GT(this=ref(offset, T.BIGINT), expression=exp.Literal.number(0)), T.BOOLEAN
        )
