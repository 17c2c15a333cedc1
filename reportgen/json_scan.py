"""JSON measured by its raw bytes, before anything is parsed.

A JSON value costs up to 25 times its size in the file once Python builds it, so
the readers count values (`check_json_values`) and find a large document's records
(`plan_json`) from the bytes alone, a chunk at a time with numpy, and refuse what
is beyond the limits of limits.py before building anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .limits import MAX_JSON_VALUES, MAX_RECORD_BYTES, MiB, TooLarge, size_text

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Bytes of JSON scanned at a time. numpy's work arrays for a chunk take up to about
#: 40 times this (a chunk of nothing but brackets and commas), so it stays small.
JSON_CHUNK = 1 * MiB
#: Records parsed together (json.loads called once for many small records, which is
#: most of the speed on a file of millions): a batch ends at a record boundary about
#: this many bytes on.
JSON_BATCH = 1 * MiB

_WHITE = b" \t\r\n"
_OPENING = frozenset(b"[{")


class JsonProblem(ValueError):
    """Raw JSON that cannot be read as a document: what is wrong, and its byte offset."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def too_many_values(what: str = "") -> TooLarge:
    return TooLarge(f"{what}holds more than {MAX_JSON_VALUES:,} JSON values (keys count too)")


@dataclass
class _Tokens:
    """The structural characters ([]{},:) of one chunk that lie outside strings."""

    offsets: npt.NDArray[np.int64]
    chars: npt.NDArray[np.uint8]
    #: Nesting level of each: 1 for the top container's brackets and its own commas
    #: and colons, 2 for those of a container inside it, and so on.
    levels: npt.NDArray[np.int32]
    #: Values started before each token, counted from the start of the scan.
    before: npt.NDArray[np.int64]
    #: Values started up to the end of the chunk.
    values: int


def json_tokens(read: Callable[[int, int], bytes], start: int, end: int) -> Iterator[_Tokens]:
    """The structural characters outside strings of the bytes from `start` to `end`, a
    chunk at a time, with their nesting level and a running count of values.

    A JSON value holds 1 + its commas, colons and opening brackets (an empty [] or {}
    left out) values: each array item, object key and object value once. Nothing is
    parsed: a quote ends a string unless an odd run of backslashes comes just before
    it, which is all valid JSON needs; invalid JSON is found when its parts are parsed.
    """
    import numpy as np

    structural = np.zeros(256, bool)
    structural[list(b"[]{},:")] = True
    step = np.zeros(256, np.int8)
    step[list(b"[{")] = 1
    step[list(b"]}")] = -1
    starts = np.zeros(256, np.int8)
    starts[list(b",:[{")] = 1
    in_string = False
    backslashes = 0  # the run of them that ended the previous chunk
    depth = 0
    values = 0
    open_at = -2  # offset of the previous chunk's last token, when it was an opening
    offset = start
    while offset < end:
        data = read(offset, min(JSON_CHUNK, end - offset))
        if not data:
            raise JsonProblem("the file ends early (did it change while it was read?)", offset)
        a = np.frombuffer(data, np.uint8)
        quotes = np.flatnonzero(a == ord('"'))
        slashes = np.flatnonzero(a == ord("\\"))
        escaped = np.zeros(quotes.size, bool)
        if slashes.size:
            first = np.ones(slashes.size, bool)
            first[1:] = np.diff(slashes) != 1
            run_start = slashes[first][np.cumsum(first) - 1]
            if quotes.size:
                k = np.maximum(np.searchsorted(slashes, quotes) - 1, 0)
                run = quotes - run_start[k] + np.where(run_start[k] == 0, backslashes, 0)
                escaped = (slashes[k] == quotes - 1) & (run % 2 == 1)
        if quotes.size and quotes[0] == 0 and backslashes % 2:
            escaped[0] = True
        if slashes.size and slashes[-1] == a.size - 1:
            run_length = a.size - int(run_start[-1])
            backslashes = run_length + (backslashes if run_length == a.size else 0)
        else:
            backslashes = 0
        real = quotes[~escaped]
        marks = np.flatnonzero(structural[a])
        if real.size:
            marks = marks[np.searchsorted(real, marks) % 2 == int(in_string)]
            in_string ^= bool(real.size % 2)
        elif in_string:
            marks = marks[:0]
        chars = a[marks]
        steps = step[chars]
        after = np.cumsum(steps, dtype=np.int32)
        after += depth
        counted = starts[chars]
        if marks.size:
            # An opening bracket right before its closing one holds no value.
            counted[:-1] -= (steps[:-1] > 0) & (steps[1:] < 0) & (np.diff(marks) == 1)
            if open_at == offset - 1 and marks[0] == 0 and steps[0] < 0:
                counted[0] -= 1  # [ at the end of the last chunk, ] at the start of this
            depth = int(after[-1])
            open_at = offset + int(marks[-1]) if steps[-1] > 0 else -2
        else:
            open_at = -2
        total = np.cumsum(counted, dtype=np.int64)
        running = values + (int(total[-1]) if total.size else 0)
        total -= counted
        total += values
        after += steps < 0
        yield _Tokens(offset + marks, chars, after, total, running)
        values = running
        offset += len(data)


