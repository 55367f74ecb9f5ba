"""Built-in string functions: GeaFlow's string UDFs and Calcite's standard ones.

GeaFlow's versions are Java methods over ``String``; where Spark's function of
the same name behaves differently the builder reproduces the Java behaviour:

* ``concat`` skips null arguments; ``concat_ws`` prints a null argument as an
  empty field and treats a null separator as '' (Spark drops / returns null).
* ``substr`` returns null when ``|pos|`` is beyond the string (Spark gives '').
* ``replace`` leaves the text alone when the search or replacement is null.
* ``regexp`` with an empty pattern is false; ``regexp_extract`` with an empty
  pattern or a negative group is null.
* ``index_of`` is 0-based and -1 for nulls; ``instr`` takes a start and an
  occurrence and returns BIGINT; ``length`` returns BIGINT.
* ``split_ex`` splits on the whole separator as literal text, keeping empty
  pieces; an empty text has no pieces.
* ``ascii2str`` makes one byte of UTF-8 from the number's low 8 bits.
* ``isBlank`` is true for null and whitespace-only text.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T

from ..dialect import template
from .helpers import (
    all_string,
    anon,
    cast,
    fixed,
    scalar,
    string,
    string_then_ints,
    strings_then_bigints,
    strings_then_ints,
)

_STR = fixed(T.VARCHAR)


def _as_string(e: exp.Expression, t: Any) -> exp.Expression:
    return e if t.is_string else cast(e, "STRING")


def _concat(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Java's StringBuilder loop skips nulls; Spark's concat returns null.
    return anon(
        "concat_ws", [string(""), *[_as_string(a, t) for a, t in zip(args, types, strict=True)]]
    )


def _concat_ws(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # StringUtils.join: a null element is an empty field; a null separator joins with ''.
    items = anon("array", [_as_string(a, t) for a, t in zip(args[1:], types[1:], strict=True)])
    return template("array_join({1}, coalesce({0}, ''), '')", args[0], items)


def _hash(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Math.abs(value.hashCode()): GeaFlow's strings hash with Spark's Murmur3
    # (seed 42, UTF-8 bytes); Java ints hash to themselves, longs to
    # (int)(v ^ v >>> 32), booleans to 1231/1237.
    t = types[0]
    if t.name in ("INTEGER", "SMALLINT", "TINYINT"):
        return template("abs(CAST({0} AS INT))", args[0])
    if t.name == "BIGINT":
        return template("abs(CAST(({0} ^ shiftrightunsigned({0}, 32)) AS INT))", args[0])
    if t.name == "BOOLEAN":
        return template("IF({0} IS NULL, NULL, IF({0}, 1231, 1237))", args[0])
    return template("IF({0} IS NULL, NULL, abs(hash(CAST({0} AS STRING))))", args[0])


def _substr(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow: a position beyond either end gives null; length -1 means "to the end".
    text, pos = args[0], args[1]
    if len(args) == 2:
        return template("IF(abs({1}) > char_length({0}), NULL, substring({0}, {1}))", text, pos)
    return template(
        "IF(abs({1}) > char_length({0}), NULL, substring({0}, {1}, IF({2} = -1, 2147483647, {2})))",
        text,
        pos,
        args[2],
    )


def _split_ex(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # The index-th piece (0-based) of a split on the whole separator as literal
    # text, empty pieces kept; null when out of range.  \Q...\E quotes it for
    # Java's regular expressions.
    return template(
        "IF({0} = '' OR {2} < 0, NULL, "
        "try_element_at(split({0}, concat('\\\\Q', {1}, '\\\\E'), -1), {2} + 1))",
        *args,
    )


def _index_of(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    start = args[2] if len(args) > 2 else exp.Literal.number(0)
    return template(
        "IF({0} IS NULL OR {1} IS NULL OR {2} IS NULL, -1, locate({1}, {0}, greatest({2}, 0) + 1) - 1)",
        args[0],
        args[1],
        start,
    )


def _instr(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # The nth occurrence from a 1-based start: each step searches from just
    # after the previous hit (from the start again after a miss, like the Java loop).
    start = args[2] if len(args) > 2 else exp.Literal.number(1)
    nth = args[3] if len(args) > 3 else exp.Literal.number(1)
    return template(
        "CASE WHEN {0} IS NULL OR {1} IS NULL OR {2} IS NULL OR {3} IS NULL THEN NULL "
        "WHEN {3} <= 0 OR {2} < 1 THEN NULL "
        "ELSE CAST(aggregate(sequence(1, CAST({3} AS INT)), CAST({2} AS INT) - 1, "
        "(acc, i) -> locate({1}, {0}, acc + 1)) AS BIGINT) END",
        args[0],
        args[1],
        start,
        nth,
    )


def _is_blank(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return template("({0} IS NULL OR {0} RLIKE '^\\\\s*$')", args[0])


def _like(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return exp.Like(this=exp.Paren(this=args[0]), expression=args[1])


def _regexp(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Java Matcher.find; an empty pattern is false in GeaFlow (Spark: true).
    return template("IF({1} = '', false, {0} RLIKE {1})", *args)


def _regexp_count(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    if len(args) == 2:
        return template("CAST(regexp_count({0}, {1}) AS BIGINT)", *args)
    return template("CAST(regexp_count(substring({0}, {2} + 1), {1}) AS BIGINT)", *args)


def _regexp_extract(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    group = args[2] if len(args) > 2 else exp.Literal.number(1)
    return template(
        "IF({1} = '' OR {2} < 0, NULL, regexp_extract({0}, {1}, {2}))", args[0], args[1], group
    )


def _replace(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # StringUtils.replace returns the text unchanged for a null/empty search or null replacement.
    return template(
        "IF({1} IS NULL OR {2} IS NULL OR {1} = '', {0}, replace({0}, {1}, {2}))", *args
    )


def _ascii2str(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # new String(new byte[]{(byte) n}): bytes 0..127 are ASCII, others are not
    # valid UTF-8 on their own and decode to U+FFFD (Spark's chr maps 128..255 to Latin-1).
    return template(
        "IF({0} IS NULL, NULL, IF(pmod({0}, 256) < 128, chr(pmod({0}, 256)), '\\uFFFD'))",
        args[0],
    )


def _base64_encode(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return template("base64(encode({0}, 'UTF-8'))", args[0])


def _base64_decode(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return template("decode(unbase64({0}), 'UTF-8')", args[0])


def _key_value(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # keyvalue('k1:v1;k2:v2', ';', ':', 'k2') = 'v2': the value of the first
    # pair whose key matches; null if absent or the pair is not exactly k:v.
    return template(
        "element_at(transform(filter(transform(split({0}, concat('\\\\Q', {1}, '\\\\E'), -1), "
        "l -> split(l, concat('\\\\Q', {2}, '\\\\E'), -1)), kv -> kv[0] = {3}), "
        "kv -> IF(size(kv) = 2, kv[1], NULL)), 1)",
        *args,
    )


def _length_type(args: list[Any]) -> Any:
    return T.BIGINT


scalar("concat", 1, None, _STR, _concat)
scalar("concat_ws", 2, None, _STR, _concat_ws)
scalar("hash", 1, 1, fixed(T.INTEGER), _hash)
scalar("substr", 2, 3, _STR, _substr, "substring", arg_types=string_then_ints)
scalar("split_ex", 3, 3, _STR, _split_ex, arg_types=strings_then_ints(2))
scalar("length", 1, 1, _length_type, "char_length", arg_types=all_string)
# Calcite's CHAR_LENGTH returns INTEGER.
scalar(
    "char_length", 1, 1, fixed(T.INTEGER), "char_length", "character_length", arg_types=all_string
)
scalar("index_of", 2, 3, fixed(T.INTEGER), _index_of, arg_types=strings_then_ints(2))
scalar("instr", 2, 4, fixed(T.BIGINT), _instr, arg_types=strings_then_bigints(2))
scalar("isblank", 1, 1, fixed(T.BOOLEAN), _is_blank, arg_types=all_string)
scalar("like", 2, 2, fixed(T.BOOLEAN), _like, arg_types=all_string)
scalar("regexp", 2, 2, fixed(T.BOOLEAN), _regexp, arg_types=all_string)
scalar("regexp_count", 2, 3, fixed(T.BIGINT), _regexp_count, arg_types=strings_then_ints(2))
scalar("regexp_extract", 2, 3, _STR, _regexp_extract, arg_types=strings_then_ints(2))
scalar("regexp_replace", 3, 3, _STR, "regexp_replace", arg_types=all_string)
scalar("replace", 3, 3, _STR, _replace, arg_types=all_string)
scalar("repeat", 2, 2, _STR, "repeat", arg_types=string_then_ints)
scalar("reverse", 1, 1, _STR, "reverse", arg_types=all_string)
scalar("space", 1, 1, _STR, "space", arg_types=lambda a: [T.INTEGER])
scalar("lower", 1, 1, _STR, "lower", "lcase", arg_types=all_string)
scalar("upper", 1, 1, _STR, "upper", "ucase", arg_types=all_string)
scalar("initcap", 1, 1, _STR, "initcap", arg_types=all_string)
# GeaFlow's trims strip only the space character, like Spark's.
scalar("trim", 1, 1, _STR, "trim", arg_types=all_string)
scalar("ltrim", 1, 1, _STR, "ltrim", arg_types=all_string)
scalar("rtrim", 1, 1, _STR, "rtrim", arg_types=all_string)
scalar("ascii", 1, 1, fixed(T.INTEGER), "ascii", arg_types=all_string)
scalar("ascii2str", 1, 1, _STR, _ascii2str, arg_types=lambda a: [T.BIGINT])
scalar("base64_encode", 1, 1, _STR, _base64_encode, arg_types=all_string)
scalar("base64_decode", 1, 1, _STR, _base64_decode, arg_types=all_string)
# java.net.URLEncoder/URLDecoder with UTF-8, the same as Spark's url_encode/url_decode.
scalar("urlencode", 1, 1, _STR, "url_encode", "url_encode", arg_types=all_string)
scalar("urldecode", 1, 1, _STR, "url_decode", "url_decode", arg_types=all_string)
scalar("keyvalue", 4, 4, _STR, _key_value, arg_types=all_string)
scalar("get_json_object", 2, 2, _STR, "get_json_object", arg_types=all_string)
scalar("position", 2, 2, fixed(T.INTEGER), "position", arg_types=all_string)
scalar("lpad", 3, 3, _STR, "lpad", arg_types=lambda a: [T.VARCHAR, T.INTEGER, T.VARCHAR])
scalar("rpad", 3, 3, _STR, "rpad", arg_types=lambda a: [T.VARCHAR, T.INTEGER, T.VARCHAR])
