"""Rebuild the committed expected site (`make golden`) after an intended change.

Review the diff (git diff --stat tests/golden) before committing it: every
changed byte there is a change readers of a published report will see.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.conftest import build_example

GOLDEN = Path(__file__).resolve().parent / "golden" / "example-site"


def main() -> None:
    os.environ.pop("SOURCE_DATE_EPOCH", None)
    if GOLDEN.exists():
        shutil.rmtree(GOLDEN)
    # From nothing: what the cache beside it holds is not what the golden test checks.
    shutil.rmtree(GOLDEN.parent / ".reportgen-cache", ignore_errors=True)
    build_example(GOLDEN)
    files = sum(1 for p in GOLDEN.rglob("*") if p.is_file())
    print(f"refreshed {GOLDEN} ({files} files)")


if __name__ == "__main__":
    main()