def json_values(data: bytes) -> int:
    """How many values (keys included) `data` holds as JSON; exact for valid JSON."""
    values = 0
    for tokens in json_tokens(lambda at, size: data[at : at + size], 0, len(data)):
        values = tokens.values
    return values + 1


def check_json_values(data: bytes | str, what: str = "") -> None:
    """TooLarge when `data` holds more than MAX_JSON_VALUES values, found before parsing,
    which is what costs. A value takes at least two bytes, so shorter data passes
    without a look: a JSONL line of the usual size costs nothing more."""
    if len(data) <= 2 * MAX_JSON_VALUES:
        return
    if json_values(data.encode() if isinstance(data, str) else data) > MAX_JSON_VALUES:
        raise too_many_values(what)


def json_key(key: str) -> bytes:
    """A key as JSON writes it, to find it among the raw bytes."""
    import json

    return json.dumps(key).encode()


def _blank(read: Callable[[int, int], bytes], start: int, end: int) -> bool:
    """Whether the bytes from `start` to `end` are all white space (as JSON means it)."""
    while start < end:
        data = read(start, min(JSON_CHUNK, end - start))
        if data.strip(_WHITE):
            return False
        if not data:
            break
        start += len(data)
    return True


@dataclass
class JsonPlan:
    """Where the parts of a JSON document are, from one scan of its raw bytes."""

    #: Offsets of the top value's first byte and of the byte after it.
    start: int
    end: int
    #: The key whose array holds the records (None: the top-level array does).
    key: str | None = None
    #: Offsets of the records' array's [ and ], when there is one.
    array: tuple[int, int] | None = None
    #: How many records it holds.
    count: int = 0
    #: Where batches of records start: (offset just after a comma between two records,
    #: index of the record after it), about one each JSON_BATCH bytes.
    cuts: list[tuple[int, int]] = field(default_factory=list)
    #: Values of the whole document and of the records' array.
    values: int = 1
    array_values: int = 0


def plan_json(
    read: Callable[[int, int], bytes], size: int, keys: tuple[str, ...] = (), top: bool = False
) -> JsonPlan:
    """Find a JSON document's array of records and check the size of every part.

    The records are the items of the top-level array (`top`), or of the first array
    that one of `keys` holds at the top of an object. Each record, and the rest of the
    document (the records' array left empty), must be within MAX_RECORD_BYTES and
    MAX_JSON_VALUES, or TooLarge names it. Brackets that do not balance and anything
    after the document raise JsonProblem. Nothing is parsed.
    """
    head = read(0, min(size, 4096))
    start = len(head) - len(head.lstrip(_WHITE))
    plan = JsonPlan(start, size)
    if start < len(head) and head[start] in _OPENING:
        wanted = {json_key(key): key for key in keys}
        _Scan(read, plan, wanted, top and head[start] == ord("[")).run(size)
    if plan.array is not None and plan.key is None:
        return plan  # the top-level array of records: nothing else to read whole
    rest = plan.end - plan.start
    values = plan.values
    if plan.array is not None:  # left as [] in the rest
        rest -= plan.array[1] - plan.array[0] - 1
        values -= plan.array_values - 1
    what = f"outside {plan.key}: " if plan.key else ""
    if rest > MAX_RECORD_BYTES:
        raise TooLarge(
            f"{what}{size_text(rest)} would be read whole; JSON is read whole "
            f"up to {size_text(MAX_RECORD_BYTES)}"
        )
    if values > MAX_JSON_VALUES:
        raise too_many_values(what)
    return plan


