"""Resolving ``CREATE FUNCTION`` names: GeaFlow built-in classes or Python classes.

A function name resolves, in order, to: a function the catalog holds (created
with ``CREATE FUNCTION``), then a built-in.  A catalog function whose class is
one of GeaFlow's own built-ins (functions or graph algorithms) is just another
name for ours; any other class path is imported as Python
(``package.module.Class``) once, when CREATE FUNCTION is bound, and the loaded
function is kept on the catalog record.  Test-only classes of GeaFlow's
reference suite are looked up in a registry tests and users can extend
(``register_class_alias``).

A user scalar function called in a statement is a ``ScalarUdf`` on the bound
statement: the runtime registers it with Spark before the plan runs, under a
name unique to the function, its number of arguments and its result type.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import FunctionInfo
from geaflow_sql.core.errors import CatalogError, ValidationError
from geaflow_sql.udf import AggregateFunction, ScalarFunction, TableFunction
from planner.functions import FunctionKind, resolve_class_name

from .algorithms import signature_for_class

# Java class name -> Python "module.Class" that implements it.  Filled by
# ``register_class_alias``; GeaFlow's reference tests use classes of their own
# (MyCount, Split2, ...) and our test suite registers Python equivalents here.
_CLASS_ALIASES: dict[str, str] = {}


def register_class_alias(java_class: str, python_path: str) -> None:
    _CLASS_ALIASES[java_class] = python_path


@dataclass(frozen=True, slots=True)
class UserFunction:
    """A loaded Python user function (equal by name and class, not by instance)."""

    name: str  # catalog name
    class_path: str
    kind: FunctionKind
    instance: Any = field(compare=False)
    spark_name: str = ""  # prefix of the names the runtime registers it under

    @property
    def vectorized(self) -> bool:
        return bool(getattr(self.instance, "vectorized", False))


@dataclass(frozen=True, slots=True)
class BuiltinAlias:
    """A catalog function that names one of our built-ins."""

    name: str
    kind: FunctionKind
    builtin: str


def load_python_class(path: str) -> Any:
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        raise ValidationError(f"function class {path!r} must be written as 'module.Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        missing = getattr(err, "name", None) or ""
        if isinstance(err, ModuleNotFoundError) and (
            module_name == missing or module_name.startswith(missing + ".")
        ):
            # What GeaFlow users write is a Java class name: say so in those terms.
            raise CatalogError(
                f"cannot load function class {path!r}: there is no class {class_name} in "
                f"{module_name} on the Python path.  geaflow-sql runs Python classes, named "
                "'module.Class' (a Java class must be written again in Python: see README, "
                "User-defined functions)"
            ) from None
        raise CatalogError(
            f"cannot load function class {path!r}: importing module {module_name!r} "
            f"failed: {type(err).__name__}: {err}"
        ) from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise CatalogError(
            f"cannot load function class {path!r}: no {class_name!r} in {module_name}"
        )
    return cls


# GeaFlow's own packages: a class there that is not mapped to a built-in is
# not a Python module to import.
_GEAFLOW_PACKAGES = ("org.apache.geaflow.", "com.antgroup.geaflow.")


def resolve_function(info: FunctionInfo) -> UserFunction | BuiltinAlias:
    builtin = resolve_class_name(info.class_name)
    if builtin is not None:
        return BuiltinAlias(info.name, builtin[0], builtin[1])
    algorithm = signature_for_class(info.class_name)
    if algorithm is not None:
        return BuiltinAlias(info.name, FunctionKind.ALGORITHM, algorithm.name)
    path = _CLASS_ALIASES.get(info.class_name, info.class_name)
    if path.startswith(_GEAFLOW_PACKAGES):
        raise CatalogError(
            f"{info.class_name!r} is a GeaFlow class that geaflow-sql does not provide "
            f"({path.rsplit('.', 1)[1]}); see README, Built-in functions"
        )
    cls = load_python_class(path)
    instance = cls() if isinstance(cls, type) else cls
    if isinstance(instance, AggregateFunction):
        kind = FunctionKind.AGGREGATE
    elif isinstance(instance, TableFunction):
        kind = FunctionKind.TABLE
    elif isinstance(instance, ScalarFunction):
        kind = FunctionKind.SCALAR
    elif _looks_like_algorithm(instance):
        kind = FunctionKind.ALGORITHM
    elif callable(getattr(instance, "eval", None)):
        kind = FunctionKind.SCALAR
    else:
        raise CatalogError(
            f"function class {info.class_name!r} is not a ScalarFunction, AggregateFunction, "
            "TableFunction or algorithm"
        )
    digest = hashlib.sha1(path.encode()).hexdigest()[:10]
    return UserFunction(info.name, path, kind, instance, f"geaflow_udf_{digest}")


def _looks_like_algorithm(instance: Any) -> bool:
    return callable(getattr(instance, "process", None)) and callable(
        getattr(instance, "init", None)
    )


def parse_type_name(text: str) -> Any:
    from grammar.parser import parse

    script = parse(f"CREATE TABLE __t (x {text})")
    type_name = script.statements[0].columns[0].type  # type: ignore[attr-defined]
    args = tuple(parse_type_name_node(a) for a in type_name.args)
    return T.type_from_name(type_name.name, type_name.params, args)


def parse_type_name_node(node: Any) -> Any:
    args = tuple(parse_type_name_node(a) for a in node.args)
    return T.type_from_name(node.name, node.params, args)


@dataclass(frozen=True, slots=True)
class ScalarUdf:
    """A user scalar function as one call site uses it: ``n_args`` arguments
    returning ``result``.  A result type may depend on the argument types and
    a pandas UDF has a fixed arity, so each combination has a Spark name of
    its own."""

    function: UserFunction
    result: Any
    n_args: int

    @property
    def spark_name(self) -> str:
        digest = hashlib.sha1(str(self.result).encode()).hexdigest()[:6]
        return f"{self.function.spark_name}_{self.n_args}_{digest}"
