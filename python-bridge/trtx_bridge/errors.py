"""The one exception type the bridge reports as an ``error`` event."""

from __future__ import annotations


class BridgeError(Exception):
    """A failure with a stable type, a one-line message and what to do next.

    ``type`` is upper snake case; the TypeScript side reports it as
    ``BRIDGE_<TYPE>``, so renaming one is a breaking change for scripts that
    match on codes.
    """

    def __init__(self, type_: str, message: str, hint: str, *, stage: str | None = None):
        super().__init__(message)
        self.type = type_
        self.message = message
        self.hint = hint
        self.stage = stage


def os_error_name(exc: BaseException) -> str | None:
    """The errno name (``ENOSPC``) of the first ``OSError`` in ``exc``'s chain.

    The error event carries it as ``errno``, so trtx can say what the
    operating system refused, whichever stage or library met it: a full disk
    (``ENOSPC``, ``EDQUOT``) is trtx's ``WRITE_NO_SPACE``, not a bridge bug.
    """
    import errno

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and isinstance(current.errno, int):
            return errno.errorcode.get(current.errno)
        current = current.__cause__ or current.__context__
    return None


def describe_exception(exc: BaseException, limit: int = 600) -> str:
    """``Type: message`` on one line, cut to ``limit`` characters.

    Library exceptions (TensorRT builder errors especially) can carry pages of
    text; the full traceback goes to the log, the event gets the gist.
    """
    text = f"{type(exc).__name__}: {exc}".replace("\r", " ").replace("\n", " ").strip()
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text
