"""SUM and AVG of doubles on the local engine, to the bit as Spark's exact sum.

Spark's path sums doubles exactly (``runtime.operators.exact_sum``): each
value is cut into 32-bit limbs on ten places, each place is a BIGINT sum,
and the ten sums become doubles added from the smallest place up.  Every
step is exact or a correctly rounded IEEE operation in a fixed order, so the
same steps in DuckDB give the same double:

* ``abs``, comparisons, multiplication by a power of two and the exact
  quotients and differences are IEEE operations in both;
* Spark's ``CAST(double AS BIGINT)`` truncates, DuckDB's rounds: ``trunc``
  first;
* a place's sum is below 2^63 (at most 2^31 - 1 limbs below 2^32), so it
  is a BIGINT before it becomes a DOUBLE (DuckDB's HUGEINT-to-DOUBLE is not
  correctly rounded; BIGINT-to-DOUBLE is, as Java's long-to-double).

Values outside the bands (beyond 2^128, below 2^-128, NaN, infinities) are
summed as plain doubles on Spark, in an order neither engine fixes: a group
with two or more of them fails here, and Spark runs the statement.
"""

from __future__ import annotations

from runtime.operators.exact_sum import BANDS, POSITIONS

_LOW, _HIGH = 2.0**-128, 2.0**128


def _d(value: float) -> str:
    """A DOUBLE literal (DuckDB reads ``4294967296.0`` as a DECIMAL)."""
    return f"CAST({value!r} AS DOUBLE)"


def helper_layers(x: str, name: str) -> list[list[str]]:
    """Select items over a row computing what the double ``x`` adds, in
    layers (each a projection over the one before it, so that no expression
    is written out twice): its value ``<name>_x``, the value outside the
    bands ``<name>_out`` (else NULL), and what it adds to each place
    (``place``; NULL elsewhere)."""
    v, b, w = f"{name}_x", f"{name}_b", f"{name}_w"
    hi, mid, lo = f"{name}_hi", f"{name}_mid", f"{name}_lo"
    a = f"abs({v})"
    band = " ".join(f"WHEN {a} >= {_d(2.0 ** (32 * k))} THEN {k}" for k in reversed(BANDS))
    scale = " ".join(f"WHEN {k} THEN {_d(2.0 ** (53 - 32 * k))}" for k in BANDS)
    high = f"(CAST({hi} AS DOUBLE) * {_d(2.0**64)})"
    middle = f"(CAST({mid} AS DOUBLE) * {_d(2.0**32)})"
    return [
        [f"{x} AS {v}"],
        [f"(CASE WHEN {a} < {_d(_HIGH)} THEN CASE {band} END END) AS {b}"],
        [
            f"({v} * CASE {b} {scale} END) AS {w}",
            f"CASE WHEN {b} IS NULL AND {v} != {_d(0.0)} THEN {v} END AS {name}_out",
        ],
        [f"CAST(trunc({w} / {_d(2.0**64)}) AS BIGINT) AS {hi}"],
        [f"CAST(trunc(({w} - {high}) / {_d(2.0**32)}) AS BIGINT) AS {mid}"],
        [f"CAST(trunc({w} - {high} - {middle}) AS BIGINT) AS {lo}"],
        [
            f"CASE {b} WHEN {p} THEN {lo} WHEN {p - 1} THEN {mid} "
            f"WHEN {p - 2} THEN {hi} END AS {place(name, p)}"
            for p in POSITIONS
        ],
    ]


def place(name: str, p: int) -> str:
    return f"{name}_p{p - POSITIONS[0]}"


def exact_sum(name: str) -> tuple[str, str]:
    """(the sum, the count of non-null values) over ``helper_layers``
    called ``name``, as aggregate SQL: NULL when there are no values."""
    parts = [
        f"coalesce(CAST(CAST(sum({place(name, p)}) AS BIGINT) AS DOUBLE) * "
        f"{_d(2.0 ** (32 * p - 53))}, {_d(0.0)})"
        for p in POSITIONS
    ]
    count = f"count({name}_x)"
    outside = (
        f"CASE WHEN count({name}_out) > 1 THEN error('two doubles beyond the exact bands') "
        f"ELSE coalesce(sum({name}_out), {_d(0.0)}) END"
    )
    added = " + ".join(parts)  # the smallest place first, as Spark's
    return f"CASE WHEN {count} = 0 THEN NULL ELSE ({added}) + {outside} END", count