class _Scan:
    """One pass of json_tokens over a document, filling in its JsonPlan."""

    def __init__(
        self,
        read: Callable[[int, int], bytes],
        plan: JsonPlan,
        wanted: dict[bytes, str],
        top: bool,
    ) -> None:
        self.read, self.plan, self.wanted = read, plan, wanted
        #: Level of the commas between records (0 until the records' array is found).
        self.level = 1 if top else 0
        if top:
            plan.array = (plan.start, -1)
        #: The token before the current record (the array's [ or a comma): its offset,
        #: and the values before it.
        self.record = (plan.start, 0)
        self.array_before = 0
        #: Offset of the last level-1 { or , (a key starts after it), and of a level-1
        #: colon that ended the last chunk.
        self.separator = plan.start
        self.colon = -1

    def run(self, size: int) -> None:
        import numpy as np

        plan = self.plan
        for tokens in json_tokens(self.read, plan.start, size):
            offsets, chars, levels, before = (
                tokens.offsets,
                tokens.chars,
                tokens.levels,
                tokens.before,
            )
            # The document ends at the close of the top container (level 1).
            closes = np.flatnonzero((levels == 1) & ((chars == ord("]")) | (chars == ord("}"))))
            last = int(closes[0]) + 1 if closes.size else chars.size
            tokens = _Tokens(offsets[:last], chars[:last], levels[:last], before[:last], 0)
            if not self.level and self.wanted:
                tokens = self._find_array(tokens)
            if self.level and plan.array is not None and plan.array[1] < 0:
                self._records(tokens)
            if closes.size:
                plan.end = int(offsets[closes[0]]) + 1
                plan.values = int(before[closes[0]]) + 1
                if last < chars.size:
                    raise JsonProblem("Extra data", int(offsets[last]))
                if not _blank(self.read, plan.end, size):
                    raise JsonProblem("Extra data", plan.end)
                return
        raise JsonProblem("the document ends before its brackets close (cut short?)", size)

    def _find_array(self, tokens: _Tokens) -> _Tokens:
        """Look for `"key": [` at level 1; the tokens from that [ on, once found."""
        import numpy as np

        offsets, chars, levels = tokens.offsets, tokens.chars, tokens.levels
        colons = np.flatnonzero((levels == 1) & (chars == ord(":")))
        nxt = colons + 1
        follows = nxt < chars.size
        follows[follows] = chars[nxt[follows]] == ord("[")
        candidates = [(int(offsets[c]), int(c) + 1) for c in colons[follows]]
        if self.colon >= 0 and chars.size and chars[0] == ord("["):
            candidates.insert(0, (self.colon, 0))
        if chars.size:  # a chunk of white space keeps the colon before it waiting
            self.colon = int(offsets[colons[-1]]) if colons.size and nxt[-1] == chars.size else -1
        seps = offsets[(levels == 1) & ((chars == ord("{")) | (chars == ord(",")))]
        for colon, opening in candidates:
            i = int(np.searchsorted(seps, colon)) - 1
            after = int(seps[i]) if i >= 0 else self.separator
            if colon - after > 4096:
                continue  # no key of ours
            key = self.wanted.get(self.read(after + 1, colon - after - 1).strip(_WHITE))
            if key is not None:
                self.plan.key = key
                self.plan.array = (int(offsets[opening]), -1)
                self.level = 2
                self.record = (self.plan.array[0], int(tokens.before[opening]))
                self.array_before = self.record[1]
                return _Tokens(
                    offsets[opening + 1 :],
                    chars[opening + 1 :],
                    levels[opening + 1 :],
                    tokens.before[opening + 1 :],
                    0,
                )
        if seps.size:
            self.separator = int(seps[-1])
        return _Tokens(offsets[:0], chars[:0], levels[:0], tokens.before[:0], 0)

    def _records(self, tokens: _Tokens) -> None:
        """Count and check the records whose ends are among these tokens."""
        import numpy as np

        plan = self.plan
        assert plan.array is not None
        at_level = tokens.levels == self.level
        ends = np.flatnonzero(at_level & (tokens.chars == ord("]")))
        stop = int(ends[0]) if ends.size else tokens.chars.size
        commas = np.flatnonzero(at_level[:stop] & (tokens.chars[:stop] == ord(",")))
        bounds = np.concatenate([commas, ends[:1]])
        if (
            plan.count == 0
            and self.record[0] == plan.array[0]
            and not commas.size
            and ends.size
            and _blank(self.read, plan.array[0] + 1, int(tokens.offsets[ends[0]]))
        ):
            bounds = bounds[:0]  # an empty array
        if bounds.size:
            offsets = np.concatenate([[self.record[0]], tokens.offsets[bounds]])
            before = np.concatenate([[self.record[1]], tokens.before[bounds]])
            sizes, values = np.diff(offsets) - 1, np.diff(before)
            over = np.flatnonzero((sizes > MAX_RECORD_BYTES) | (values > MAX_JSON_VALUES))
            if over.size:
                i = int(over[0])
                where = f"{plan.key or ''}[{plan.count + i}]: "
                if sizes[i] > MAX_RECORD_BYTES:
                    raise TooLarge(
                        f"{where}a record of {size_text(int(sizes[i]))}; records are read "
                        f"up to {size_text(MAX_RECORD_BYTES)} each"
                    )
                raise too_many_values(where)
            # A batch starts after the first comma in each JSON_BATCH bytes of the array.
            after = tokens.offsets[commas] + 1
            bucket = (after - plan.array[0]) // JSON_BATCH
            last = (plan.cuts[-1][0] - plan.array[0]) // JSON_BATCH if plan.cuts else 0
            new = np.flatnonzero(np.diff(bucket, prepend=last) > 0)
            plan.cuts.extend((int(after[i]), plan.count + int(i) + 1) for i in new)
            plan.count += int(bounds.size)
            self.record = (int(offsets[-1]), int(before[-1]))
        if ends.size:
            close = int(tokens.offsets[ends[0]])
            plan.array = (plan.array[0], close)
            plan.array_values = 1 + int(tokens.before[ends[0]]) - self.array_before
