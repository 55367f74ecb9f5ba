"""Translating Spark, Java and user-code failures into geaflow-sql errors."""

from __future__ import annotations

import re

from geaflow_sql.core.errors import CancelledError, DataError, ExecutionError, GeaflowError

from .connectors.text_format import locate_bad_line

_BAD_ROW = re.compile(r"GEAFLOW_BAD_ROW: (.*?)(?: SQLSTATE|\n|$)", re.S)


def _first_line(text: str) -> str:
    # py4j: "An error occurred while calling o318.load.\n: java.x.YException: what"
    # -- the Java exception's own message is the useful part.
    lines = text.splitlines()
    if lines and lines[0].startswith("An error occurred while calling"):
        for line in lines[1:]:
            line = line.strip().lstrip(":").strip()
            if line and not line.startswith("at "):
                return re.sub(r"^[\w.$]+(Exception|Error): ", "", line)
    for line in lines:
        line = line.strip()
        if line and not line.startswith(("at ", "Traceback", "File ")):
            return line
    return text.strip()[:300]


def translate(err: BaseException) -> GeaflowError:
    """A GeaflowError for any exception raised while a plan ran."""
    if isinstance(err, GeaflowError):
        return err
    text = str(err)
    name = type(err).__name__
    if name not in ("AnalysisException", "ParseException") and "USER_RAISED_EXCEPTION" in text:
        m = _BAD_ROW.search(text)
        if m:
            # Rows of large files are read without numbers: find the line now.
            return DataError(locate_bad_line(m.group(1).strip()))
    if "OutOfMemoryError" in text:
        return ExecutionError(
            "Spark ran out of memory while the statement ran "
            "(raise spark.driver.memory, or spark.executor.memory on a cluster)"
        )
    if "SparkContext was shut down" in text:
        # Nobody cancelled: Spark stopped under the job (most often a JVM that
        # ran out of memory; its log says why).
        return ExecutionError(
            "Spark stopped while the statement ran (see its log; a driver out of "
            "memory is the usual cause: spark.driver.memory)"
        )
    if "cancel" in text.lower() and ("job" in text.lower() or "interrupt" in text.lower()):
        return CancelledError("the statement was cancelled")
    if isinstance(err, KeyboardInterrupt):
        return CancelledError("the statement was cancelled")
    if name == "PythonException":
        # A user function failed inside a Spark task: show its last error line.
        lines = [ln for ln in text.splitlines() if ln.strip()]
        detail = next(
            (ln.strip() for ln in reversed(lines) if re.match(r"^\s*\w+(Error|Exception)\b", ln)),
            _first_line(text),
        )
        return ExecutionError(f"a user function failed: {detail}")
    if name in ("AnalysisException", "ParseException"):
        return ExecutionError(f"Spark rejected the plan: {_first_line(text)}")
    if name in ("Py4JError", "Py4JNetworkError", "ConnectionRefusedError"):
        return ExecutionError(f"lost the connection to Spark: {_first_line(text)}")
    return ExecutionError(_with_root_cause(_first_line(text), err))


# Spark wraps a failure in a broadcast, subquery or stage thread in a generic
# exception whose own message says nothing ("Exception thrown in awaitResult:").
_GENERIC = ("Exception thrown in awaitResult", "Job aborted", "ExecutionException")


def _with_root_cause(line: str, err: BaseException) -> str:
    """``line``, followed by the innermost cause's message when ``line`` is a wrapper's."""
    if not any(g in line for g in _GENERIC) and line.strip():
        return line
    detail = _root_cause(err)
    return f"{line.rstrip(': ')}: {detail}" if detail else line


def _root_cause(err: BaseException) -> str:
    """The message of the innermost exception under ``err`` (PySpark's or Java's)."""
    deepest: object = None
    cause: object = getattr(err, "_cause", None)  # PySpark's CapturedException
    for _ in range(20):  # a cause chain is short; never loop on a cycle
        if cause is None:
            break
        deepest, cause = cause, getattr(cause, "_cause", None)
    if deepest is not None:
        return _first_line(str(getattr(deepest, "_desc", "") or deepest))
    java = getattr(err, "java_exception", None)  # a raw Py4JJavaError
    if java is None:
        return ""
    try:
        for _ in range(20):
            nxt = java.getCause()
            if nxt is None:
                break
            java = nxt
        # "org.apache.spark.SparkRuntimeException: ..." -> "SparkRuntimeException: ..."
        return re.sub(r"^(?:[a-z_$][\w$]*\.)+", "", _first_line(str(java.toString())))
    except Exception:  # the JVM is gone: keep the wrapper's line
        return ""
