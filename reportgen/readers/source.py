"""An input as the config or the command line gives it: a path and how to read it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The values of the `errors:` setting (and --errors).
ERROR_CHOICES = ("exclude", "fail")


@dataclass(frozen=True)
class Source:
    """One input file and how to read it (from the config or the command line)."""

    path: Path
    format: str | None = None
    suite: str | None = None
    model: str | None = None
    #: The condition every run of this input was made under (`condition:` in the
    #: config, --condition), over the one its runs name.
    condition: str | None = None
    name: str | None = None
    scorer: str | None = None
    #: The scorer came from --scorer, which names one for every input: an input
    #: whose format has no scorers ignores it (one given for the set itself is an error).
    scorer_from_flag: bool = False
    #: What a run that ended in an error counts as, for the formats that record errors
    #: apart from failures: "exclude" (the default: left out of n and counted as
    #: excluded) or "fail".
    errors: str | None = None
    #: Table columns by what they hold, e.g. (("task", "instance_id"),): `columns:`
    #: in the config or --columns; a tuple of pairs so a Source stays hashable.
    columns: tuple[tuple[str, str], ...] = ()
    #: The score a run needs to pass, for formats that give a score (Harbor's
    #: reward, a table's score column).
    threshold: float | None = None
    #: The threshold came from --threshold, for every input: as scorer_from_flag.
    threshold_from_flag: bool = False
    #: Where `suite` and `model` were given: in the config, or on the command line.
    named_in: tuple[str, str] = ("the config", "the config")
    #: A file that cannot be read is listed and left out (--skip-unreadable), instead
    #: of stopping the build.
    skip_unreadable: bool = False

    @property
    def error_outcome(self) -> bool | None:
        """What a run that ended in an error counts as: None (excluded) or False."""
        return False if self.errors == "fail" else None
