"""Graph operators (MATCH, algorithms) — filled in by the graph work."""
