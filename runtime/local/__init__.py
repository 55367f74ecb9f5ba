"""The local engine: a query on small inputs runs on the driver, vectorised.

A Spark job costs a few tenths of a second however little it reads; a query
whose inputs are a few megabytes spends nearly all its time in that cost.  A
query the local engine can run the same way (``translate``: a MATCH of
fixed-length hops and the relational operators over it, with the expressions
and aggregates whose values both engines agree on) and whose inputs are kept
scans of files of at most ``geaflow.dsl.query.local.max.bytes`` runs as one
DuckDB query over Arrow copies of those scans (``inputs``: made by one Spark
job per version of the files, then kept beside the scan).

Why DuckDB: the local path has to run whole plans (joins, filters,
aggregates, sorts), not only the pattern's expansion; DuckDB runs them as
vectorised, multi-threaded operators directly over Arrow without copying, and
is one wheel from PyPI.  Hand-written numpy joins would be a second engine to
keep right.  Why the driver and not one Spark task: the goal is to pay no
Spark job at all once the inputs are kept; a task would still cost one.
"""
