"""Single keys from the terminal: stdin in cbreak mode (a key counts without Enter and is not echoed),
or, when stdin is a pipe or a file, its characters as they come (``printf 'ppf' | agentevals label``).

Ctrl-C still interrupts (``KeyboardInterrupt``); the terminal's mode is restored on leaving the block.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

ENTER = ("\n", "\r")
ESCAPE = "\x1b"
BACKSPACE = ("\x7f", "\b")


class Keys:
    """The keys typed on ``stream`` (default stdin), one at a time; use it as a ``with`` block."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        self._saved: list[Any] | None = None

    def __enter__(self) -> Keys:
        if not self._stream.isatty():
            return self
        try:
            import termios
        except ImportError:  # no POSIX terminal (Windows): keys arrive line by line
            return self
        fd = self._stream.fileno()
        self._saved = termios.tcgetattr(fd)
        mode = termios.tcgetattr(fd)
        mode[3] &= ~(termios.ECHO | termios.ICANON)  # the local flags: no echo, no line editing
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSAFLUSH, mode)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(self._stream.fileno(), termios.TCSADRAIN, self._saved)
            self._saved = None

    def key(self) -> str:
        """The next key (a character); ``""`` when stdin has ended."""
        return self._stream.read(1)

    def text(self, echo: Callable[[str], None]) -> str | None:
        """A line typed up to Enter, shown through ``echo`` as it is typed (Backspace erases); ``None``
        for Escape, or when stdin ends before Enter."""
        typed: list[str] = []
        while True:
            key = self.key()
            if key in ENTER:
                return "".join(typed)
            if key in ("", ESCAPE):
                return None
            if key in BACKSPACE:
                if typed:
                    typed.pop()
                    echo("\b \b")
                continue
            if key.isprintable():
                typed.append(key)
                echo(key)
