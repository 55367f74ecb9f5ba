"""EXPLAIN's picture drawn by Graphviz: the DOT text
(``planner/explain_dot.py``) as SVG, for ``geaflow-sql --explain --format
svg`` and the web console."""

from __future__ import annotations

import shutil
import subprocess

from .core.errors import ConfigError


def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def svg_of(dot: str) -> str:
    """``dot`` drawn as SVG by Graphviz's ``dot`` program (a ConfigError
    without it, or when it fails)."""
    program = shutil.which("dot")
    if program is None:
        raise ConfigError(
            "drawing a plan as SVG needs Graphviz's dot program "
            "(Debian: apt-get install graphviz); its DOT text is the same picture"
        )
    done = subprocess.run(
        [program, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise ConfigError(f"Graphviz could not draw the plan: {done.stderr.strip()}")
    return done.stdout
