"""GeaFlow's Java class names of built-in functions -> our built-ins.

``CREATE FUNCTION f AS 'org.apache.geaflow.dsl.udf.table.agg.Count'`` makes
``f`` another name for COUNT.  Graph algorithm classes are registered by the
algorithm library (``runtime.algorithms``).
"""

from __future__ import annotations

from .registry import FunctionKind, register_class

_PKG = "org.apache.geaflow.dsl.udf.table"

for _cls, _name in {
    "agg.Count": "COUNT",
    "agg.Sum": "SUM",
    "agg.Avg": "AVG",
    "agg.Max": "MAX",
    "agg.Min": "MIN",
    "agg.PercentileLong": "PERCENTILE",
    "agg.PercentileDouble": "PERCENTILE",
    "agg.PercentileInteger": "PERCENTILE",
    "agg.StdDevSampLong": "STDDEV_SAMP",
    "agg.StdDevSampDouble": "STDDEV_SAMP",
    "agg.StdDevSampInteger": "STDDEV_SAMP",
}.items():
    register_class(f"{_PKG}.{_cls}", FunctionKind.AGGREGATE, _name)

for _cls, _name in {
    "string.Concat": "concat",
    "string.ConcatWS": "concat_ws",
    "string.Hash": "hash",
    "string.SplitEx": "split_ex",
    "string.Substr": "substr",
    "string.Trim": "trim",
    "string.Length": "length",
    "string.Lower": "lower",
    "string.Upper": "upper",
    "string.Replace": "replace",
    "string.Reverse": "reverse",
    "string.RegExpReplace": "regexp_replace",
    "string.RegexpExtract": "regexp_extract",
    "string.IsDecimal": "is_decimal",
    "string.GetJsonObject": "get_json_object",
    "math.Sign": "sign",
    "math.Cbrt": "cbrt",
    "math.Trunc": "trunc",
    "math.Round": "round",
    "date.Quarter": "quarter",
    "date.DayOfYear": "day_of_year",
    "other.If": "if",
}.items():
    register_class(f"{_PKG}.{_cls}", FunctionKind.SCALAR, _name)

register_class(f"{_PKG}.udtf.Split", FunctionKind.TABLE, "split")
