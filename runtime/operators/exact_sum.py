"""A sum of doubles that does not depend on how the rows are partitioned.

Spark adds doubles in the order rows reach each partial aggregate, so the
same SUM or AVG can end in a different last bit with another number of
shuffle partitions, adaptive execution on or off, or a cluster
(95.99999999999999, 96.0 or 96.00000000000001).  Here each value is split,
exactly, into whole numbers that are summed as BIGINTs, which is exact, so
the order does not matter:

* a finite value with 2^-128 <= |x| < 2^128 falls in one of eight bands of
  32 binary orders of magnitude (band k: 2^32k <= |x| < 2^(32k+32));
  multiplied by 2^(53 - 32k) it is a whole number below 2^86 (a
  power-of-two scaling is exact), cut into three limbs of 32 bits with its
  sign (exact quotients by powers of two, truncated);
* a limb of band k weighs 2^(32(k + i) - 53) for i = 0, 1, 2, so the limbs
  of all bands land on ten places, each summed as a BIGINT (a sum of up to
  2^31 - 1 limbs cannot overflow; a group with more values falls back to a
  double sum);
* the ten exact sums are turned into doubles and added from the smallest
  place to the largest: a fixed order, so the result is the same however
  the rows were split, and within a few units in the last place of the
  exact sum.

Zeros add nothing.  Values outside the bands (beyond 3.4 * 10^38, below
2.9 * 10^-39, NaN, infinities) are summed as doubles and added last; only
their order can vary, and NaN and infinities give what a double sum gives.
What each row adds to each place is computed once a row, before the
aggregate (``helper_columns``), so the aggregate is ten plain BIGINT sums
(choosing the limb inside each sum's argument instead took 0.43-0.63 s
against 0.28-0.34 s for SUM and AVG over 3 million rows; Spark's plain sums
0.22-0.27 s).  ``python bench/groupby_10m.py`` measures the cost
against Spark's plain sums (``geaflow.dsl.sum.exact = false``).
"""

from __future__ import annotations

BANDS = range(-4, 4)  # 2^-128 .. 2^128, 32 binary orders each
POSITIONS = range(BANDS[0], BANDS[-1] + 3)  # where a band's three limbs land
_LOW, _HIGH = 2.0**-128, 2.0**128
# Limbs are below 2^32: a sum of 2^31 of them fits a BIGINT.
MAX_EXACT_ROWS = 2**31 - 1


def helper_columns(x: str, name: str) -> list[list[str]]:
    """SQL select items computing, once a row, what the sum of the double
    expression ``x`` adds up: ``<name>_band`` (NULL for a value outside the
    bands), the three 32-bit limbs ``<name>_hi|mid|lo`` of the value as a
    whole number of its band, each put on its place (``place``), and
    ``<name>_out`` (a nonzero value outside the bands, else NULL).  Steps,
    each reading the columns of the one before."""
    a = f"abs({x})"
    band = " ".join(f"WHEN {a} >= {2.0 ** (32 * k)!r} THEN {k}" for k in reversed(BANDS))
    scale = " ".join(f"WHEN {k} THEN {2.0 ** (53 - 32 * k)!r}" for k in BANDS)
    # Exact: a power-of-two scaling (a whole number below 2^86), then
    # truncations of exact quotients and exact differences.
    whole = f"{name}_x * CASE {name}_band {scale} END"
    high = f"CAST({name}_hi AS DOUBLE) * {2.0**64!r}"
    middle = f"CAST({name}_mid AS DOUBLE) * {2.0**32!r}"
    return [
        [
            f"CASE WHEN {a} < {_HIGH!r} THEN CASE {band} END END AS {name}_band",
            f"{x} AS {name}_x",
        ],
        [
            f"CASE WHEN {name}_band IS NULL AND {name}_x != 0.0D THEN {name}_x END AS {name}_out",
            f"{whole} AS {name}_whole",
        ],
        [f"CAST({name}_whole / {2.0**64!r} AS BIGINT) AS {name}_hi"],
        [f"CAST(({name}_whole - {high}) / {2.0**32!r} AS BIGINT) AS {name}_mid"],
        [f"CAST({name}_whole - {high} - {middle} AS BIGINT) AS {name}_lo"],
        [
            f"CASE {name}_band WHEN {p} THEN {name}_lo WHEN {p - 1} THEN {name}_mid "
            f"WHEN {p - 2} THEN {name}_hi END AS {place(name, p)}"
            for p in POSITIONS
        ],
    ]


def place(name: str, p: int) -> str:
    """The column holding what a row adds to place ``p`` (weight
    2^(32p - 53)): one of its value's limbs, or NULL."""
    return f"{name}_p{p - POSITIONS[0]}"


def exact_sum_sql(name: str) -> tuple[str, str]:
    """(SQL of the sum, SQL of the count of non-null values) over the
    ``helper_columns`` called ``name``: the sum is NULL when every value is
    NULL, as SUM's."""
    parts = []
    for p in POSITIONS:
        total = f"sum({place(name, p)})"
        parts.append(f"coalesce(CAST({total} AS DOUBLE) * {2.0 ** (32 * p - 53)!r}, 0.0D)")
    outside = f"coalesce(sum({name}_out), 0.0D)"
    count = f"count({name}_x)"
    added = " + ".join(parts)  # the smallest place first: a fixed order
    return (
        f"CASE WHEN {count} = 0 THEN NULL "
        f"WHEN {count} > {MAX_EXACT_ROWS} THEN sum({name}_x) "
        f"ELSE ({added}) + {outside} END",
        count,
    )


def exact_avg_sql(name: str) -> str:
    """Spark SQL text of the exact average: ``exact_sum_sql``'s sum over its count."""
    total, count = exact_sum_sql(name)
    return f"({total}) / {count}"
