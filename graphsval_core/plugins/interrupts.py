"""The user's Ctrl-C, told apart from a KeyboardInterrupt that plugin code raises.

The core installs its own SIGINT handler (:func:`install`, called whenever
plugins are loaded): it notes that the signal came, then raises
:class:`KeyboardInterrupt` exactly as Python's default handler does. So a
KeyboardInterrupt is the user's whenever that handler saw a signal, wherever
it surfaces (inside a measurer, or a C extension that checks for signals),
and is never contained: a capture interrupted inside a measurer keeps every
finished row and resumes. One raised while no SIGINT came is plugin code
raising it, a plugin fault like :class:`SystemExit` (:func:`is_plugin_fault`).

Where the handler is not in place (plugins loaded outside the main thread, or
an embedding application's own SIGINT handler left alone), no
KeyboardInterrupt can be told from the user's, so each one is taken for the
user's.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


class _State:
    """How many SIGINTs the core's handler has seen in this process."""

    seen: int = 0


def _handler(signum: int, frame: FrameType | None) -> None:
    """The core's SIGINT handler: note the signal, then interrupt as Python does."""
    _State.seen += 1
    raise KeyboardInterrupt


def install() -> bool:
    """Put the core's SIGINT handler in place of Python's default one.

    Only from the main thread and only over Python's default handler (an
    application's own handler is left alone). Returns whether the core's
    handler is in place.
    """
    if watching():
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _handler)
    return True


def watching() -> bool:
    """Whether the core's SIGINT handler is in place."""
    return signal.getsignal(signal.SIGINT) is _handler


def user_interrupted() -> bool:
    """Whether the core's handler has seen a SIGINT (the user pressed Ctrl-C)."""
    return _State.seen > 0


def is_plugin_fault(error: BaseException) -> bool:
    """Whether ``error``, raised by plugin code, is the plugin's fault (to be
    contained) rather than the user's or the interpreter's (to propagate).

    Any :class:`Exception` and :class:`SystemExit` (``sys.exit`` in a plugin)
    are; a :class:`KeyboardInterrupt` is when the core's handler is in place
    and has seen no SIGINT; anything else (``GeneratorExit``) is not.
    """
    if isinstance(error, Exception | SystemExit):
        return True
    if isinstance(error, KeyboardInterrupt):
        return watching() and not user_interrupted()
    return False


def describe(error: BaseException) -> str:
    """``Type: message``, with what a SystemExit or a KeyboardInterrupt means
    when plugin code raises it."""
    text = f"{type(error).__name__}: {error}".rstrip(": ")
    if isinstance(error, SystemExit):
        return f"{text} (the plugin called sys.exit)"
    if isinstance(error, KeyboardInterrupt):
        return f"{text} (raised by the plugin: no Ctrl-C was pressed)"
    return text
