"""GeaFlow's registered function and algorithm names, written down.

Where they come from (Apache GeaFlow, geaflow-dsl-plan; read in the public
source of apache/geaflow and its mirror osflaky/exp-apache-geaflow@fafd79b2,
whose table has every built-in the conformance corpus calls):

* ``FUNCTION_TABLE``: the entries of ``BuildInSqlFunctionTable`` (the SQL
  name is each class's ``@Description(name=...)``; looked up ignoring case).
* ``RUNTIME_AGGREGATES``: aggregates the runtime maps by name
  (``PhysicAggregateRelNode.findUDAF``), outside the table.
* ``ALGORITHMS``: the ``AlgorithmUserFunction`` classes of the table
  (``org.apache.geaflow.dsl.udf.graph``); the same class names under the
  older ``com.antgroup.geaflow`` package are TuGraph Analytics', which the
  docs use.
* ``TABLE_FUNCTIONS``: ``udtf.Split``, reached only by CREATE FUNCTION.
* ``LDBC_ALGORITHMS``: the LDBC BI vertex programs under ``dsl.udf.ldbc``, in
  no release's table; reached by CREATE FUNCTION (and here also by name).
* ``NOT_PROVIDED``: classes under ``dsl.udf`` in no release's table that
  geaflow-sql does not provide (three old-package-only algorithms); it names
  them in a clear error.

Each entry: (SQL name, class path below ``dsl.udf``).
"""

from __future__ import annotations

FUNCTION_TABLE: tuple[tuple[str, str], ...] = (
    # table/date
    ("add_months", "table.date.AddMonths"),
    ("date_add", "table.date.DateAdd"),
    ("date_diff", "table.date.DateDiff"),
    ("date_format", "table.date.DateFormat"),
    ("date_part", "table.date.DatePart"),
    ("date_sub", "table.date.DateSub"),
    ("date_trunc", "table.date.DateTrunc"),
    ("day", "table.date.Day"),
    ("day_of_month", "table.date.DayOfMonth"),
    ("day_of_year", "table.date.DayOfYear"),
    ("from_unixtime", "table.date.FromUnixTime"),
    ("from_unixtime_millis", "table.date.FromUnixTimeMillis"),
    ("hour", "table.date.Hour"),
    ("isdate", "table.date.IsDate"),
    ("lastday", "table.date.LastDay"),
    ("minute", "table.date.Minute"),
    ("month", "table.date.Month"),
    ("now", "table.date.Now"),
    ("quarter", "table.date.Quarter"),
    ("second", "table.date.Second"),
    ("unix_timestamp", "table.date.UnixTimeStamp"),
    ("unix_timestamp_millis", "table.date.UnixTimeStampMillis"),
    ("weekday", "table.date.WeekDay"),
    ("week_of_year", "table.date.WeekOfYear"),
    ("_year", "table.date.Year"),
    # table/array
    ("array_append", "table.array.ArrayAppend"),
    ("array_contains", "table.array.ArrayContains"),
    ("array_distinct", "table.array.ArrayDistinct"),
    ("array_union", "table.array.ArrayUnion"),
    # table/math
    ("cbrt", "table.math.Cbrt"),
    ("E", "table.math.E"),
    ("log2", "table.math.Log2"),
    ("round", "table.math.Round"),
    ("sign", "table.math.Sign"),
    ("trunc", "table.math.Trunc"),
    # table/string
    ("ascii2str", "table.string.Ascii2String"),
    ("base64_decode", "table.string.Base64Decode"),
    ("base64_encode", "table.string.Base64Encode"),
    ("concat", "table.string.Concat"),
    ("concat_ws", "table.string.ConcatWS"),
    ("hash", "table.string.Hash"),
    ("index_of", "table.string.IndexOf"),
    ("instr", "table.string.Instr"),
    ("isBlank", "table.string.IsBlank"),
    ("keyvalue", "table.string.KeyValue"),
    ("length", "table.string.Length"),
    ("like", "table.string.Like"),
    ("ltrim", "table.string.LTrim"),
    ("regexp", "table.string.RegExp"),
    ("regexp_count", "table.string.RegexpCount"),
    ("regexp_extract", "table.string.RegExpExtract"),
    ("regexp_replace", "table.string.RegExpReplace"),
    ("repeat", "table.string.Repeat"),
    ("replace", "table.string.Replace"),
    ("reverse", "table.string.Reverse"),
    ("rtrim", "table.string.RTrim"),
    ("space", "table.string.Space"),
    ("split_ex", "table.string.SplitEx"),
    ("substr", "table.string.Substr"),
    ("urldecode", "table.string.UrlDecode"),
    ("urlencode", "table.string.UrlEncode"),
    ("get_json_object", "table.string.GetJsonObject"),
    # table/other (graph element functions among them)
    ("if", "table.other.If"),
    ("is_decimal", "table.other.IsDecimal"),
    ("label", "table.other.Label"),
    ("id", "table.other.VertexId"),
    ("srcId", "table.other.EdgeSrcId"),
    ("targetId", "table.other.EdgeTargetId"),
    ("ts", "table.other.EdgeTimestamp"),
    ("direction", "table.other.Direction"),
    ("is_source_of", "table.other.IsSourceOf"),
    ("is_not_source_of", "table.other.IsNotSourceOf"),
    ("is_destination_of", "table.other.IsDestinationOf"),
    ("is_not_destination_of", "table.other.IsNotDestinationOf"),
    ("is_labeled", "table.other.IsLabeled"),
    ("is_not_labeled", "table.other.IsNotLabeled"),
    ("property_exists", "table.other.PropertyExists"),
    # table/agg in the table
    ("percentile", "table.agg.PercentileLong"),
    ("percentile", "table.agg.PercentileInteger"),
    ("percentile", "table.agg.PercentileDouble"),
)

