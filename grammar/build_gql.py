"""The tree builder's rules for graph queries: MATCH patterns, LET, RETURN, CALL."""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from geaflow_sql.core.errors import ParseError

from . import syntax as s
from .tree_helpers import Tagged, by_tag, span_of, tagged, values_of


@v_args(meta=True)
class GqlRules(Transformer):
    """The tree builder's rules for graph queries: MATCH patterns, LET, RETURN, CALL."""

    def gql_query(self, meta: Meta, ch: list[Any]) -> s.Query:
        request = None
        clauses: list[s.GraphClause] = []
        for c in ch:
            if isinstance(c, s.RequestTable):
                request = c
            elif isinstance(c, Tagged):
                clauses.append(self._clause_from_tag(c))
            else:
                clauses.append(c)
        return s.GraphQuery(tuple(clauses), request, span=span_of(meta))

    @staticmethod
    def _clause_from_tag(c: Tagged) -> s.GraphClause:
        if c.tag == "order":
            items = c.value
            span = items[0].span.merge(items[-1].span) if items else s.NO_SPAN
            return s.OrderByClause(tuple(items), span=span)
        if c.tag == "limit":
            limit, offset = c.value
            return s.LimitClause(limit, offset, span=(limit or offset).span)
        raise AssertionError(c.tag)

    def gql_with(self, meta: Meta, ch: list[Any]) -> s.RequestTable:
        name, query = values_of(ch)
        return s.RequestTable(name, query, span=span_of(meta))

    def match_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        vals = values_of(ch)
        patterns = vals[0]
        where = by_tag(vals[1:]).get("where")
        optional = any(isinstance(c, Token) and c.type == "OPTIONAL" for c in ch)
        return s.MatchClause(tuple(patterns), where, optional, span=span_of(meta))

    def pattern_list(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def pattern_union(self, meta: Meta, ch: list[Any]) -> s.PatternUnion:
        paths = [c for c in ch if isinstance(c, s.PathPattern)]
        distinct = tuple(c.type == "PIPE_PLUS" for c in ch if isinstance(c, Token))
        return s.PatternUnion(tuple(paths), distinct, span=span_of(meta))

    def path_pattern(self, meta: Meta, ch: list[Any]) -> s.PathPattern:
        variable = None
        if isinstance(ch[0], str):
            variable = ch[0]
            ch = ch[1:]
        prefix = by_tag([c for c in ch if isinstance(c, Tagged)])
        ch = [c for c in ch if not isinstance(c, Tagged)]
        search = prefix.get("search")
        noun: Token | None = prefix.get("noun")
        if search is not None:
            search = self._search(search, noun)
        elif noun is not None and noun.type in ("GROUP", "GROUPS"):
            raise ParseError(f"{noun} follows SHORTEST or CHEAPEST only", span=span_of(noun))
        elements = _alternating(ch)
        return s.PathPattern(
            tuple(elements), variable, prefix.get("mode"), search, span=span_of(meta)
        )

    def quantified(self, meta: Meta, ch: list[Any]) -> s.QuantifiedPattern:
        parts = by_tag([c for c in ch if isinstance(c, Tagged)])
        elements = [c for c in ch if not isinstance(c, Tagged)]
        body = [elements[0], *elements[1]]
        for e in body:
            if isinstance(e, s.EdgePattern) and e.is_loop:
                raise ParseError(
                    "an edge inside a quantified path pattern has one hop: quantify the "
                    "parenthesised sub-path instead",
                    span=e.span,
                )
        low, high = parts["loop"]
        return s.QuantifiedPattern(
            s.PathPattern(tuple(body), span=span_of(meta)),
            parts.get("where"),
            low,
            high,
            span=span_of(meta),
        )

    @staticmethod
    def _search(found: tuple[str, Token | None, Token], noun: Token | None) -> s.PathSearch | None:
        """The search prefix as written, with the PATH(S)/GROUP(S) after it."""
        kind, count, first = found
        span = span_of(first)
        groups = noun is not None and noun.type in ("GROUP", "GROUPS")
        k = 1 if count is None else int(count)
        if count is not None and k < 1:
            raise ParseError(f"{kind} {count}: the number of paths is at least 1", span=span)
        if kind == "ALL":
            return None  # every path: no search at all
        if groups and kind not in ("SHORTEST", "CHEAPEST"):
            raise ParseError(
                f"{noun} follows SHORTEST or CHEAPEST only, not {kind}", span=span_of(noun)
            )
        if kind in ("SHORTEST", "CHEAPEST") and count is None and not groups:
            raise ParseError(
                f"{kind} needs a number of paths ({kind} 2) or GROUPS (ANY {kind} for one)",
                span=span,
            )
        if kind in ("ALL SHORTEST", "ANY SHORTEST"):
            return s.PathSearch(True, 1, kind == "ALL SHORTEST", span=span)
        if kind in ("ALL CHEAPEST", "ANY CHEAPEST"):
            return s.PathSearch(False, 1, kind == "ALL CHEAPEST", cheapest=True, span=span)
        if kind == "CHEAPEST":
            return s.PathSearch(False, k, groups, cheapest=True, span=span)
        return s.PathSearch(kind == "SHORTEST", k, groups, span=span)

    def search_any_shortest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ANY SHORTEST", None, ch[0]))

    def search_all_shortest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ALL SHORTEST", None, ch[0]))

    def search_any_cheapest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ANY CHEAPEST", None, ch[0]))

    def search_all_cheapest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ALL CHEAPEST", None, ch[0]))

    def search_cheapest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("CHEAPEST", ch[1] if len(ch) > 1 else None, ch[0]))

    def search_any(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ANY", ch[1] if len(ch) > 1 else None, ch[0]))

    def search_shortest(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("SHORTEST", ch[1] if len(ch) > 1 else None, ch[0]))

    def search_all(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("search", ("ALL", None, ch[0]))

    def path_noun(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("noun", ch[0])

    def path_mode(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("mode", str(ch[0]).upper())

    def path_tail(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def paren_ident(self, meta: Meta, ch: list[Any]) -> s.NodePattern:
        return s.NodePattern(ch[0], span=span_of(meta))

    def node_full(self, meta: Meta, ch: list[Any]) -> s.NodePattern:
        variable = next((c for c in ch if isinstance(c, str)), None)
        labels = next((c.value for c in ch if isinstance(c, Tagged) and c.tag == "labels"), ())
        parts = by_tag(ch)
        return s.NodePattern(
            variable,
            tuple(labels),
            parts.get("where"),
            tuple(parts.get("properties", ())),
            parts.get("label_expr"),
            span=span_of(meta),
        )

    def property_map(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("properties", tuple(ch))

    def property_entry(self, meta: Meta, ch: list[Any]) -> tuple[str, Any]:
        name, value = ch
        return (name, value)

    def label_spec(self, meta: Meta, ch: list[Any]) -> Tagged:
        expr = values_of(ch)[0]
        if expr.op == "name":
            return tagged("labels", (expr.name,))
        if expr.op == "or" and all(a.op == "name" for a in expr.args):
            return tagged("labels", tuple(a.name for a in expr.args))
        return tagged("label_expr", expr)

    def label_or(self, meta: Meta, ch: list[Any]) -> s.LabelExpr:
        return s.LabelExpr("or", args=tuple(_flatten("or", values_of(ch))), span=span_of(meta))

    def label_and(self, meta: Meta, ch: list[Any]) -> s.LabelExpr:
        return s.LabelExpr("and", args=tuple(_flatten("and", values_of(ch))), span=span_of(meta))

    def label_negated(self, meta: Meta, ch: list[Any]) -> s.LabelExpr:
        return s.LabelExpr("not", args=(values_of(ch)[0],), span=span_of(meta))

    def label_any(self, meta: Meta, ch: list[Any]) -> s.LabelExpr:
        return s.LabelExpr("any", span=span_of(meta))

    def label_name(self, meta: Meta, ch: list[Any]) -> s.LabelExpr:
        return s.LabelExpr("name", name=ch[0], span=span_of(meta))

    def edge_inner(self, meta: Meta, ch: list[Any]) -> Tagged:
        variable = next((c for c in ch if isinstance(c, str)), None)
        labels = next((c.value for c in ch if isinstance(c, Tagged) and c.tag == "labels"), ())
        parts = by_tag(ch)
        return tagged(
            "edge",
            (
                variable,
                tuple(labels),
                parts.get("where"),
                tuple(parts.get("properties", ())),
                parts.get("label_expr"),
                parts.get("cost"),
            ),
        )

    def edge_cost(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("cost", values_of(ch)[0])

    def loop(self, meta: Meta, ch: list[Any]) -> Tagged:
        low = int(str(ch[0]))
        high = int(str(ch[1])) if len(ch) > 1 else None
        return tagged("loop", (low, high))

    def loop_exact(self, meta: Meta, ch: list[Any]) -> Tagged:
        n = int(str(ch[0]))
        return tagged("loop", (n, n))

    def _edge(self, meta: Meta, ch: list[Any], direction: str) -> s.EdgePattern:
        parts = by_tag(ch)
        variable, labels, where, properties, label_expr, cost = parts.get(
            "edge", (None, (), None, (), None, None)
        )
        low, high = parts.get("loop", (1, 1))
        return s.EdgePattern(
            variable,
            direction,
            labels,
            where,
            low,
            high,
            properties,
            label_expr,
            cost,
            span=span_of(meta),
        )

    def edge_out(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "OUT")

    def edge_in(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "IN")

    def edge_both(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "BOTH")

    edge_out_short = edge_out
    edge_in_short = edge_in
    edge_both_short = edge_both

    def let_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        assigns: list[s.LetAssign] = []
        is_global = False
        for c in ch:
            if isinstance(c, Token):
                if c.type == "GLOBAL":
                    is_global = True
                elif c.type == "LET":
                    is_global = False
                continue
            assigns.append(s.LetAssign(c.variable, c.field, c.value, is_global, span=c.span))
            is_global = False
        return s.LetClause(tuple(assigns), span=span_of(meta))

    def let_assign(self, meta: Meta, ch: list[Any]) -> s.LetAssign:
        variable, field, value = ch
        return s.LetAssign(variable, field, value, span=span_of(meta))

    def return_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        parts = by_tag(ch)
        items = next(c for c in ch if isinstance(c, list))
        return s.ReturnClause(tuple(items), parts.get("quant") == "DISTINCT", span=span_of(meta))

    def gql_group_by(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        return s.GroupByClause(tuple(values_of(ch)[0]), span=span_of(meta))

    def then_filter(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        return s.FilterClause(values_of(ch)[0], span=span_of(meta))

    def call_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        vals = values_of(ch)
        name = vals[0]
        args: list[Any] = []
        rest = vals[1:]
        if rest and isinstance(rest[0], list):
            args = rest[0]
            rest = rest[1:]
        return s.CallClause(name, tuple(args), tuple(rest), span=span_of(meta))


def _alternating(parts: list[Any]) -> list[Any]:
    """A path's parts as nodes with an edge or a quantified sub-path between
    each two.  Beside a quantified sub-path the node may be left out (as ISO
    GQL allows): ``((a)-[e]->(b)){2}-[f]->(c)`` is ``()((a)-[e]->(b)){2}()-[f]->(c)``."""
    out: list[Any] = []
    for part in parts:
        after_node = bool(out) and isinstance(out[-1], s.NodePattern)
        if isinstance(part, s.NodePattern):
            if after_node:
                raise ParseError(
                    "two node patterns side by side: put an edge between them, as (a)-(b)",
                    span=part.span,
                )
        elif not after_node:
            if isinstance(part, s.EdgePattern) and (not out or isinstance(out[-1], s.EdgePattern)):
                raise ParseError("an edge pattern needs a node pattern before it", span=part.span)
            out.append(s.NodePattern(None, span=part.span))
        out.append(part)
    if isinstance(out[-1], s.EdgePattern):
        raise ParseError("an edge pattern needs a node pattern after it", span=out[-1].span)
    if isinstance(out[-1], s.QuantifiedPattern):
        out.append(s.NodePattern(None, span=out[-1].span))
    return out


def _flatten(op: str, args: list[Any]) -> list[Any]:
    """``A|(B|C)`` as ``A|B|C``: the operands of nested ``op``s in one list."""
    out: list[Any] = []
    for a in args:
        out.extend(a.args if isinstance(a, s.LabelExpr) and a.op == op else [a])
    return out
