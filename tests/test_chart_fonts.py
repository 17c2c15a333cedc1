"""The chart engine measures labels with vl-convert's own Liberation Sans.

Left to the machine's font configuration, vl-convert measures with the fonts it
finds there, so two machines could lay out the same report differently (Debian's
Liberation Sans 1.07 and vl-convert's 2.x differ on "·", for one). The engine
points vl-convert at a configuration without fonts (website/fontconfig), so a
site's charts are the same bytes wherever it is built.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reportgen.website import chart_engine
from reportgen.website.chart_engine import FONTS_CONF, Converter

# Any sans-serif font the machine has under the family vl-convert draws with: it would
# take the place of vl-convert's own copy when the machine's configuration is read.
SYSTEM_FONTS = sorted(Path("/usr/share/fonts").glob("**/LiberationSans-Regular.ttf"))

LABEL_SPEC = {
    "data": {"values": [{"m": "agent-alpha · support-desk (unbiased)", "v": 0.5}]},
    "mark": "bar",
    "encoding": {
        "y": {"field": "m", "type": "nominal", "title": None},
        "x": {"field": "v", "type": "quantitative"},
    },
    "config": {"font": "sans-serif"},
    "padding": 0,
}


def _config(folder: Path, font: Path | None) -> Path:
    """A font configuration naming one folder, with `font` in it or nothing."""
    folder.mkdir()
    if font is not None:
        (folder / font.name).symlink_to(font)
    conf = folder / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?>\n<fontconfig><dir>{folder}</dir></fontconfig>\n')
    return conf


def _label_width(svg: str) -> float:
    """How far right of the chart's left edge the plot starts: the label's width."""
    found = re.search(r'transform="translate\(([0-9.]+),', svg)
    assert found is not None
    return float(found.group(1))


def _vl_convert_alone(conf: Path) -> str:
    """The SVG vl-convert draws when it reads the font configuration `conf`."""
    code = (
        "import json, sys, vl_convert\n"
        "sys.stdout.write(vl_convert.vegalite_to_svg(json.loads(sys.argv[1])))"
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(LABEL_SPEC)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _engine(conf: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    converter = Converter()
    try:
        converter.send([LABEL_SPEC])
        (svg,) = converter.receive()
    finally:
        converter.close()
    return svg


@pytest.mark.skipif(not SYSTEM_FONTS, reason="no Liberation Sans among the machine's fonts")
def test_the_machines_fonts_do_not_change_a_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_system_font = _config(tmp_path / "system", SYSTEM_FONTS[0])
    without_fonts = _config(tmp_path / "none", None)
    # The premise, or this test proves nothing here: on its own, vl-convert lays the
    # label out differently with the machine's font.
    alone = [_vl_convert_alone(conf) for conf in (with_system_font, without_fonts)]
    if alone[0] == alone[1]:
        pytest.skip(f"{SYSTEM_FONTS[0]} measures this label as vl-convert's own font does")
    drawn = [_engine(conf, monkeypatch) for conf in (with_system_font, without_fonts)]
    assert drawn[0] == drawn[1] == alone[1]
    assert _label_width(drawn[0]) == _label_width(alone[1]) != _label_width(alone[0])


def test_the_engines_font_folder_holds_no_fonts() -> None:
    root = ET.parse(FONTS_CONF).getroot()
    folders = [FONTS_CONF.parent / (entry.text or "") for entry in root.iter("dir")]
    assert [entry.get("prefix") for entry in root.iter("dir")] == ["relative"]
    for folder in folders:
        assert folder.resolve() == FONTS_CONF.parent.resolve()
        files = [p.name for p in folder.rglob("*") if p.is_file()]
        assert files == ["fonts.conf"], files


def test_the_engine_points_vl_convert_at_its_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Wherever the test above cannot run (a machine without Liberation Sans): the
    # engine sets the variable before vl-convert first draws, whatever was set before.
    seen: list[str | None] = []

    def vegalite_to_svg(spec: object) -> str:
        seen.append(os.environ.get("FONTCONFIG_FILE"))
        return "<svg/>"

    monkeypatch.setitem(
        sys.modules, "vl_convert", types.SimpleNamespace(vegalite_to_svg=vegalite_to_svg)
    )
    monkeypatch.setenv("FONTCONFIG_FILE", "/etc/fonts/fonts.conf")
    body = json.dumps([LABEL_SPEC]).encode()
    stdin = io.TextIOWrapper(io.BytesIO(len(body).to_bytes(8, "big") + body))
    stdout = io.StringIO()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", stdout)
    chart_engine.main()
    assert json.loads(stdout.getvalue()) == ["<svg/>"]
    assert seen == [str(FONTS_CONF)] * 2  # the warm-up and the one chart
    assert FONTS_CONF.is_absolute() and FONTS_CONF.is_file()
