"""The binder: syntax tree -> bound statements with logical plans."""

from .context import BindContext
from .statements import StatementBinder

__all__ = ["BindContext", "StatementBinder"]
