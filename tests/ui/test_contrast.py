"""Text contrast of the style sheet: every rule that sets both a text colour and a background, and
the inherited pairs that matter (muted help text around the diff samples, on the page and on panels),
reach WCAG AA, 4.5 : 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "static" / "theoria.css").read_text()
AA = 4.5
WHITE = "#ffffff"


def _hex(value: str) -> str:
    value = value.strip().lower()
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        value = "#" + "".join(c * 2 for c in value[1:])
    return value


VARIABLES = {name: _hex(value) for name, value in re.findall(r"--([\w-]+)\s*:\s*(#[0-9a-fA-F]{3,6})\b", CSS)}


def _colour(value: str) -> str | None:
    value = value.strip()
    var = re.fullmatch(r"var\(--([\w-]+)\)", value)
    if var:
        return VARIABLES.get(var.group(1))
    return _hex(value) if re.fullmatch(r"#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}", value) else None


def _luminance(colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(fg: str, bg: str) -> float:
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _rules() -> list[tuple[str, dict[str, str]]]:
    out = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", CSS, flags=re.S)):
        props = {k.strip(): v.strip() for k, v in (p.split(":", 1) for p in body.split(";") if ":" in p)}
        out.append((selector.strip(), props))
    return out


def _background(selector: str) -> str | None:
    for sel, props in _rules():
        if sel == selector:
            for key in ("background", "background-color"):
                if key in props and _colour(props[key]):
                    return _colour(props[key])
    return None


def test_the_contrast_formula_gives_the_wcag_reference_values():
    assert round(contrast("#000000", WHITE), 1) == 21.0
    assert round(contrast("#777777", WHITE), 2) == 4.48


@pytest.mark.parametrize(
    "selector, props",
    [
        (s, p)
        for s, p in _rules()
        if _colour(p.get("color", "")) and _colour(p.get("background", p.get("background-color", "")))
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_rule_with_a_colour_and_a_background_reaches_aa(selector, props):
    fg = _colour(props["color"])
    bg = _colour(props.get("background", props.get("background-color", "")))
    assert contrast(fg, bg) >= AA, f"{selector}: {fg} on {bg} is {contrast(fg, bg):.2f} : 1"


def test_the_diff_samples_in_muted_help_text_reach_aa():
    muted = VARIABLES["muted"]
    for tag in ("del", "ins"):
        bg = _background(tag)
        fg = next((_colour(p["color"]) for s, p in _rules() if s == tag and "color" in p), muted)
        assert bg and contrast(fg, bg) >= AA, f"{tag}: {fg} on {bg} is {contrast(fg, bg):.2f} : 1"


@pytest.mark.parametrize("variable", ["ink", "muted", "ok", "bad", "warn", "accent"])
def test_text_colours_reach_aa_on_the_page_and_on_panels(variable):
    for bg in (VARIABLES["bg"], WHITE):
        assert contrast(VARIABLES[variable], bg) >= AA, f"--{variable} on {bg}"
