"""The session's time zone: GeaFlow's date functions follow the JVM's zone (no
setting of their own; its documentation's examples assume Asia/Shanghai).
Here the zone is UTC unless ``geaflow.dsl.time.zone`` (or Spark's
``spark.sql.session.timeZone``) says otherwise, and text timestamps print back
as written in any zone."""

from __future__ import annotations

import random

import pytest

from geaflow_sql.core.errors import ConfigError

ZONES = ("UTC", "Asia/Shanghai", "America/New_York", "+05:30")


def one(session, sql: str):
    return session.sql(sql).collect()[0]


def test_utc_unless_set(session):
    assert one(session, "SELECT from_unixtime(0), unix_timestamp('1970-01-02 00:00:00')") == (
        "1970-01-01 00:00:00",
        86400,
    )


def test_geaflow_documentation_examples_in_asia_shanghai(session):
    # GeaFlow's function reference: from_unixtime(11111111) is 1970-05-09 22:25:11 and
    # unix_timestamp('1987-06-05 00:11:22') is 549817882 (China's 1987 summer time, UTC+9).
    session.execute("SET geaflow.dsl.time.zone = 'Asia/Shanghai';")
    got = one(session, "SELECT from_unixtime(11111111), unix_timestamp('1987-06-05 00:11:22')")
    assert got == ("1970-05-09 22:25:11", 549817882)


def test_sparks_key_is_honoured_and_geaflows_wins(session):
    session.execute("SET spark.sql.session.timeZone = 'America/New_York';")
    assert one(session, "SELECT from_unixtime(0)") == ("1969-12-31 19:00:00",)
    session.execute("SET geaflow.dsl.time.zone = '+01:00';")
    assert one(session, "SELECT from_unixtime(0)") == ("1970-01-01 01:00:00",)


def test_a_session_does_not_leak_its_zone_into_the_next(spark, tmp_path):
    from geaflow_sql import Session

    first = Session(spark=spark, base_dir=str(tmp_path), conf={"geaflow.dsl.time.zone": "+08:00"})
    assert one(first, "SELECT from_unixtime(0)") == ("1970-01-01 08:00:00",)
    second = Session(spark=spark, base_dir=str(tmp_path))
    assert one(second, "SELECT from_unixtime(0)") == ("1970-01-01 00:00:00",)


def test_an_unknown_zone_is_a_clear_error(session):
    session.execute("SET geaflow.dsl.time.zone = 'Mars/Olympus';")
    with pytest.raises(ConfigError) as info:
        session.sql("SELECT from_unixtime(0)")
    assert "'Mars/Olympus'" in info.value.message
    assert info.value.line == 1


@pytest.mark.parametrize("zone", ZONES)
def test_text_timestamps_print_back_as_written(session, tmp_path, zone):
    rng = random.Random(zone)
    lines = []
    for i in range(60):
        # whole local times outside the spring-forward hour (02:xx does not exist
        # on those days in New York); fall-back times are ambiguous but print back
        stamp = (
            f"{rng.randint(1995, 2035)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
            f"{rng.choice([0, 1, 3, 9, 12, 17, 23]):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}"
        )
        lines.append(f"{i},{stamp}")
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.txt"
    session.execute(
        f"SET geaflow.dsl.time.zone = '{zone}';"
        f"CREATE TABLE src (id int, ts timestamp) WITH (type='file', geaflow.dsl.file.path='{src}');"
        f"CREATE TABLE dst (id int, ts timestamp) WITH (type='file', geaflow.dsl.file.path='{out}');"
        "INSERT INTO dst SELECT id, ts FROM src;"
    )
    files = [out] if out.is_file() else sorted(p for p in out.iterdir() if p.name[0] not in "._")
    written = sorted(line for f in files for line in f.read_text().splitlines() if line.strip())
    # GeaFlow writes java.sql.Timestamp.toString(): a ".0" for whole seconds
    assert written == sorted(f"{line}.0" for line in lines)
