"""Markdown pages (methodology, FAQ) whose numbers are computed at build time.

A content file is Markdown with YAML front matter. Its body is first rendered
as a Jinja template (autoescaped, so any value that is text is HTML-escaped)
with calculators that call the statistics core, then converted to HTML with
markdown-it-py. The worked examples therefore can never drift from the code
that computes the report: change their inputs in the front matter and every
number on the page changes with them.

Available inside a content file:

* `page`: the front matter (a mapping); `site`: title, k, confidence, level.
* `task(successes, runs, k=site.k, confidence=site.confidence)`: a `TaskExample`.
* `suite(items, k=..., confidence=...)`: a `SuiteExample`; items are "c/n"
  strings or [c, n] pairs.
* `z(confidence)`, `t(confidence, df)`: the quantiles used.
* `compare(a_items, b_items, k=..., confidence=...)`: a paired `compare.Comparison`
  (tasks matched by position); `bootstrap(items, k=...)`: a `variance.TwoStageBootstrap`;
  `decompose(items)`: a `variance.VarianceDecomposition`; `clustered(items, categories,
  k=...)`: a `variance.ClusteredReliability`; `plan(target_halfwidth, pass_rate=...,
  task_sd=..., correlation=..., tasks=...)`: a `planner.Plan`;
  `wilson_halfwidth(runs, pass_rate, confidence)`; `coverage(alpha, beta, tasks, runs,
  k=...)`: a `coverage.CoverageCheck` for T tasks of n runs with true rates ~ Beta(alpha,
  beta) (beta None: a point mass at alpha), `shown_bootstrap(result)`: the bootstrap
  interval pages show, and `headline(check)`: a `coverage.Headline`.
* `task_changes(before_items, after_items, control="holm", level=1 - confidence)`: a
  `task_tests.TaskTests` (tasks matched by position, ids "1", "2", ...);
  `fall_p(before, after)` and `smallest_fall_p(before, after)` for one task ("c/n" each);
  `holm(p_values)`, `bh(p_values)`: adjusted p-values.
* filters `f3` (three decimals), `pct` (0.95 -> "95%"), `pct1` (0.8295 -> "83.0%"),
  `interval` ((low, high) -> "[0.199, 0.777]"), `pvalue` (0.0004 -> "4.0e-04").
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment

from ..errors import UserError
from ..numbers import (
    bracket,
    fixed,
    p_value,
    percent,
    percent1,
    signed_bracket,
    significant,
)
from ..readers.documents import yaml_load
from ..stats.bootstrap import SHOWN_INTERVAL, shown_bootstrap_interval, two_stage_bootstrap
from ..stats.clustered import ClusteredReliability, clustered_reliability
from ..stats.compare import Comparison
from ..stats.compare import compare as compare_sets
from ..stats.coverage import MIN_BOOTSTRAP_REPLICATES, CoverageCheck, check_coverage
from ..stats.estimate import (
    SuiteInterval,
    TaskEstimates,
    estimate_suite,
    estimate_tasks,
    normal_quantile,
    t_quantile,
)
from ..stats.headline import SHORT_NAMES, UNFIT_COVERAGE, Headline, choose_headline, supported_k
from ..stats.planner import Plan, plan, wilson_halfwidth
from ..stats.population import Population
from ..stats.task_tests import (
    TaskTests,
    benjamini_hochberg,
    fisher_p_lower,
    holm,
    shared_task_tests,
    smallest_p_lower,
)
from ..stats.variance import VarianceDecomposition, decompose_variance
from .profile_examples import profile_functions
from .theme import package_folder

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


def split_front_matter(text: str) -> tuple[str, dict[str, Any], int]:
    """(body, metadata, lines before the body) of a Markdown file.

    Metadata is {} without front matter; the line count lets errors in the body
    name the line of the file rather than of the body.
    """
    if not text.startswith("---"):
        return text, {}, 0
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            meta = yaml_load("".join(lines[1:i])) or {}
            if not isinstance(meta, dict):
                raise ValueError("front matter must be a mapping")
            return "".join(lines[i + 1 :]), meta, i + 1
    raise ValueError("front matter starts with --- but never ends")


@dataclass(frozen=True)
class TaskExample:
    """Every per-task number for one (c, n, k, confidence), as plain floats."""

    successes: int
    runs: int
    k: int
    confidence: float
    z: float
    pass_rate: float
    pass_rate_low: float
    pass_rate_high: float
    plugin: float
    plugin_low: float
    plugin_high: float
    unbiased: float | None
    pass_at_k: float | None

    @property
    def level(self) -> str:
        return percent(self.confidence)

    @property
    def failures(self) -> int:
        return self.runs - self.successes

    @property
    def wilson_centre(self) -> float:
        """(p + z^2/2n) / (1 + z^2/n): shown when the calculation is written out."""
        z2n = self.z * self.z / self.runs
        return (self.pass_rate + z2n / 2) / (1 + z2n)

    @property
    def wilson_half_width(self) -> float:
        z2n = self.z * self.z / self.runs
        p = self.pass_rate
        return self.z / (1 + z2n) * math.sqrt(p * (1 - p) / self.runs + z2n / (4 * self.runs))

    def falling(self, top: int) -> str:
        """'16·15·14': the k factors of top!/(top-k)!, stopping at a zero factor."""
        return "·".join(str(top - i) for i in range(min(self.k, top + 1)))

    def falling_product(self, top: int) -> int:
        """top·(top-1)·...·(top-k+1), which is 0 when top < k."""
        return math.prod(top - i for i in range(self.k)) if top >= self.k else 0


@dataclass(frozen=True)
class SuiteExample:
    tasks: list[TaskExample]
    k: int
    confidence: float
    plugin: SuiteInterval
    unbiased: SuiteInterval

    @property
    def level(self) -> str:
        return percent(self.confidence)

    @property
    def half_width(self) -> float | None:
        p = self.plugin
        if p.sd is None or p.t is None:
            return None
        return p.t * p.sd / math.sqrt(len(self.tasks))

    @property
    def raw_low(self) -> float | None:
        half = self.half_width
        return None if half is None or self.plugin.estimate is None else self.plugin.estimate - half

    @property
    def raw_high(self) -> float | None:
        half = self.half_width
        return None if half is None or self.plugin.estimate is None else self.plugin.estimate + half


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def task_view(t: TaskEstimates, i: int) -> TaskExample:
    """Task i of vectorized estimates as plain numbers (no recomputation)."""
    return TaskExample(
        successes=int(t.successes[i]),
        runs=int(t.runs[i]),
        k=t.k,
        confidence=t.confidence,
        z=normal_quantile(t.confidence),
        pass_rate=float(t.pass_rate[i]),
        pass_rate_low=float(t.pass_rate_low[i]),
        pass_rate_high=float(t.pass_rate_high[i]),
        plugin=float(t.plugin[i]),
        plugin_low=float(t.plugin_low[i]),
        plugin_high=float(t.plugin_high[i]),
        unbiased=_optional(t.unbiased[i]),
        pass_at_k=_optional(t.pass_at_k[i]),
    )


def task_example(successes: int, runs: int, k: int = 3, confidence: float = 0.95) -> TaskExample:
    return task_view(estimate_tasks([successes], [runs], k, confidence), 0)


def _pair(item: Any) -> tuple[int, int]:
    if isinstance(item, str):
        c, n = item.split("/")
        return int(c), int(n)
    c, n = item
    return int(c), int(n)


def suite_example(items: Sequence[Any], k: int = 3, confidence: float = 0.95) -> SuiteExample:
    pairs = [_pair(item) for item in items]
    s = estimate_suite([c for c, _ in pairs], [n for _, n in pairs], k, confidence)
    return SuiteExample(
        tasks=[task_view(s.tasks, i) for i in range(len(pairs))],
        k=k,
        confidence=confidence,
        plugin=s.plugin,
        unbiased=s.unbiased,
    )


class _Formatted(str):
    """Text made by our own number formatting: safe to place in Markdown as it is."""


def _f3(value: float | None) -> _Formatted:
    return _Formatted(fixed(value))


def _sig3(value: float | None) -> _Formatted:
    return _Formatted(significant(value))


def _pct(value: float) -> _Formatted:
    return _Formatted(percent(value))


def _pct1(value: float | None) -> _Formatted:
    return _Formatted(percent1(value))


def _interval(pair: Sequence[float | None], around_zero: bool = False) -> _Formatted:
    """`(low, high)|interval`; `|interval(around_zero=true)` for a difference whose text
    says whether it excludes 0 (see numbers.signed_bound)."""
    low, high = pair
    return _Formatted(signed_bracket(low, high) if around_zero else bracket(low, high))


_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()#+\-.!|<>&]")


def _escape_value(value: Any) -> Any:
    """Jinja's finalize hook: a text value cannot turn into Markdown or HTML markup.

    Numbers and our own formatted numbers pass through; any other text has
    each punctuation character that Markdown acts on backslash-escaped, which
    markdown-it renders as the literal character (and HTML-escapes once).
    """
    if isinstance(value, str) and not isinstance(value, _Formatted):
        return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), value)
    return value


@functools.lru_cache(maxsize=32)
def _compiled(body: str) -> jinja2.Template:
    """A content page's Jinja template, compiled once per process: compiling is most
    of a content page's cost, and `serve` renders the same pages again after
    every edit elsewhere. A page that is not the package's own is compiled in Jinja's
    sandbox (see theme.environment)."""
    env = content_environment(sandboxed=body not in _package_bodies())
    return env.from_string(body)


@functools.cache
def _package_bodies() -> frozenset[str]:
    """The Jinja bodies of the package's own content pages: trusted, so not sandboxed."""
    folder = package_folder("content")
    return frozenset(
        _parts(path.read_text(encoding="utf-8"), str(path))[0]
        for path in sorted(folder.glob("*.md"))
    )


