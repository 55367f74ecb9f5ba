"""The planner: binder, logical plan, rules, PipelineGraph, ExecutionGraph, EXPLAIN."""
