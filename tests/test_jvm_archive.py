"""The driver JVM's class archive (runtime.jvm_archive): built once by a
separate process, mapped by the drivers started after it, ignored without a
word when it does not fit, and never in the way of an answer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runtime import jvm_archive
from runtime.spark_adapter import check_java

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
CREATE TABLE t (id bigint, name varchar) WITH (
  type = 'file', geaflow.dsl.file.path = '{path}'
);
SELECT name, id * 2 AS twice FROM t ORDER BY id;
"""

EXPECTED = """\
+------+-------+
| name | twice |
+------+-------+
| a    |     2 |
| b    |     4 |
+------+-------+
(2 rows)
"""


def _run(tmp_path: Path, env_extra: dict[str, str], *conf: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "t.txt").write_text("1,a\n2,b\n")
    (tmp_path / "job.gql").write_text(SCRIPT.format(path=tmp_path / "t.txt"))
    env = {k: v for k, v in os.environ.items() if k != jvm_archive.SWITCH}
    env.update(env_extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    args = [a for c in conf for a in ("--conf", c)]
    return subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", "-f", "job.gql", "-q", "--master", "local[1]"]
        + args,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _ready_archive(monkeypatch: pytest.MonkeyPatch) -> str:
    """The archive of this Java and Spark in the default cache directory,
    waiting for a build under way (the suite's first driver starts one)."""
    monkeypatch.delenv(jvm_archive.SWITCH, raising=False)
    path = jvm_archive.archive_path(check_java())
    assert path is not None
    deadline = time.time() + 600
    while not os.path.exists(path):
        if not os.path.exists(path + ".lock"):
            jvm_archive.driver_options(check_java(), {})  # starts the build if none runs
        failed = path + ".failed"
        if os.path.exists(failed):
            pytest.fail(f"the archive's build failed: {Path(failed).read_text()}")
        assert time.time() < deadline, "the archive was not built in 10 minutes"
        time.sleep(2)
    return path


def _spark_classes(log: Path) -> tuple[list[str], list[str]]:
    """(Spark classes the JVM mapped from the archive, those it read from
    Spark's jars), from its ``-Xlog:class+load`` output.  The archive is the
    JVM's top layer (the JDK's own archive is the base); lambda classes,
    made as the JVM runs, name the class that made them, and are neither."""
    spark = [x for x in log.read_text().splitlines() if "] org.apache.spark." in x]
    shared = [x for x in spark if x.endswith("source: shared objects file (top)")]
    from_jars = [x for x in spark if " source: jar:" in x or " source: file:" in x]
    return shared, from_jars


def test_a_driver_maps_spark_classes_from_the_archive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = _ready_archive(monkeypatch)
    assert jvm_archive.driver_options(check_java(), {}) == (
        f"-XX:SharedArchiveFile={path} -Xlog:cds*=off"
    )
    classes = tmp_path / "classes.log"
    done = _run(
        tmp_path,
        {},
        f"spark.driver.extraJavaOptions=-Xlog:class+load=info:file={classes}",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
    shared, from_jars = _spark_classes(classes)
    assert len(shared) > 3000
    assert len(from_jars) < 0.05 * len(shared), from_jars[:20]


def test_an_archive_that_does_not_fit_is_ignored_quietly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A classpath the archive was not made with (Spark puts the driver's
    extra classpath first): the JVM runs without the archive, and says
    nothing about it on stdout or stderr."""
    _ready_archive(monkeypatch)
    classes = tmp_path / "classes.log"
    done = _run(
        tmp_path,
        {},
        f"spark.driver.extraClassPath={tmp_path}",
        f"spark.driver.extraJavaOptions=-Xlog:class+load=info:file={classes}",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
    assert done.stderr == ""
    shared, from_jars = _spark_classes(classes)
    assert shared == [] and len(from_jars) > 3000


def test_a_cache_directory_others_can_write_is_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(shared))
    monkeypatch.delenv(jvm_archive.SWITCH, raising=False)
    assert jvm_archive.archive_path(check_java()) is None
    assert jvm_archive.driver_options(check_java(), {}) == ""
    assert list(shared.iterdir()) == []
    mine = tmp_path / "mine"
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(mine))
    assert str(jvm_archive.archive_path(check_java())).startswith(str(mine))
    assert mine.stat().st_mode & 0o777 == 0o700


def test_a_lock_is_stale_when_its_builder_is_gone(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    lock = tmp_path / "a.jsa.lock"
    lock.write_text(str(gone.pid))
    assert jvm_archive._stale(str(lock))
    lock.write_text(str(os.getpid()))
    assert not jvm_archive._stale(str(lock))
    lock.write_text("")  # being written
    assert not jvm_archive._stale(str(lock))
    old = time.time() - 3600
    os.utime(lock, (old, old))
    assert jvm_archive._stale(str(lock))


def test_the_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(tmp_path))
    assert jvm_archive.archive_path(check_java()) is not None
    monkeypatch.setenv(jvm_archive.SWITCH, "off")
    assert jvm_archive.driver_options(check_java(), {}) == ""
    assert not any(p.name.startswith("jvm-") for p in tmp_path.iterdir())


def test_the_archive_is_named_by_java_and_pyspark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(tmp_path))
    java = check_java()
    path = jvm_archive.archive_path(java)
    assert path == jvm_archive.archive_path(java)
    assert path != jvm_archive.archive_path(java + " (another build)")
    monkeypatch.setenv("SPARK_DIST_CLASSPATH", "/elsewhere/*")
    assert path != jvm_archive.archive_path(java)


def test_a_build_under_way_or_failed_is_not_started_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(jvm_archive.SWITCH, raising=False)
    path = jvm_archive.archive_path(check_java())
    assert path is not None
    Path(path + ".lock").touch()  # a build starting (its pid not yet written)
    assert jvm_archive.driver_options(check_java(), {}) == ""
    os.unlink(path + ".lock")
    Path(path + ".failed").write_text("RuntimeError: no\n")
    assert jvm_archive.driver_options(check_java(), {}) == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(path).name + ".failed"]