def content_environment(sandboxed: bool = False) -> jinja2.Environment:
    # Autoescape is off because the output is Markdown, not HTML: escaping for
    # HTML here would be escaped again by markdown-it (&amp;amp; in code).
    kind = SandboxedEnvironment if sandboxed else jinja2.Environment
    env = kind(
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        finalize=_escape_value,
        # Compiled once per build and rendered once: constant folding costs more
        # compile time (a tenth of a second on the methodology) than it saves.
        optimized=False,
    )
    env.filters["f3"] = _f3
    env.filters["pvalue"] = p_value
    env.filters["pct"] = _pct
    env.filters["pct1"] = _pct1
    env.filters["sig3"] = _sig3
    env.filters["interval"] = _interval
    return env


@functools.cache
def markdown_parser() -> MarkdownIt:
    """The Markdown parser, made on first use: markdown-it-py takes about 11 ms to
    import, which a rebuild that renders no content page need not pay."""
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML

    parser = MarkdownIt("commonmark", {"typographer": False}).enable("table")
    for name in ("fence", "code_block"):
        parser.add_render_rule(name, _focusable(getattr(RendererHTML, name)))
    return parser


def _focusable(render: Callable[..., str]) -> Callable[..., str]:
    """A code block's renderer, with tabindex="0" on its <pre>. The formulas are code
    blocks: on a phone they scroll sideways in their own box rather than wrap mid-line
    (style.css), and a box that scrolls must take focus for a keyboard to scroll it,
    as the tables' wrappers do."""

    def focusable(self: object, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return render(self, tokens, idx, options, env).replace("<pre", '<pre tabindex="0"', 1)

    return focusable


def _heading_id(text: str) -> str:
    """'How much to trust these intervals' -> 'how-much-to-trust-these-intervals'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def markdown_to_html(markdown: str) -> str:
    """Markdown to HTML, with an id on every h2 and h3 so sections can be linked to,
    and table header cells marked as column headers."""
    parser = markdown_parser()
    tokens = parser.parse(markdown)
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            slug = _heading_id(tokens[i + 1].content)
            seen[slug] = seen.get(slug, 0) + 1
            token.attrSet("id", slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
        elif token.type == "th_open":
            # A Markdown table's header cells are its one header row: column headers.
            token.attrSet("scope", "col")
    html: str = parser.renderer.render(tokens, parser.options, {})
    return html


def _template_line(error: BaseException) -> int | None:
    """The body line being rendered when `error` was raised, from the traceback."""
    line = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


@functools.lru_cache(maxsize=64)
def coverage_example(
    alpha: float,
    beta: float | None,
    tasks: int,
    runs: int | tuple[int, ...],
    k: int,
    confidence: float,
) -> CoverageCheck:
    """A coverage check for a made-up suite; cached, since the pages of one build
    (and the test suite's many builds) ask for the same few again and again. `runs`
    is every task's, or a pattern the tasks' runs cycle through."""
    if beta is None:
        population = Population(alpha, None)
    else:
        population = Population(alpha / (alpha + float(beta)), alpha + float(beta))
    pattern = (runs,) if isinstance(runs, int) else runs
    per_task = [pattern[i % len(pattern)] for i in range(tasks)]
    return check_coverage(per_task, k, population, confidence)


def _front_matter_problem(source: str, error: Exception) -> str:
    """A front matter error at its line of the file (the YAML starts on line 2)."""
    mark = getattr(error, "problem_mark", None)
    if isinstance(error, yaml.YAMLError) and mark is not None:
        reason = getattr(error, "problem", None) or error
        return f"{source}:{mark.line + 2}: front matter: not valid YAML: {reason}"
    return f"{source}: front matter: {error}"


@functools.lru_cache(maxsize=16)
def _split(text: str) -> tuple[str, dict[str, Any], int]:
    # The methodology's front matter (its worked examples' inputs) takes a few hundredths
    # of a second to parse: once per process for the navigation and the page (and
    # `serve`'s rebuilds), and not again in a content worker forked after it.
    return split_front_matter(text)


def _parts(text: str, source: str) -> tuple[str, dict[str, Any], int]:
    """(body, front matter, lines before the body) of one content file; the front
    matter is the caller's to change, not the cached one."""
    try:
        body, meta, offset = _split(text)
    except (ValueError, yaml.YAMLError) as error:
        raise UserError(_front_matter_problem(source, error)) from None
    return body, copy.deepcopy(meta), offset


def front_matter(text: str, source: str = "content") -> dict[str, Any]:
    """The front matter of one content file (its title makes the navigation)."""
    return _parts(text, source)[1]


def render_content(
    text: str, site: dict[str, Any], source: str = "content"
) -> tuple[str, dict[str, Any]]:
    """(html, front matter) of one content file: Jinja first, then Markdown."""
    body, meta, offset = _parts(text, source)
    k = int(site.get("k", 3))
    confidence = float(site.get("confidence", 0.95))
    site = {"k": k, "confidence": confidence, "level": percent(confidence), **site}
    try:
        template = _compiled(body)
        markdown = template.render(
            page=meta, site=site, **_example_functions(k, confidence), **_PAGE_NAMES
        )
    except jinja2.TemplateError as error:
        line = getattr(error, "lineno", None) or _template_line(error)
        where = f"{source}:{line + offset}" if line else source
        raise UserError(f"{where}: template error: {error}") from None
    except (ValueError, TypeError, ArithmeticError, LookupError) as error:
        line = _template_line(error)
        where = f"{source}:{line + offset}" if line else source
        raise UserError(f"{where}: template error: {type(error).__name__}: {error}") from None
    return markdown_to_html(markdown), meta


def _example_functions(k: int, confidence: float) -> dict[str, Any]:
    """What a content page calls to work its examples out, at the site's k and level
    unless the page passes its own. Counts are written as pages write them (_pair)."""

    def task(successes: int, runs: int, k: int = k, confidence: float = confidence) -> TaskExample:
        return task_example(successes, runs, k, confidence)

    def suite(items: Sequence[Any], k: int = k, confidence: float = confidence) -> SuiteExample:
        return suite_example(items, k, confidence)

    def compare(
        a: Sequence[Any], b: Sequence[Any], k: int = k, confidence: float = confidence
    ) -> Comparison:
        """Tasks are matched by position: item i of a and of b is task "i+1"."""
        return compare_sets(_by_position(a), _by_position(b), k, confidence)

    def bootstrap(items: Sequence[Any], k: int = k, confidence: float = confidence) -> Any:
        return two_stage_bootstrap(*_counts(items), k, confidence, interval=SHOWN_INTERVAL)

    def coverage(
        alpha: float,
        beta: float | None,
        tasks: int,
        runs: int | Sequence[int],
        k: int = k,
        confidence: float = confidence,
    ) -> CoverageCheck:
        pattern = int(runs) if isinstance(runs, int) else tuple(int(n) for n in runs)
        return coverage_example(float(alpha), beta, int(tasks), pattern, int(k), confidence)

    def clustered(
        items: Sequence[Any], categories: Sequence[str], k: int = k, confidence: float = confidence
    ) -> ClusteredReliability:
        return clustered_reliability(*_counts(items), k, categories, confidence)

    def task_changes(
        before: Sequence[Any], after: Sequence[Any], control: str = "holm", **options: Any
    ) -> TaskTests:
        """Per-task tests; tasks are matched by position, with ids "1", "2", ..."""
        options.setdefault("level", round(1 - confidence, 12))
        return shared_task_tests(
            _by_position(before), _by_position(after), control=control, **options
        )

    def planner(target_halfwidth: float, **options: Any) -> Plan:
        options.setdefault("confidence", confidence)
        return plan(target_halfwidth, **options)

    return {
        "task": task,
        "suite": suite,
        "compare": compare,
        "bootstrap": bootstrap,
        "clustered": clustered,
        "plan": planner,
        "task_changes": task_changes,
        "coverage": coverage,
        **profile_functions(k, confidence, _counts),
    }


def _counts(items: Sequence[Any]) -> tuple[list[int], list[int]]:
    """(successes, runs) of a page's tasks, each written as a pair or "c/n"."""
    pairs = [_pair(item) for item in items]
    return [c for c, _ in pairs], [n for _, n in pairs]


def _by_position(items: Sequence[Any]) -> dict[str, tuple[int, int]]:
    """A page's tasks named by position, "1", "2", ...: two lists of the same tasks."""
    return {str(i + 1): _pair(item) for i, item in enumerate(items)}


def _decompose(items: Sequence[Any]) -> VarianceDecomposition:
    return decompose_variance(*_counts(items))


def _fall_p(before: Any, after: Any) -> float:
    """One-sided Fisher p-value that a task's pass rate fell from `before` to `after`."""
    return fisher_p_lower(_pair(before), _pair(after))


def _smallest_fall_p(before: Any, after: Any) -> float:
    return smallest_p_lower(_pair(before), _pair(after))


def _holm(p: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values as plain floats (as a page prints them)."""
    return [float(v) for v in holm(p)]


def _benjamini_hochberg(p: Sequence[float]) -> list[float]:
    return [float(v) for v in benjamini_hochberg(p)]


def _headline(check: CoverageCheck | None, complete: bool = True) -> Headline:
    return choose_headline(check, complete)


#: What every content page may call or read besides its examples: the same at any k
#: and level.
_PAGE_NAMES: dict[str, Any] = {
    "z": normal_quantile,
    "t": t_quantile,
    "decompose": _decompose,
    "fall_p": _fall_p,
    "smallest_fall_p": _smallest_fall_p,
    "holm": _holm,
    "bh": _benjamini_hochberg,
    "wilson_halfwidth": wilson_halfwidth,
    "min_bootstrap": MIN_BOOTSTRAP_REPLICATES,
    "shown_bootstrap": shown_bootstrap_interval,
    "headline": _headline,
    "supported_k": supported_k,
    "interval_names": SHORT_NAMES,
    "unfit": UNFIT_COVERAGE,
}
