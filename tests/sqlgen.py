"""A random SQL query builder (SQLancer style) for differential testing against DuckDB.

Every generated expression and query is a pair of texts: the GeaFlow SQL that
geaflow-sql runs, and the DuckDB SQL that should give the same multiset of rows.
The two texts are written side by side, so each of GeaFlow's deliberate
differences from standard SQL is a thin translation in one place, never a skipped
case.  The translations (all on the DuckDB side; the GeaFlow text is plain DSL):

* **Integer division truncates.**  GeaFlow (Java) ``a / b`` on two integers is
  integer division rounding toward zero (README "Built-in functions";
  ``planner/binder/expressions.py``, ``arithmetic``).  DuckDB's ``/`` is float
  division; its ``//`` on integers truncates toward zero, as Java does, so
  ``a / b`` is written ``a // b``.  ``%`` is Java's remainder (sign of the
  dividend) in both: no translation.
* **Integer division and remainder by zero give NULL.**  The engine runs on
  Spark with ``spark.sql.ansi.enabled = false`` (``runtime/spark_adapter.py``),
  where integer ``x / 0`` and ``x % 0`` are NULL (Java would throw).  DuckDB
  gets ``SET error_on_division_by_zero = false`` (its ``//`` and ``%`` then give
  NULL too).  A DOUBLE divided by zero is +-Infinity or NaN, and its remainder
  NaN, as in Java; DuckDB agrees, so no translation.
* **SUM of no values is 0.**  GeaFlow's SUM starts from 0, so a group whose
  values are all NULL (or a global aggregate over no rows) sums to 0
  (``runtime/operators/relational.py``, ``aggregate_sql``).  DuckDB:
  ``coalesce(sum(x), 0)``.
* **Default NULL order.**  Without ``NULLS FIRST|LAST`` GeaFlow sorts NULL as
  the smallest value (``planner/logical.py``, ``SortKey.nulls_first``); DuckDB
  sorts NULLs last both ways.  An ORDER BY key without a NULLS clause gets
  GeaFlow's default written out for DuckDB.

DuckDB quirks avoided (not differences): negative literals are written in
parentheses in both texts, since DuckDB parses ``7 %-2`` as an operator ``%-``;
and a comma join is never followed by a JOIN whose ON refers to a table left of
the comma (``a, b JOIN c ON a.x = c.k`` is invalid SQL, which DuckDB accepts).

Not generated, because the engine does not have it: ``INTERSECT`` and
``EXCEPT`` (the grammar has only ``UNION [ALL]``: a ParseError), and correlated
subqueries that refer to the outer query other than through equalities in their
WHERE (an ``UnsupportedError`` by design).  No exclusion hides an engine bug:
one that must be excluded until a fix lands is marked ``# BUG:``.

Data: a table set is 2-3 tables with the same columns ``k int, a int, b bigint,
s varchar, d double`` (``k`` is a small join key), 0-7 rows of small values with
NULLs everywhere; strings are letters only and doubles are exact binary
fractions, so sums do not depend on the order of addition.  geaflow-sql reads
each table as a typed view over ``VALUES``: no file I/O per query, and a text
file cannot hold a NULL string (an empty field of a varchar column reads as '').
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field

INT, DOUBLE, STRING, BOOL = "int", "double", "string", "bool"

# (name, generator type, GeaFlow DDL type, DuckDB DDL type)
COLUMNS = (
    ("k", INT, "int", "INTEGER"),
    ("a", INT, "int", "INTEGER"),
    ("b", INT, "bigint", "BIGINT"),
    ("s", STRING, "varchar", "VARCHAR"),
    ("d", DOUBLE, "double", "DOUBLE"),
)
INT_VALUES = (-3, -2, -1, 0, 1, 2, 3, 5, 7)
KEY_VALUES = (0, 1, 2, 3)
STRING_VALUES = ("a", "b", "ab", "ba", "B", "abc", "x")
DOUBLE_VALUES = (-1.5, -0.25, 0.0, 0.5, 1.0, 2.25, 3.0)
LIKE_PATTERNS = ("a%", "%b", "_", "a_", "%a%", "B%", "ab")


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    name: str
    rows: tuple[tuple, ...]


def random_value(rng: random.Random, col: str) -> object:
    if rng.random() < 0.2:
        return None
    if col == "k":
        return rng.choice(KEY_VALUES)
    if col in ("a", "b"):
        return rng.choice(INT_VALUES)
    if col == "s":
        return rng.choice(STRING_VALUES)
    return rng.choice(DOUBLE_VALUES)


def random_tables(rng: random.Random) -> list[Table]:
    tables = []
    for i in range(rng.choice((2, 3, 3))):
        n = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 7))
        rows = tuple(tuple(random_value(rng, c[0]) for c in COLUMNS) for _ in range(n))
        tables.append(Table(f"t{i}", rows))
    return tables


def _literal(v: object, gf_type: str) -> str:
    if v is None:
        return f"CAST(NULL AS {gf_type})"
    if isinstance(v, str):
        return f"'{v}'"
    return f"CAST({v} AS {gf_type})"


def geaflow_setup(tables: list[Table]) -> str:
    """A script defining each table as a typed view over VALUES (no files: fast)."""
    names = ", ".join(c[0] for c in COLUMNS)
    stmts = []
    for t in tables:
        rows = t.rows or (tuple(None for _ in COLUMNS),)
        values = ", ".join(
            "(" + ", ".join(_literal(v, c[2]) for v, c in zip(r, COLUMNS, strict=True)) + ")"
            for r in rows
        )
        empty = "" if t.rows else " WHERE 1 = 0"
        stmts.append(
            f"CREATE VIEW {t.name} AS SELECT * FROM (VALUES {values}) AS v({names}){empty};"
        )
    return "\n".join(stmts)


def duckdb_setup(con, tables: list[Table]) -> None:  # type: ignore[no-untyped-def]
    # Newer DuckDB raises on division by zero unless told otherwise; older ones have no
    # such setting (and give NULL already).
    with contextlib.suppress(Exception):
        con.execute("SET error_on_division_by_zero = false")
    cols = ", ".join(f"{c[0]} {c[3]}" for c in COLUMNS)
    for t in tables:
        con.execute(f"CREATE TABLE {t.name} ({cols})")
        if t.rows:
            marks = ", ".join("?" for _ in COLUMNS)
            con.executemany(f"INSERT INTO {t.name} VALUES ({marks})", [list(r) for r in t.rows])


# ---------------------------------------------------------------------------
# Expressions: a pair of texts and a type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class E:
    gf: str
    dk: str
    type: str

    def map(self, template: str, type_: str | None = None) -> E:
        return E(template.format(self.gf), template.format(self.dk), type_ or self.type)


def same(text: str, type_: str) -> E:
    return E(text, text, type_)


def join_pairs(items: list[E], sep: str, template: str = "{}") -> E:
    return E(
        template.format(sep.join(e.gf for e in items)),
        template.format(sep.join(e.dk for e in items)),
        items[0].type if items else BOOL,
    )


def binary(left: E, op: str, right: E, type_: str, dk_op: str | None = None) -> E:
    return E(f"({left.gf} {op} {right.gf})", f"({left.dk} {dk_op or op} {right.dk})", type_)


@dataclass
class Scope:
    columns: list[E]  # qualified column references
    filters: list[E] = field(default_factory=list)  # comma joins' conditions, for WHERE

    def of(self, type_: str) -> list[E]:
        return [c for c in self.columns if c.type == type_]


@dataclass(frozen=True)
class Query:
    geaflow: str
    duckdb: str
    ordered: bool = False  # compare as lists (ORDER BY with a total order)
    width: int = 0  # number of output columns


class Gen:
    """Random queries over one table set."""

    def __init__(self, rng: random.Random, tables: list[Table]):
        self.rng = rng
        self.tables = tables
        self.aliases = 0

    # -- helpers ---------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def alias(self) -> str:
        self.aliases += 1
        return f"x{self.aliases}"

    def table(self) -> Table:
        return self.rng.choice(self.tables)

    def table_scope(self, alias: str) -> list[E]:
        return [same(f"{alias}.{c[0]}", c[1]) for c in COLUMNS]

    # -- literals --------------------------------------------------------------

    def literal(self, type_: str) -> E:
        if type_ == INT:
            v = self.rng.choice(INT_VALUES)
            return same(f"({v})" if v < 0 else str(v), INT)
        if type_ == DOUBLE:
            v = self.rng.choice(DOUBLE_VALUES)
            return same(f"({v})" if v < 0 else str(v), DOUBLE)
        if type_ == STRING:
            return same(f"'{self.rng.choice(STRING_VALUES)}'", STRING)
        return same(self.rng.choice(("TRUE", "FALSE")), BOOL)

    # -- scalar expressions ----------------------------------------------------

    def expr(self, scope: Scope, type_: str, depth: int = 2) -> E:
        if type_ == BOOL:
            return self.pred(scope, depth)
        cols = scope.of(type_)
        if depth <= 0 or self.chance(0.45):
            if cols and self.chance(0.8):
                return self.rng.choice(cols)
            return self.literal(type_)
        pick = self.rng.random()
        if pick < 0.12:
            return self.case(scope, type_, depth - 1)
        if pick < 0.15:
            return self.simple_case(scope, type_, depth - 1)
        if pick < 0.25:
            args = [self.expr(scope, type_, depth - 1) for _ in range(self.rng.choice((2, 3)))]
            return join_pairs(args, ", ", "coalesce({})")
        if pick < 0.3:
            left, right = self.expr(scope, type_, depth - 1), self.expr(scope, type_, depth - 1)
            return E(f"nullif({left.gf}, {right.gf})", f"nullif({left.dk}, {right.dk})", type_)
        if type_ == INT:
            return self.int_expr(scope, depth)
        if type_ == DOUBLE:
            return self.double_expr(scope, depth)
        return self.string_expr(scope, depth)

    def int_expr(self, scope: Scope, depth: int) -> E:
        left = self.expr(scope, INT, depth - 1)
        right = self.expr(scope, INT, depth - 1)
        op = self.rng.choice(("+", "-", "*", "/", "%", "neg", "abs", "length"))
        if op == "/":
            # Java integer division truncates toward zero: DuckDB's `//` on integers does.
            return binary(left, "/", right, INT, dk_op="//")
        if op == "neg":
            return left.map("(- {})")
        if op == "abs":
            return left.map("abs({})")
        if op == "length":
            return self.expr(scope, STRING, depth - 1).map("length({})", INT)
        return binary(left, op, right, INT)

    def double_expr(self, scope: Scope, depth: int) -> E:
        op = self.rng.choice(("+", "-", "*", "/", "int", "mixed"))
        left = self.expr(scope, DOUBLE, depth - 1)
        if op == "int":
            return self.expr(scope, INT, depth - 1).map("CAST({} AS DOUBLE)", DOUBLE)
        if op == "mixed":
            return binary(left, "+", self.expr(scope, INT, depth - 1), DOUBLE)
        if op == "/":
            # By zero: +-Infinity or NaN, Java's floating point (and DuckDB's).
            right = same(str(self.rng.choice((0.5, 2.0, 4.0, 0.0))), DOUBLE)
            return binary(left, "/", right, DOUBLE)
        return binary(left, op, self.expr(scope, DOUBLE, depth - 1), DOUBLE)

    def string_expr(self, scope: Scope, depth: int) -> E:
        op = self.rng.choice(("||", "concat", "upper", "lower", "cast"))
        left = self.expr(scope, STRING, depth - 1)
        if op == "||":
            return binary(left, "||", self.expr(scope, STRING, depth - 1), STRING)
        if op == "concat":
            # GeaFlow's concat skips NULLs (README); so does DuckDB's.
            right = self.expr(scope, STRING, depth - 1)
            return E(f"concat({left.gf}, {right.gf})", f"concat({left.dk}, {right.dk})", STRING)
        if op == "cast":
            return self.expr(scope, INT, depth - 1).map("CAST({} AS VARCHAR)", STRING)
        return left.map(f"{op}({{}})")

    def case(self, scope: Scope, type_: str, depth: int) -> E:
        whens = [
            (self.pred(scope, depth), self.expr(scope, type_, depth))
            for _ in range(self.rng.choice((1, 1, 2)))
        ]
        gf = "CASE " + " ".join(f"WHEN {p.gf} THEN {e.gf}" for p, e in whens)
        dk = "CASE " + " ".join(f"WHEN {p.dk} THEN {e.dk}" for p, e in whens)
        if self.chance(0.7):
            other = self.expr(scope, type_, depth)
            gf += f" ELSE {other.gf}"
            dk += f" ELSE {other.dk}"
        return E(gf + " END", dk + " END", type_)

    def simple_case(self, scope: Scope, type_: str, depth: int) -> E:
        t = self.comparable_type(scope)
        operand = self.expr(scope, t, depth)
        whens = [(self.literal(t), self.expr(scope, type_, depth)) for _ in range(2)]
        gf = f"CASE {operand.gf} " + " ".join(f"WHEN {w.gf} THEN {e.gf}" for w, e in whens)
        dk = f"CASE {operand.dk} " + " ".join(f"WHEN {w.dk} THEN {e.dk}" for w, e in whens)
        other = self.expr(scope, type_, depth)
        return E(f"{gf} ELSE {other.gf} END", f"{dk} ELSE {other.dk} END", type_)

    # -- predicates ------------------------------------------------------------

    def comparable_type(self, scope: Scope) -> str:
        types = [c.type for c in scope.columns if c.type != BOOL] or [INT]
        return self.rng.choice(types)

    def pred(self, scope: Scope, depth: int = 2, subqueries: bool = False) -> E:
        pick = self.rng.random()
        if depth > 0 and pick < 0.2:
            op = self.rng.choice(("AND", "OR"))
            left = self.pred(scope, depth - 1, subqueries)
            return binary(left, op, self.pred(scope, depth - 1, subqueries), BOOL)
        if depth > 0 and pick < 0.25:
            return self.pred(scope, depth - 1, subqueries).map("(NOT {})")
        if depth > 0 and pick < 0.28:
            test = self.rng.choice(("TRUE", "NOT TRUE", "FALSE", "NOT FALSE"))
            return self.pred(scope, depth - 1).map(f"({{}} IS {test})")
        if subqueries and pick < 0.45:
            return self.subquery_pred(scope)
        t = self.comparable_type(scope)
        left = self.expr(scope, t, min(depth, 1))
        kind = self.rng.random()
        if kind < 0.45:
            op = self.rng.choice(("=", "<>", "<", "<=", ">", ">="))
            other = t
            if t in (INT, DOUBLE) and self.chance(0.15):
                other = DOUBLE if t == INT else INT  # INT against DOUBLE
            return binary(left, op, self.expr(scope, other, min(depth, 1)), BOOL)
        if kind < 0.6:
            return left.map(self.rng.choice(("({} IS NULL)", "({} IS NOT NULL)")), BOOL)
        if kind < 0.7:
            items = [self.literal(t) for _ in range(self.rng.choice((1, 2, 3)))]
            if self.chance(0.2):
                items.append(same("NULL", t))
            neg = "NOT " if self.chance(0.3) else ""
            return E(
                f"({left.gf} {neg}IN ({', '.join(i.gf for i in items)}))",
                f"({left.dk} {neg}IN ({', '.join(i.dk for i in items)}))",
                BOOL,
            )
        if kind < 0.8:
            lo, hi = sorted((self.literal(t), self.literal(t)), key=lambda e: e.gf)
            neg = "NOT " if self.chance(0.3) else ""
            return E(
                f"({left.gf} {neg}BETWEEN {lo.gf} AND {hi.gf})",
                f"({left.dk} {neg}BETWEEN {lo.dk} AND {hi.dk})",
                BOOL,
            )
        if kind < 0.88 and t == STRING:
            neg = "NOT " if self.chance(0.3) else ""
            pattern = self.rng.choice(LIKE_PATTERNS)
            return left.map(f"({{}} {neg}LIKE '{pattern}')", BOOL)
        neg = "NOT " if self.chance(0.4) else ""
        return binary(left, f"IS {neg}DISTINCT FROM", self.expr(scope, t, 0), BOOL)

    def subquery_source(self, scope: Scope) -> tuple[E, Scope, bool]:
        """``FROM t alias [WHERE ...]`` of a subquery, maybe correlated by an equality."""
        t = self.table()
        alias = self.alias()
        inner = Scope(self.table_scope(alias))
        conds: list[E] = []
        outer_ints = [c for c in scope.columns if c.type == INT]
        correlated = bool(outer_ints) and self.chance(0.5)
        if correlated:
            conds.append(binary(same(f"{alias}.k", INT), "=", self.rng.choice(outer_ints), BOOL))
        if self.chance(0.5):
            conds.append(self.pred(inner, 1))
        where = join_pairs(conds, " AND ", " WHERE {}") if conds else same("", BOOL)
        source = E(f" FROM {t.name} {alias}{where.gf}", f" FROM {t.name} {alias}{where.dk}", BOOL)
        return source, inner, correlated

    def scalar_subquery(self, scope: Scope, type_: str) -> E:
        """``(SELECT agg FROM ...)``: one row per outer row."""
        source, inner, correlated = self.subquery_source(scope)
        agg = self.aggregate(inner, type_)
        if type_ != STRING and self.chance(0.2):
            agg = binary(agg, "+", self.literal(INT), agg.type)
        return E(f"(SELECT {agg.gf}{source.gf})", f"(SELECT {agg.dk}{source.dk})", agg.type)

    def subquery_pred(self, scope: Scope) -> E:
        """EXISTS / IN / a scalar subquery; correlated only through equalities."""
        kind = self.rng.choice(("exists", "in", "scalar"))
        neg = "NOT " if self.chance(0.35) else ""
        col_type = self.rng.choice((INT, INT, STRING, DOUBLE))
        if kind == "scalar":
            sub = self.scalar_subquery(scope, col_type)
            left = self.expr(scope, sub.type, 1)
            op = self.rng.choice(("=", "<>", "<", ">=", ">"))
            return binary(left, op, sub, BOOL)
        source, inner, correlated = self.subquery_source(scope)
        if kind == "in":
            item = self.rng.choice(inner.of(col_type))
            left = self.expr(scope, col_type, 1)
            return E(
                f"({left.gf} {neg}IN (SELECT {item.gf}{source.gf}))",
                f"({left.dk} {neg}IN (SELECT {item.dk}{source.dk}))",
                BOOL,
            )
        return E(
            f"({neg}EXISTS (SELECT 1{source.gf}))", f"({neg}EXISTS (SELECT 1{source.dk}))", BOOL
        )

    # -- aggregates ------------------------------------------------------------

    def aggregate(self, scope: Scope, type_: str | None = None, sum_: bool = True) -> E:
        """An aggregate call; ``type_`` asks for a result of that type."""
        kinds = ["count*", "count", "countd", "sum", "min", "max", "avg"]
        if type_ == INT:
            kinds = ["count*", "count", "countd", "sum", "min", "max"]
        elif type_ == DOUBLE:
            kinds = ["sum", "min", "max", "avg"]
        elif type_ == STRING:
            kinds = ["min", "max"]
        if not sum_:
            kinds = [k for k in kinds if k != "sum"]
        kind = self.rng.choice(kinds)
        if kind == "count*":
            return same("count(*)", INT)
        if kind in ("count", "countd"):
            arg = self.expr(scope, self.comparable_type(scope), 1)
            d = "DISTINCT " if kind == "countd" else ""
            return arg.map(f"count({d}{{}})", INT)
        if kind in ("min", "max"):
            arg = self.expr(scope, type_ or self.comparable_type(scope), 1)
            return arg.map(f"{kind}({{}})")
        if kind == "avg":
            arg = self.expr(scope, self.rng.choice((INT, DOUBLE)), 1)
            return arg.map("avg({})", DOUBLE)
        arg_type = type_ if type_ in (INT, DOUBLE) else self.rng.choice((INT, DOUBLE))
        arg = self.expr(scope, arg_type, 1)
        d = "DISTINCT " if self.chance(0.15) else ""
        # GeaFlow's SUM starts from 0: no values sum to 0, not NULL.
        return E(f"sum({d}{arg.gf})", f"coalesce(sum({d}{arg.dk}), 0)", arg_type)

    # -- FROM ------------------------------------------------------------------

    def from_clause(self, depth: int) -> tuple[E, Scope]:
        pick = self.rng.random()
        if depth > 0 and pick < 0.12:
            return self.derived_table(depth)
        t = self.table()
        alias = self.alias()
        item = same(f"{t.name} {alias}", BOOL)
        scope = Scope(self.table_scope(alias))
        if pick < 0.45:
            return item, scope
        joins = 1 if self.chance(0.8) else 2
        for j in range(joins):
            u = self.table()
            ualias = self.alias()
            uscope = Scope(self.table_scope(ualias))
            both = Scope(scope.columns + uscope.columns)
            kind = self.rng.choice(
                (
                    "JOIN",
                    "LEFT JOIN",
                    "RIGHT JOIN",
                    "FULL JOIN",
                    "LEFT OUTER JOIN",
                    "CROSS JOIN",
                    ",",
                )
            )
            if kind == "," and j < joins - 1:
                # `a, b JOIN c ON <a's columns>` is invalid SQL (JOIN binds tighter than the
                # comma, so ON sees only b and c); DuckDB accepts it, geaflow-sql rightly not.
                kind = "CROSS JOIN"
            filters = scope.filters
            if kind == ",":
                item = E(f"{item.gf}, {u.name} {ualias}", f"{item.dk}, {u.name} {ualias}", BOOL)
                if self.chance(0.8):
                    key = self.rng.choice([c for c in scope.columns if c.type == INT])
                    filters = [*filters, binary(key, "=", same(f"{ualias}.k", INT), BOOL)]
            elif kind == "CROSS JOIN":
                item = E(
                    f"{item.gf} CROSS JOIN {u.name} {ualias}",
                    f"{item.dk} CROSS JOIN {u.name} {ualias}",
                    BOOL,
                )
            else:
                left_key = self.rng.choice([c for c in scope.columns if c.type == INT])
                cond = binary(left_key, "=", same(f"{ualias}.k", INT), BOOL)
                if self.chance(0.3):
                    cond = binary(cond, "AND", self.pred(both, 1), BOOL)
                elif self.chance(0.1):
                    cond = self.pred(both, 1)  # a join on a non-equality condition
                item = E(
                    f"{item.gf} {kind} {u.name} {ualias} ON {cond.gf}",
                    f"{item.dk} {kind} {u.name} {ualias} ON {cond.dk}",
                    BOOL,
                )
            scope = Scope(both.columns, filters)
        return item, scope

    def derived_table(self, depth: int) -> tuple[E, Scope]:
        types = [
            self.rng.choice((INT, INT, STRING, DOUBLE)) for _ in range(self.rng.choice((1, 2, 3)))
        ]
        inner = self.select(depth - 1, types)
        if self.chance(0.25):
            other = self.select(depth - 1, types)
            op = self.rng.choice(("UNION", "UNION ALL"))
            inner = Query(
                f"{inner.geaflow} {op} {other.geaflow}", f"{inner.duckdb} {op} {other.duckdb}"
            )
        alias = self.alias()
        cols = [same(f"{alias}.c{i}", t) for i, t in enumerate(types)]
        return E(f"({inner.geaflow}) {alias}", f"({inner.duckdb}) {alias}", BOOL), Scope(cols)

    # -- SELECT ----------------------------------------------------------------

    def select(
        self, depth: int = 1, types: list[str] | None = None, global_agg: bool = True
    ) -> Query:
        """A SELECT whose output columns are ``c0, c1...`` of ``types`` (random if None)."""
        if types is None:
            types = [
                self.rng.choice((INT, INT, STRING, DOUBLE, BOOL))
                for _ in range(self.rng.choice((1, 2, 2, 3)))
            ]
        from_, scope = self.from_clause(depth)
        conds = list(scope.filters)
        if self.chance(0.55):
            conds.append(self.pred(scope, self.rng.choice((0, 1, 1, 2)), subqueries=depth > 0))
        where = join_pairs(conds, " AND ") if conds else None
        grouped = self.chance(0.4)
        if grouped:
            return self.grouped_select(types, from_, scope, where, global_agg)
        items = [
            self.scalar_subquery(scope, t)
            if depth > 0 and t != BOOL and self.chance(0.05)
            else self.expr(scope, t, 2)
            for t in types
        ]
        distinct = "DISTINCT " if self.chance(0.25) else ""
        return self.assemble(distinct, items, from_, where)

    def grouped_select(
        self, types: list[str], from_: E, scope: Scope, where: E | None, global_agg: bool = True
    ) -> Query:
        keys: list[E] = []
        if not global_agg or self.chance(0.8):
            n = min(self.rng.choice((1, 1, 2)), len(scope.columns))
            keys = self.rng.sample(scope.columns, n)
            key = self.expr(scope, keys[0].type, 1)
            # GROUP BY an expression; not a constant: GROUP BY 2 is a position.
            if self.chance(0.2) and any(c.gf in key.gf for c in scope.columns):
                keys[0] = key
        key_scope = Scope(keys)
        items = []
        for t in types:
            usable = [k for k in keys if k.type == t]
            if usable and self.chance(0.5):
                key = self.rng.choice(usable)
                if self.chance(0.2) and t in (INT, DOUBLE):  # an expression of a key
                    key = binary(key, "+", self.literal(INT), t)
                items.append(key)
            elif t == BOOL:
                agg = self.aggregate(scope, INT)
                items.append(binary(agg, ">", self.literal(INT), BOOL))
            else:
                agg = self.aggregate(scope, t)
                if self.chance(0.2) and t in (INT, DOUBLE):
                    agg = binary(agg, "+", self.literal(INT), t)
                items.append(agg)
        having = None
        if self.chance(0.4 if keys else 0.1):
            agg = self.aggregate(scope, self.rng.choice((INT, DOUBLE)))
            op = self.rng.choice(("=", "<>", "<", ">=", ">"))
            having = binary(agg, op, self.literal(agg.type), BOOL)
            if key_scope.columns and self.chance(0.3):
                having = binary(
                    having, self.rng.choice(("AND", "OR")), self.pred(key_scope, 0), BOOL
                )
        group = join_pairs(keys, ", ", " GROUP BY {}") if keys else None
        distinct = "DISTINCT " if keys and self.chance(0.1) else ""
        return self.assemble(distinct, items, from_, where, group, having)

    def assemble(
        self,
        distinct: str,
        items: list[E],
        from_: E,
        where: E | None,
        group: E | None = None,
        having: E | None = None,
    ) -> Query:
        parts = []
        for side in ("gf", "dk"):
            cols = ", ".join(f"{getattr(e, side)} AS c{i}" for i, e in enumerate(items))
            text = f"SELECT {distinct}{cols} FROM {getattr(from_, side)}"
            if where is not None:
                text += f" WHERE {getattr(where, side)}"
            if group is not None:
                text += getattr(group, side)
            if having is not None:
                text += f" HAVING {getattr(having, side)}"
            parts.append(text)
        return Query(parts[0], parts[1], width=len(items))

    # -- top level -------------------------------------------------------------

    def query(self) -> Query:
        pick = self.rng.random()
        if pick < 0.15:
            return self.union()
        if pick < 0.27:
            return self.ordered()
        return self.select(depth=1)

    def union(self) -> Query:
        types = [self.rng.choice((INT, STRING, DOUBLE)) for _ in range(self.rng.choice((1, 2)))]
        parts = [self.select(1, types) for _ in range(self.rng.choice((2, 2, 3)))]
        ops = [self.rng.choice(("UNION", "UNION ALL")) for _ in parts[1:]]
        gf, dk = parts[0].geaflow, parts[0].duckdb
        for op, p in zip(ops, parts[1:], strict=True):
            gf = f"{gf} {op} {p.geaflow}"
            dk = f"{dk} {op} {p.duckdb}"
        return Query(gf, dk, width=len(types))

    def ordered(self) -> Query:
        """ORDER BY every output column (a total order on rows), then LIMIT."""
        inner = self.select(1)
        n = inner.width
        keys_gf, keys_dk = [], []
        for i in self.rng.sample(range(n), n):
            desc = self.chance(0.4)
            nulls = self.rng.choice(("", " NULLS FIRST", " NULLS LAST"))
            direction = " DESC" if desc else ""
            keys_gf.append(f"c{i}{direction}{nulls}")
            # GeaFlow's default: NULL is the smallest value.
            default = " NULLS LAST" if desc else " NULLS FIRST"
            keys_dk.append(f"c{i}{direction}{nulls or default}")
        limit = f" LIMIT {self.rng.choice((1, 2, 3, 5))}"
        if self.chance(0.3):
            limit += f" OFFSET {self.rng.choice((1, 2))}"
        return Query(
            f"SELECT * FROM ({inner.geaflow}) q ORDER BY {', '.join(keys_gf)}{limit}",
            f"SELECT * FROM ({inner.duckdb}) q ORDER BY {', '.join(keys_dk)}{limit}",
            ordered=True,
            width=n,
        )
