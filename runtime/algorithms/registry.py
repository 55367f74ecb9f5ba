"""Algorithm registry: names and GeaFlow class names -> Algorithm instances."""

from __future__ import annotations

from typing import Any

_BY_NAME: dict[str, Any] = {}
_BY_CLASS: dict[str, str] = {}


def register_algorithm(algorithm: Any, *aliases: str) -> None:
    for n in (algorithm.name, *aliases):
        _BY_NAME[n.lower()] = algorithm
    for cls in getattr(algorithm, "java_classes", ()):
        _BY_CLASS[cls] = algorithm.name.lower()


def _load() -> None:
    from . import library  # noqa: F401  (importing it registers the built-ins)


def algorithm_named(name: str) -> Any | None:
    _load()
    return _BY_NAME.get(name.lower())


def algorithm_for_class(class_name: str) -> str | None:
    _load()
    return _BY_CLASS.get(class_name)


def algorithm_names() -> list[str]:
    _load()
    return sorted(_BY_NAME)


def user_algorithm(instance: Any, name: str | None = None) -> Any:
    """An ``Algorithm`` for an instance of a user's ``geaflow_sql.udga.AlgorithmUserFunction``.

    ``CREATE FUNCTION f AS 'package.module.Class'`` loads such a class; CALL
    runs the returned adapter like a built-in.
    """
    from .udga_runner import user_algorithm as adapt

    return adapt(instance, name)
