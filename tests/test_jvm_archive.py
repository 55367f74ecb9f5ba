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
    env = dict(os.environ, **env_extra)
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


def _ready_archive() -> str:
    """The archive of this Java and PySpark in the default cache directory,
    waiting for a build under way (the suite's first driver starts one)."""
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


def test_a_driver_maps_spark_classes_from_the_archive(tmp_path: Path) -> None:
    path = _ready_archive()
    assert jvm_archive.driver_options(check_java(), {}) == (
        f"-XX:SharedArchiveFile={path} -Xlog:cds=off -Xlog:cds+dynamic=off"
    )
    classes = tmp_path / "classes.log"
    done = _run(
        tmp_path,
        {},
        f"spark.driver.extraJavaOptions=-Xlog:class+load=info:file={classes}",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
    loaded = classes.read_text().splitlines()
    # The archive is the JVM's top layer (the JDK's own archive is the base);
    # classes it misses come from Spark's jars.  (Lambda classes, made as the
    # JVM runs, name the class that made them.)
    spark = [x for x in loaded if "] org.apache.spark." in x]
    shared = [x for x in spark if x.endswith("source: shared objects file (top)")]
    from_jars = [x for x in spark if " source: jar:" in x or " source: file:" in x]
    assert len(shared) > 3000
    assert len(from_jars) < 0.05 * len(shared), from_jars[:20]


def test_an_archive_that_does_not_fit_is_ignored_quietly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {"GEAFLOW_SQL_CACHE_DIR": str(cache)}
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(cache))
    path = jvm_archive.archive_path(check_java())
    assert path is not None and path.startswith(str(cache))
    Path(path).write_bytes(b"not an archive" * 1000)
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED  # no warning from the JVM on stdout
    assert done.stderr == ""
    assert not os.path.exists(path + ".lock")  # found one: no build started


def test_the_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEAFLOW_SQL_CACHE_DIR", str(tmp_path))
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
    path = jvm_archive.archive_path(check_java())
    assert path is not None
    Path(path + ".lock").touch()
    assert jvm_archive.driver_options(check_java(), {}) == ""
    os.unlink(path + ".lock")
    Path(path + ".failed").write_text("RuntimeError: no\n")
    assert jvm_archive.driver_options(check_java(), {}) == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(path).name + ".failed"]
