"""Name resolution: which input field a name in an expression refers to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planner.logical import LogicalNode


@dataclass(frozen=True, slots=True)
class ScopeField:
    name: str
    type: Any
    index: int  # position in the input row of the node being built
    relation: str | None = None  # alias (or table name) that qualifies it
    hidden: bool = False  # not expanded by ``*`` (e.g. anonymous path variables)


@dataclass
class Scope:
    """The fields visible to an expression, grouped by the relation that provides them."""

    fields: list[ScopeField] = field(default_factory=list)
    # Relations that are graph path variables resolve ``x.f`` as a field access.
    parent: Scope | None = None

    @property
    def width(self) -> int:
        return len(self.fields)

    def has_relation(self, name: str) -> bool:
        lowered = name.lower()
        return any(f.relation is not None and f.relation.lower() == lowered for f in self.fields)

    def lookup(self, name: str) -> list[ScopeField]:
        exact = [f for f in self.fields if f.name == name]
        if exact:
            return exact
        lowered = name.lower()
        return [f for f in self.fields if f.name.lower() == lowered]

    def lookup_qualified(self, relation: str, name: str) -> list[ScopeField]:
        rel = relation.lower()
        candidates = [
            f for f in self.fields if f.relation is not None and f.relation.lower() == rel
        ]
        exact = [f for f in candidates if f.name == name]
        if exact:
            return exact
        lowered = name.lower()
        return [f for f in candidates if f.name.lower() == lowered]

    def relation_fields(self, relation: str) -> list[ScopeField]:
        rel = relation.lower()
        return [f for f in self.fields if f.relation is not None and f.relation.lower() == rel]

    def shifted(self, offset: int) -> Scope:
        return Scope(
            [
                ScopeField(f.name, f.type, f.index + offset, f.relation, f.hidden)
                for f in self.fields
            ],
            self.parent,
        )

    def concat(self, other: Scope) -> Scope:
        return Scope(self.fields + other.shifted(self.width).fields, self.parent)

    @staticmethod
    def of(schema: Any, relation: str | None = None) -> Scope:
        return Scope([ScopeField(f.name, f.type, i, relation) for i, f in enumerate(schema)])


@dataclass
class Bound:
    """A bound relation: its plan and how its fields are named in the outer query."""

    node: LogicalNode
    scope: Scope
