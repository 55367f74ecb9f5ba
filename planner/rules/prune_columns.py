"""prune_columns: read and compute only the fields something downstream uses.

    Project(TableScan(t: a, b, c), [$0])  ->  Project(TableScan(t, columns=[a]), [$0])

Walks the plan from the sinks down, carrying the set of fields each parent
needs; table scans read fewer columns, projections drop unused expressions and
aggregates drop unused calls.  Union inputs and graph operators keep all their
fields.
"""

from __future__ import annotations

from dataclasses import replace

from planner.expressions import input_refs, remap_refs
from planner.logical import (
    AggCall,
    Aggregate,
    Correlate,
    Filter,
    Join,
    LogicalNode,
    Project,
    Sort,
    SortKey,
    TableFunction,
    TableScan,
)

Mapping = dict[int, int]


def _identity(n: int) -> Mapping:
    return {i: i for i in range(n)}


def prune_columns(plan: LogicalNode) -> LogicalNode:
    memo: dict[tuple[int, frozenset[int]], tuple[LogicalNode, Mapping]] = {}

    def prune(node: LogicalNode, required: frozenset[int]) -> tuple[LogicalNode, Mapping]:
        key = (id(node), required)
        if key in memo:
            return memo[key]
        result = _prune(node, required)
        memo[key] = result
        return result

    def keep_all(node: LogicalNode) -> tuple[LogicalNode, Mapping]:
        new_inputs = []
        changed = False
        for child in node.inputs:
            new_child, mapping = prune(child, frozenset(range(len(child.schema))))
            if mapping != _identity(len(child.schema)):
                # The child must keep its full shape for this parent.
                new_child = child
            changed |= new_child is not child
            new_inputs.append(new_child)
        out = node.with_inputs(*new_inputs) if changed else node
        return out, _identity(len(node.schema))

    def _prune(node: LogicalNode, required: frozenset[int]) -> tuple[LogicalNode, Mapping]:
        if isinstance(node, TableScan):
            cols = (
                node.projection
                if node.projection is not None
                else tuple(range(len(node.table.columns)))
            )
            needed = set(required)
            for f in node.filters:
                needed |= input_refs(f)
            if not needed:
                needed = {0} if cols else set()
            keep = sorted(needed)
            if len(keep) == len(cols):
                return node, _identity(len(cols))
            mapping = {old: new for new, old in enumerate(keep)}
            filters = tuple(remap_refs(f, mapping) for f in node.filters)
            return replace(node, projection=tuple(cols[i] for i in keep), filters=filters), mapping
        if isinstance(node, Project):
            keep = sorted(required)
            if not keep and node.exprs:
                keep = [0]
            child_needed: set[int] = set()
            for i in keep:
                child_needed |= input_refs(node.exprs[i])
            child, cmap = prune(node.input, frozenset(child_needed))
            exprs = tuple(remap_refs(node.exprs[i], cmap) for i in keep)
            fields = tuple(node.fields_[i] for i in keep)
            out: LogicalNode = Project(child, exprs, fields)
            if out == node:
                out = node
            return out, {old: new for new, old in enumerate(keep)}
        if isinstance(node, Filter):
            needed = set(required) | input_refs(node.condition)
            child, cmap = prune(node.input, frozenset(needed))
            cond = remap_refs(node.condition, cmap)
            out = node if child is node.input else Filter(child, cond)
            return out, cmap
        if isinstance(node, Sort):
            needed = set(required) | {k.index for k in node.keys}
            child, cmap = prune(node.input, frozenset(needed))
            if child is node.input:
                return node, cmap
            keys = tuple(SortKey(cmap[k.index], k.descending, k.nulls_first) for k in node.keys)
            return Sort(child, keys, node.limit, node.offset), cmap
        if isinstance(node, Aggregate):
            k = len(node.group)
            calls = [i for i in range(len(node.calls)) if (k + i) in required]
            if not node.group and node.calls and not calls:
                # A global aggregate is one row even over no input: keeping one
                # call keeps it global (with none it would be a DISTINCT of nothing).
                calls = [0]
            needed = set(node.group)
            for i in calls:
                needed |= set(node.calls[i].args)
            child, cmap = prune(node.input, frozenset(needed))
            new_calls = tuple(
                AggCall(
                    c.function,
                    tuple(cmap[a] for a in c.args),
                    c.distinct,
                    c.type,
                    c.constants,
                    c.user_function,
                )
                for c in (node.calls[i] for i in calls)
            )
            fields = node.fields_[:k] + tuple(node.fields_[k + i] for i in calls)
            out = Aggregate(
                child, tuple(cmap[g] for g in node.group), new_calls, fields, node.internal
            )
            if out == node:
                out = node
            mapping = _identity(k)
            for new, old in enumerate(calls):
                mapping[k + old] = k + new
            return out, mapping
        if isinstance(node, Join):
            lw = len(node.left.schema)
            cond_refs = input_refs(node.condition) if node.condition is not None else set()
            semi = node.join_type in ("SEMI", "ANTI")
            need_left = {i for i in required if i < lw} | {i for i in cond_refs if i < lw}
            need_right = {i - lw for i in cond_refs if i >= lw}
            if not semi:
                need_right |= {i - lw for i in required if i >= lw}
            left, lmap = prune(node.left, frozenset(need_left))
            right, rmap = prune(node.right, frozenset(need_right))
            new_lw = len(left.schema)
            full = dict(lmap)
            for old, new in rmap.items():
                full[old + lw] = new + new_lw
            join_cond = remap_refs(node.condition, full) if node.condition is not None else None
            out = (
                node
                if (left is node.left and right is node.right)
                else Join(left, right, node.join_type, join_cond)
            )
            mapping = dict(lmap) if semi else full
            return out, mapping
        if isinstance(node, Correlate):
            iw = len(node.input.schema)
            needed = {i for i in required if i < iw}
            for a in node.function.args:
                needed |= input_refs(a)
            child, cmap = prune(node.input, frozenset(needed))
            if child is node.input:
                return node, _identity(len(node.schema))
            fn = node.function
            new_fn = TableFunction(
                fn.name, tuple(remap_refs(a, cmap) for a in fn.args), fn.output, fn.implementation
            )
            out = Correlate(child, new_fn)
            new_iw = len(child.schema)
            mapping = dict(cmap)
            for j in range(len(fn.output)):
                mapping[iw + j] = new_iw + j
            return out, mapping
        return keep_all(node)

    root, _ = prune(plan, frozenset(range(len(plan.schema))))
    if root.schema != plan.schema:
        # Roots (sinks, jobs) keep their shape; pruning only happens below them.
        return plan
    return root