RUNTIME_AGGREGATES: tuple[tuple[str, str], ...] = (
    ("count", "table.agg.Count"),
    ("sum", "table.agg.SumLong"),
    ("sum", "table.agg.SumDouble"),
    ("sum", "table.agg.SumInteger"),
    ("avg", "table.agg.AvgLong"),
    ("avg", "table.agg.AvgDouble"),
    ("avg", "table.agg.AvgInteger"),
    ("max", "table.agg.MaxLong"),
    ("max", "table.agg.MaxDouble"),
    ("max", "table.agg.MaxInteger"),
    ("max", "table.agg.MaxBinaryString"),
    ("min", "table.agg.MinLong"),
    ("min", "table.agg.MinDouble"),
    ("min", "table.agg.MinInteger"),
    ("min", "table.agg.MinBinaryString"),
    ("stddev_samp", "table.agg.StdDevSampLong"),
    ("stddev_samp", "table.agg.StdDevSampDouble"),
    ("stddev_samp", "table.agg.StdDevSampInteger"),
)

TABLE_FUNCTIONS: tuple[tuple[str, str], ...] = (("split", "table.udtf.Split"),)

ALGORITHMS: tuple[tuple[str, str], ...] = (
    ("page_rank", "graph.PageRank"),
    ("sssp", "graph.SingleSourceShortestPath"),
    ("assp", "graph.AllSourceShortestPath"),
    ("khop", "graph.KHop"),
    ("kcore", "graph.KCore"),
    ("closeness_centrality", "graph.ClosenessCentrality"),
    ("wcc", "graph.WeakConnectedComponents"),
    ("triangle_count", "graph.TriangleCount"),
    ("inc_wcc", "graph.IncWeakConnectedComponents"),
    ("common_neighbors", "graph.CommonNeighbors"),
    ("inc_khop", "graph.IncKHopAlgorithm"),
    ("incremental_kcore", "graph.IncrementalKCore"),
    ("inc_mst", "graph.IncMinimumSpanningTree"),
    ("cluster_coefficient", "graph.ClusterCoefficient"),
    ("jaccard_similarity", "graph.JaccardSimilarity"),
    ("lpa", "graph.LabelPropagation"),
    ("cc", "graph.ConnectedComponents"),
    ("louvain", "graph.Louvain"),
)

# The LDBC BI vertex programs (``org.apache.geaflow.dsl.udf.ldbc``), outside
# the table: GeaFlow's LDBC BI queries 15, 19 and 20 reach them by CREATE FUNCTION.
LDBC_ALGORITHMS: tuple[tuple[str, str], ...] = (
    ("bi15_connection", "ldbc.BIConnectionPathAlgorithm"),
    ("bi19_interaction", "ldbc.BICityInteractionAlgorithm"),
    ("bi20_recruitment", "ldbc.BIRecruitmentAlgorithm"),
)

NOT_PROVIDED: tuple[tuple[str, str], ...] = (
    ("common_neighbors_for_vertex_set", "graph.CommonNeighborsForVertexSet"),
    ("jaccard", "graph.JaccardAlgorithm"),
    ("path_cycle_detection", "graph.PathCycleDetection"),
)

PACKAGES = ("org.apache.geaflow.dsl.udf.", "com.antgroup.geaflow.dsl.udf.")
