"""What a published report needs beyond its pages: badges, model-card snippets, sitemap.

All of it is derived from the report model, so a badge can never disagree with
the page it links to.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import yaml

from ..numbers import bracket, percent, percent1
from ..report import Report, SetReport
from ..stats.plain import decimals
from ..terminal import has_bidi_marks, isolate_bidi

# shields.io named colours, from worst to best.
_COLOURS = ((0.9, "brightgreen"), (0.75, "green"), (0.5, "yellow"), (0.25, "orange"), (0.0, "red"))
_HEX = {
    "brightgreen": "#2e7d32",
    "green": "#558b2f",
    "yellow": "#8d6e00",
    "orange": "#b45309",
    "red": "#b3261e",
    "lightgrey": "#666666",
}


def badge_colour(value: float | None) -> str:
    if value is None:
        return "lightgrey"
    return next(name for floor, name in _COLOURS if value >= floor)


def badge_message(s: SetReport) -> str:
    """'reliability@3 (unbiased) 0.61, 95% [0.09, 1.00]': the headline estimate, and its
    interval with the level it claims; two decimals fit a badge."""
    p = s.lead
    head = f"reliability@{s.estimates.k} ({s.lead_label})"
    if p.estimate is None:
        return f"{head} n/a"
    text = f"{head} {decimals(p.estimate, 2)}"
    if s.supported is not None:
        return f"{text} (no calibrated interval)"
    low, high, how = s.headline_interval
    if low is not None and high is not None:
        level = percent(s.estimates.confidence)
        text += f", {level} [{decimals(low, 2)}, {decimals(high, 2)}]"
        short = {"two-stage bootstrap": "bootstrap", "cluster-robust": "clustered"}
        tags = [short.get(s.headline_interval_kind, "")] if how is not None else []
        tags += ["interval uncalibrated"] if s.uncalibrated is not None else []
        text += f" ({'; '.join(tags)})" if tags else ""
    return text


def set_colour(s: SetReport) -> str:
    """The badge's colour: by the headline value, grey when its interval is uncalibrated
    (no colour vouches for that number)."""
    return "lightgrey" if s.uncalibrated is not None else badge_colour(s.lead.estimate)


def badge_json(s: SetReport) -> bytes:
    """The shields.io endpoint schema (https://shields.io/badges/endpoint-badge)."""
    doc = {
        "schemaVersion": 1,
        "label": s.result_set.name,
        "message": badge_message(s),
        "color": set_colour(s),
    }
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _char_width(ch: str) -> float:
    if ch.isupper() or ch in "@mw%":
        return 8.0
    if ch in " .,:;[]()|il!":
        return 4.0
    return 7.0


def _text_width(text: str) -> int:
    """Width in pixels for 11px Verdana-like text, erring wide so nothing is clipped."""
    return math.ceil(sum(_char_width(ch) for ch in text)) + 12


def badge_svg(s: SetReport) -> bytes:
    """A flat two-part badge, drawn here so no badge service is needed."""
    label, message = s.result_set.name, badge_message(s)
    colour = _HEX[set_colour(s)]
    left, right = _text_width(label), _text_width(message)
    width = left + right
    title = f"{label}: {message}"
    # Here, not at the top: xml.sax.saxutils loads urllib.request (5 ms), which a
    # rebuild that keeps every badge need not pay.
    from xml.sax.saxutils import escape, quoteattr

    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f"aria-label={quoteattr(title)}>"
        f"<title>{escape(title)}</title>"
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" '
        f'text-anchor="middle">'
        f'<text x="{left / 2}" y="14">{escape(label)}</text>'
        f'<text x="{left + right / 2}" y="14">{escape(message)}</text>'
        "</g></svg>\n"
    )
    return svg.encode("utf-8")


@dataclass(frozen=True)
class Snippets:
    markdown: str
    model_index: str


# Markdown punctuation that could start a link, an image, emphasis, code, HTML or an
# entity; backslash-escaped, each shows as itself.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]()<>!#|&])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def markdown_text(text: str) -> str:
    """A name for Markdown, shown as written and unable to change the markup around it.

    A result set named `m](https://evil.example/phish) [x` would otherwise end the
    badge's alt text and load its image from another host. Line breaks become
    spaces (a new line could start a new block) and bidirectional marks are isolated.
    """
    return isolate_bidi(_MARKDOWN_PUNCTUATION.sub(r"\\\1", _CONTROL.sub(" ", text)))


def _absolute(base_url: str | None, path: str) -> str:
    return f"{base_url.rstrip('/')}/{path}" if base_url else path


def snippets(report: Report, s: SetReport, base_url: str | None) -> Snippets:
    """Ready-to-paste text for a README or a Hugging Face model card."""
    badge = _absolute(base_url, f"badges/{s.id}.svg")
    page = _absolute(base_url, s.page)
    k, level = report.k, percent(report.confidence)
    markdown = f"[![reliability@{k}: {markdown_text(s.result_set.name)}]({badge})]({page})"
    p = s.lead
    name = f"reliability@{k} ({s.lead_label})"
    low, high, how = s.headline_interval
    if s.supported is not None and s.uncalibrated is not None:
        name += (
            f" (no interval: the best covered the true value in only {percent1(s.uncalibrated)}"
            " of simulated suites of this shape)"
        )
    elif low is not None and high is not None:
        name += f", {level} interval {bracket(low, high)}"
        if how is not None:
            name += f" ({how})"
        if s.uncalibrated is not None:
            name += (
                f" (uncalibrated: it covered the true value in {percent1(s.uncalibrated)} "
                "of simulated suites of this shape)"
            )
    entry = {
        "model-index": [
            {
                "name": s.result_set.model or s.result_set.name,
                "results": [
                    {
                        "task": {"type": "agent-evaluation", "name": s.result_set.suite},
                        "dataset": {"name": s.result_set.suite, "type": s.result_set.suite},
                        "metrics": [
                            {
                                "type": f"reliability@{k}",
                                "value": None if p.estimate is None else round(p.estimate, 4),
                                "name": name,
                            }
                        ],
                        "source": {"name": report.title, "url": page},
                    }
                ],
            }
        ]
    }
    # Bidirectional marks in a name would reorder the YAML around them: then every
    # character beyond ASCII is written as an escape, which YAML reads back the same.
    plain = not has_bidi_marks(json.dumps(entry, ensure_ascii=False))
    model_index = yaml.safe_dump(entry, sort_keys=False, allow_unicode=plain)
    return Snippets(markdown=markdown, model_index=model_index)


def snippets_markdown(report: Report, s: SetReport, base_url: str | None) -> bytes:
    """badges/<id>.md: both snippets, with a line on where each goes."""
    snip = snippets(report, s, base_url)
    note = (
        ""
        if base_url
        else (
            "\nThese links are relative: build with --base-url (or base_url: in "
            "reportgen.yaml) to get absolute ones that work from a model card.\n"
        )
    )
    text = (
        f"# {markdown_text(s.result_set.name)}\n{note}\n"
        f"## Badge (Markdown)\n\n{snip.markdown}\n\n"
        f"## Hugging Face model card (model-index)\n\n```yaml\n{snip.model_index}```\n"
    )
    return text.encode("utf-8")


def sitemap(base_url: str, pages: list[str]) -> bytes:
    """sitemap.xml of the given pages; needs the site's absolute URL."""
    from xml.sax.saxutils import escape  # see badge_svg

    rows = "".join(
        f"<url><loc>{escape(_absolute(base_url, page))}</loc></url>\n" for page in sorted(pages)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{rows}</urlset>\n"
    ).encode()
