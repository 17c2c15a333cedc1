"""Errors that are the user's to fix: reported as located lines, exit status 2."""

from __future__ import annotations

from collections.abc import Iterable

#: Stop collecting after this many problems: enough to fix a batch at once.
MAX_PROBLEMS = 20


#: Every character str.splitlines breaks at, written out as an escape instead.
_LINE_BREAKS = {ord(c): ascii(c)[1:-1] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    return text.translate(_LINE_BREAKS)


class UserError(Exception):
    """Bad input or arguments. Each problem is one line naming where it is."""

    def __init__(self, problems: str | Iterable[str], hint: str | None = None) -> None:
        lines = [problems] if isinstance(problems, str) else list(problems)
        # One problem, one line: a file or zip member name holding a line break must not
        # split it.
        self.problems = [one_line(line) for line in lines]
        #: What would get past them, said after the problems ("--skip-unreadable ...").
        self.hint = hint
        super().__init__("\n".join(self.problems))


def os_reason(error: OSError) -> str:
    """What the system said, and about which path when it is not the one named already."""
    reason = error.strerror or str(error)
    paths = [str(p) for p in (error.filename, error.filename2) if p is not None]
    return f"{reason} ({' -> '.join(paths)})" if paths else reason


class Problems:
    """Collects located problems, up to MAX_PROBLEMS, then raises them together."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.truncated = False

    def add(self, message: str) -> None:
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(message)
        else:
            self.truncated = True

    @property
    def full(self) -> bool:
        return len(self.items) >= MAX_PROBLEMS

    def raise_if_any(self, hint: str | None = None) -> None:
        if self.items:
            lines = list(self.items)
            if self.truncated:
                lines.append(f"(stopped after {MAX_PROBLEMS} problems)")
            raise UserError(lines, hint)
