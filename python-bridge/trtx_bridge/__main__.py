"""Entry point: ``python -m trtx_bridge`` reads one request, writes events."""

from __future__ import annotations

import logging
import os
import signal
import sys


def _isolate_sys_path() -> None:
    # `python -m` puts the working directory first on sys.path, so a stray
    # torch.py or trtx_bridge/ there would shadow the real thing. trtx starts
    # the bridge in its own folder with PYTHONSAFEPATH=1 (Python 3.11+ then adds
    # nothing); for older Pythons drop the entry here, then move to the folder
    # the user ran trtx in so relative paths in a factory mean what they expect.
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)] or sys.path
    target = os.environ.get("TRTX_BRIDGE_CWD")
    if target and os.path.isdir(target):
        os.chdir(target)


def _configure_logging() -> None:
    level_name = os.environ.get("TRTX_BRIDGE_LOG_LEVEL", "INFO").upper()
    level = getattr(logging, level_name, logging.INFO)
    logging.basicConfig(
        stream=sys.stderr,
        level=level if isinstance(level, int) else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _write_traceback(exc: BaseException) -> None:
    # trtx names this file in the failure's hint when it is there
    # (src/export/traceback-file.ts): the traceback of a library failure,
    # which the error event carries only as one line. A refusal of the
    # bridge's own (no library exception behind it) has none.
    path = os.environ.get("TRTX_BRIDGE_TRACEBACK")
    if not path:
        return
    import traceback

    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    except OSError:
        pass


def _on_sigterm(signum: int, frame: object) -> None:
    # Unwind through the finally blocks (the writer removes a partial file)
    # instead of dying mid-write. trtx follows up with SIGKILL on the group.
    raise SystemExit(128 + signum)


def main() -> int:
    from .channel import open_channel

    channel = open_channel()
    _isolate_sys_path()
    _configure_logging()
    signal.signal(signal.SIGTERM, _on_sigterm)
    log = logging.getLogger("trtx_bridge")
    channel.hello()

    from .errors import BridgeError, describe_exception, os_error_name

    try:
        # An older interpreter gets the bridge's own error, not a traceback.
        if sys.version_info < (3, 9):  # noqa: UP036
            raise BridgeError(
                "PYTHON_VERSION",
                f"Python {sys.version.split()[0]} is too old for the bridge",
                "Use Python 3.9 or newer (the one torch is installed in) via --python or TRTX_PYTHON.",
                stage="check",
            )
        from .request import parse_request

        request = parse_request(sys.stdin.buffer.read())
        if request.check_only:
            from .deps import check

            channel.result(check(request.engine))
        else:
            from .pipeline import run

            channel.result(run(request, channel))
        return 0
    except BridgeError as exc:
        log.debug("bridge error %s", exc.type, exc_info=True)
        if exc.__cause__ is not None:
            _write_traceback(exc)
        channel.error(exc.type, exc.message, exc.hint, exc.stage, os_error_name(exc))
        return 1
    except Exception as exc:
        log.exception("unexpected failure")
        _write_traceback(exc)
        channel.error(
            "INTERNAL",
            describe_exception(exc),
            "This is a bug in trtx's Python bridge or an unexpected library failure.",
            errno=os_error_name(exc),
        )
        return 1


def _leave(code: int) -> None:
    # Every event is written (the channel writes its descriptor unbuffered)
    # and every file closed or removed by the time main returns, so what is
    # left of an ordinary exit is the interpreter's teardown: with torch,
    # torch._dynamo, torch._inductor and executorch.exir imported it frees
    # tens of thousands of modules' objects and runs their libraries' atexit
    # hooks, about 1.4 s of CPU on 2 cores that `trtx export` would wait for
    # (bench/bridge-exit.ts measures it). Flush what Python still buffers,
    # then end the process without the teardown.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    _leave(main())
