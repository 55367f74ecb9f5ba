"""Runs GeaFlow's reference query tests against geaflow-sql (see runner.py)."""

from .runner import ConformanceRunner, Report, compare_text, default_corpus_path

__all__ = ["ConformanceRunner", "Report", "compare_text", "default_corpus_path"]
