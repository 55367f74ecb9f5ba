"""The few Java behaviours GeaFlow's algorithms leak into their results.

GeaFlow's algorithms compare component labels as Java strings (``"10" <
"9"``), cast CALL arguments to the graph's id type, and — in Louvain — break
ties by the iteration order of a ``java.util.HashMap``.  These helpers
reproduce those facts with numpy so both engines agree with GeaFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geaflow_sql.core.errors import ValidationError

_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}


def type_name(t: Any) -> str:
    return str(getattr(t, "name", t) or "").upper()


def cast_to_id(value: Any, id_type: Any, what: str = "vertex id") -> Any:
    """A CALL argument as a vertex id of ``id_type`` (GeaFlow casts it the same way)."""
    if value is None:
        raise ValidationError(f"{what} must not be null")
    name = type_name(id_type)
    if name in _INTEGER_BITS:
        if isinstance(value, bool):
            raise ValidationError(f"{what} must be a number, got {value!r}")
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return int(value)  # Java's Number.longValue() truncates
        try:
            return int(str(value).strip())
        except ValueError:
            raise ValidationError(f"{what} {value!r} is not a {name.lower()}") from None
    if name in ("DOUBLE", "FLOAT"):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValidationError(f"{what} {value!r} is not a number") from None
    return java_string(value)


def java_string(value: Any) -> str:
    """``String.valueOf`` of an id (doubles print the Java way)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        from geaflow_sql.core.values import java_double

        return java_double(float(value))
    return str(value)


def java_strings(ids: np.ndarray) -> np.ndarray:
    """``String.valueOf`` of every id, as an object array."""
    if ids.dtype.kind in "iu":
        return ids.astype(str).astype(object)
    return np.array([java_string(v) for v in ids.tolist()], dtype=object)


def string_ranks(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank of each id's Java string among all of them, and the inverse order.

    Java's ``String.compareTo`` compares UTF-16 code units; for text in the
    Basic Multilingual Plane that is Python's code point order, which numpy's
    sort of ``str`` arrays follows.  Returns ``(rank, order)`` with
    ``ids[order[r]]`` the id whose string has rank ``r``.
    """
    strings = java_strings(ids).astype(str)
    order = np.argsort(strings, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids), dtype=np.int64)
    return rank, order


# ---------------------------------------------------------------------------
# java.util.HashMap iteration order
# ---------------------------------------------------------------------------


def _to_int32(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def java_hash_codes(ids: np.ndarray, id_type: Any) -> np.ndarray:
    """``hashCode()`` of each id as its Java boxed type (Long, Integer, String)."""
    name = type_name(id_type)
    if name == "BIGINT":
        v = ids.astype(np.int64).view(np.uint64)
        return (v ^ (v >> np.uint64(32))).astype(np.uint32).view(np.int32)
    if name in _INTEGER_BITS:
        return _to_int32(ids.astype(np.int64))
    if name in ("DOUBLE", "FLOAT"):
        bits = ids.astype(np.float64).view(np.uint64)
        return (bits ^ (bits >> np.uint64(32))).astype(np.uint32).view(np.int32)
    return np.array([_string_hash(s) for s in java_strings(ids).tolist()], dtype=np.int32)


def _string_hash(text: str) -> int:
    """Java ``String.hashCode`` (31-polynomial over UTF-16 code units, int32)."""
    data = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | (data[i + 1] << 8))) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def hashmap_capacity(size: np.ndarray) -> np.ndarray:
    """Table size of a default ``HashMap`` after ``size`` insertions (16, doubling at 3/4)."""
    size = np.asarray(size, dtype=np.int64)
    cap = np.full(size.shape, 16, dtype=np.int64)
    while True:
        grow = size > (cap * 3) // 4
        if not grow.any():
            return cap
        cap = np.where(grow, cap * 2, cap)


def hashmap_bucket(hash_codes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """The bucket a key lands in: ``(h ^ (h >>> 16)) & (capacity - 1)``."""
    h = hash_codes.astype(np.int32).view(np.uint32).astype(np.int64)
    spread = h ^ (h >> 16)
    return spread & (capacity - 1)


# ---------------------------------------------------------------------------
# Which task of a graph's shards holds a vertex
# ---------------------------------------------------------------------------


def murmur_hash(codes: np.ndarray) -> np.ndarray:
    """Murmur3's 32-bit hash of one int (seed 0), made non-negative as GeaFlow does."""
    with np.errstate(over="ignore"):
        k = codes.astype(np.int32).view(np.uint32).astype(np.uint64)
        mask = np.uint64(0xFFFFFFFF)

        def rotl(x: np.ndarray, r: int) -> np.ndarray:
            return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & mask

        k = (k * np.uint64(0xCC9E2D51)) & mask
        k = rotl(k, 15)
        k = (k * np.uint64(0x1B873593)) & mask
        h = rotl(k, 13)
        h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & mask
        h ^= np.uint64(4)
        h ^= h >> np.uint64(16)
        h = (h * np.uint64(0x85EBCA6B)) & mask
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(0xC2B2AE35)) & mask
        h ^= h >> np.uint64(16)
    signed = h.astype(np.uint32).view(np.int32).astype(np.int64)
    return np.where(signed >= 0, signed, np.where(signed == -(2**31), 0, -signed))


def shard_of(ids: np.ndarray, id_type: Any, shard_count: int) -> np.ndarray:
    """The shard (= the task, when a graph runs at its shard count) of each vertex id.

    GeaFlow assigns a vertex to key group ``murmur(id.hashCode()) % shards``;
    an algorithm runs with one task per shard.
    """
    if shard_count <= 1:
        return np.zeros(len(ids), dtype=np.int64)
    return murmur_hash(java_hash_codes(ids, id_type)) % shard_count
