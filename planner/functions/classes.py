"""GeaFlow's Java class names of built-in functions -> our built-ins.

``CREATE FUNCTION f AS 'org.apache.geaflow.dsl.udf.table.agg.Count'`` makes
``f`` another name for COUNT.  Both package roots are known: Apache GeaFlow's
``org.apache.geaflow`` and the older ``com.antgroup.geaflow`` (TuGraph
Analytics).  Graph algorithm classes are registered by the algorithm library
(``runtime.algorithms``).
"""

from __future__ import annotations

from .specs import FunctionKind, register_class

PACKAGES = ("org.apache.geaflow.dsl.udf.table", "com.antgroup.geaflow.dsl.udf.table")

# Aggregates: GeaFlow has one class per argument type; all map to one built-in.
_AGGREGATES = {
    "Count": "COUNT",
    "Sum": "SUM",
    "Avg": "AVG",
    "Max": "MAX",
    "Min": "MIN",
    "Percentile": "PERCENTILE",
    "StdDevSamp": "STDDEV_SAMP",
    "BitAnd": "BIT_AND",
    "BitOr": "BIT_OR",
    "BoolAnd": "BOOL_AND",
    "BoolOr": "BOOL_OR",
}
_TYPE_SUFFIXES = ("", "Integer", "Long", "Double", "BinaryString", "String")

_SCALARS = {
    # date
    "date.AddMonths": "add_months",
    "date.DateAdd": "date_add",
    "date.DateDiff": "date_diff",
    "date.DateFormat": "date_format",
    "date.DatePart": "date_part",
    "date.DateSub": "date_sub",
    "date.DateTrunc": "date_trunc",
    "date.Day": "day",
    "date.DayOfMonth": "day_of_month",
    "date.DayOfYear": "day_of_year",
    "date.FromUnixTime": "from_unixtime",
    "date.FromUnixTimeMillis": "from_unixtime_millis",
    "date.Hour": "hour",
    "date.IsDate": "isdate",
    "date.LastDay": "lastday",
    "date.Minute": "minute",
    "date.Month": "month",
    "date.Now": "now",
    "date.Quarter": "quarter",
    "date.Second": "second",
    "date.UnixTimeStamp": "unix_timestamp",
    "date.UnixTimeStampMillis": "unix_timestamp_millis",
    "date.WeekDay": "weekday",
    "date.WeekOfYear": "week_of_year",
    "date.Year": "_year",
    # array
    "array.ArrayAppend": "array_append",
    "array.ArrayContains": "array_contains",
    "array.ArrayDistinct": "array_distinct",
    "array.ArrayMax": "array_max",
    "array.ArrayMin": "array_min",
    "array.ArrayReverse": "array_reverse",
    "array.ArrayUnion": "array_union",
    # math
    "math.Cbrt": "cbrt",
    "math.E": "e",
    "math.Log2": "log2",
    "math.Round": "round",
    "math.Sign": "sign",
    "math.Trunc": "trunc",
    # string
    "string.Ascii2String": "ascii2str",
    "string.Base64Decode": "base64_decode",
    "string.Base64Encode": "base64_encode",
    "string.Concat": "concat",
    "string.ConcatWS": "concat_ws",
    "string.GetJsonObject": "get_json_object",
    "string.Hash": "hash",
    "string.IndexOf": "index_of",
    "string.Instr": "instr",
    "string.IsBlank": "isblank",
    "string.KeyValue": "keyvalue",
    "string.Length": "length",
    "string.Like": "like",
    "string.Lower": "lower",
    "string.LPad": "lpad",
    "string.LTrim": "ltrim",
    "string.RegExp": "regexp",
    "string.RegexpCount": "regexp_count",
    "string.RegExpExtract": "regexp_extract",
    "string.RegexpExtract": "regexp_extract",
    "string.RegExpReplace": "regexp_replace",
    "string.Repeat": "repeat",
    "string.Replace": "replace",
    "string.Reverse": "reverse",
    "string.RPad": "rpad",
    "string.RTrim": "rtrim",
    "string.Space": "space",
    "string.SplitEx": "split_ex",
    "string.Substr": "substr",
    "string.Trim": "trim",
    "string.Upper": "upper",
    "string.UrlDecode": "urldecode",
    "string.UrlEncode": "urlencode",
    "string.IsDecimal": "is_decimal",
    # other
    "other.If": "if",
    "other.IsDecimal": "is_decimal",
    # graph elements (bound by planner.binder.graph_functions)
    "other.Label": "label",
    "other.VertexId": "id",
    "other.EdgeSrcId": "srcid",
    "other.EdgeTargetId": "targetid",
    "other.EdgeTimestamp": "ts",
    "other.Direction": "direction",
    "other.IsSourceOf": "is_source_of",
    "other.IsNotSourceOf": "is_not_source_of",
    "other.IsDestinationOf": "is_destination_of",
    "other.IsNotDestinationOf": "is_not_destination_of",
    "other.IsLabeled": "is_labeled",
    "other.IsNotLabeled": "is_not_labeled",
    "other.PropertyExists": "property_exists",
}

for _pkg in PACKAGES:
    for _base, _name in _AGGREGATES.items():
        for _suffix in _TYPE_SUFFIXES:
            register_class(f"{_pkg}.agg.{_base}{_suffix}", FunctionKind.AGGREGATE, _name)
    for _cls, _name in _SCALARS.items():
        register_class(f"{_pkg}.{_cls}", FunctionKind.SCALAR, _name)
    register_class(f"{_pkg}.udtf.Split", FunctionKind.TABLE, "split")
