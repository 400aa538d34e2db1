"""Dimension parsing and conversion: the API's format from Tate texts and CMoA inches."""

from __future__ import annotations

import pytest

from common.dimensions import (
    VARIABLE_TEXT,
    build,
    cm_text,
    from_cmoa,
    inch_text,
    parse_tate,
    unknown,
    variable,
)

X = "\u00d7"  # the API's separator, spaced


@pytest.mark.parametrize(
    ("inches", "text"),
    [
        (38.0, "38"),
        (23.625, "23 5/8"),
        (18.0625, "18 1/16"),
        (23.8125, "23 13/16"),
        (17.6875, "17 11/16"),
        (0.4375, "7/16"),
        (12.5, "12 1/2"),
        (15.99, "16"),  # rounds up to the next whole inch, not "15 16/16"
        (30.0, "30"),
    ],
)
def test_inch_text_uses_reduced_sixteenths(inches: float, text: str) -> None:
    assert inch_text(inches) == text


@pytest.mark.parametrize(
    ("cm", "text"), [(96.52, "96.5"), (60.0075, "60"), (76.2, "76.2"), (111.8, "111.8")]
)
def test_cm_text_has_one_decimal_without_trailing_zero(cm: float, text: str) -> None:
    assert cm_text(cm) == text


def test_build_matches_the_reference_example() -> None:
    assert build(38, 23.625, unit="in") == {
        "in": {
            "text": f"38 {X} 23 5/8 in",
            "height": 38.0,
            "width": 23.625,
            "depth": None,
            "diameter": None,
        },
        "cm": {
            "text": f"96.5 {X} 60 cm",
            "height": 96.5,
            "width": 60.0,
            "depth": None,
            "diameter": None,
        },
    }


def test_numbers_are_floats() -> None:
    dims = build(38, 24, 2, unit="in")
    assert all(isinstance(dims[u][k], float) for u in ("in", "cm") for k in ("height", "width"))


def test_unknown_has_every_key_null() -> None:
    block = {"text": None, "height": None, "width": None, "depth": None, "diameter": None}
    assert unknown() == {"in": block, "cm": block}
    assert build(None, None, unit="cm") == unknown()


def test_tate_text_is_height_by_width_in_millimetres() -> None:
    # Ophelia (N01506): a landscape canvas; the JSON has width="762" (the height), height="1118".
    dims = parse_tate("support: 762 x 1118 mm\r\nframe: 1105 x 1458 x 145 mm", "762", "1118", "")
    assert dims["cm"] == {
        "text": f"76.2 {X} 111.8 cm",
        "height": 76.2,
        "width": 111.8,
        "depth": None,
        "diameter": None,
    }
    assert dims["in"]["text"] == f"30 {X} 44 in"
    assert dims["in"]["height"] == 30.0
    assert dims["in"]["width"] == 44.0


def test_tate_number_fields_are_swapped_when_there_is_no_text() -> None:
    dims = parse_tate(None, width="762", height="1118", depth="50")
    assert (dims["cm"]["height"], dims["cm"]["width"], dims["cm"]["depth"]) == (76.2, 111.8, 5.0)


def test_tate_text_wins_over_shifted_number_fields() -> None:
    # Without a "support:" prefix the export shifted the fields: width="4577", height="45".
    dims = parse_tate("2140 x 4577 x 45 mm", "4577", "45", "")
    assert (dims["cm"]["height"], dims["cm"]["width"], dims["cm"]["depth"]) == (214.0, 457.7, 4.5)


def test_tate_frame_on_the_second_line_is_ignored() -> None:
    dims = parse_tate("image: 244 x 305 mm\r\nframe: 450 x 605 x 25 mm", "244", "305", "")
    assert dims["cm"]["text"] == f"24.4 {X} 30.5 cm"
    assert dims["cm"]["depth"] is None


def test_tate_frame_alone_on_the_first_line_is_used() -> None:
    dims = parse_tate("frame: 811 x 591 x 31 mm", "811", "591", "31")
    assert dims["cm"]["text"] == f"81.1 {X} 59.1 {X} 3.1 cm"


def test_tate_weight_suffix_is_ignored() -> None:
    dims = parse_tate("object: 1550 x 1320 x 1130 mm, 57 kg", "1550", "1320", "1130")
    assert dims["cm"]["text"] == f"155 {X} 132 {X} 113 cm"
    assert dims["cm"]["depth"] == 113.0


def test_tate_non_numeric_width_field_falls_back_on_the_text() -> None:
    text = "support (upper): 245 x 347 mm\r\nsupport (lower): 241 x 346 mm"
    dims = parse_tate(text, "(upper):", "245", "347")
    assert (dims["cm"]["height"], dims["cm"]["width"]) == (24.5, 34.7)


def test_tate_compact_text_without_spaces() -> None:
    dims = parse_tate("1075x1075x120mm\r\nweight: 28kg", "1075", "120", "")
    assert (dims["cm"]["height"], dims["cm"]["width"], dims["cm"]["depth"]) == (107.5, 107.5, 12.0)


def test_tate_diameter() -> None:
    only = parse_tate("object (diameter): 485 mm", "(diameter):", "485", "")
    assert only["cm"] == {
        "text": "diam. 48.5 cm",
        "height": None,
        "width": None,
        "depth": None,
        "diameter": 48.5,
    }
    both = parse_tate("displayed: 300 x 300 mm, Diameter 3000mm", "300", "300", "")
    assert both["cm"]["text"] == f"30 {X} 30 cm; diam. 300 cm"
    assert both["in"]["diameter"] == 118.125  # 3000 mm = 118.11 in, to the nearest 1/16


@pytest.mark.parametrize(
    "text",
    [
        "Overall display dimensions variable",
        "display dimensions variable",
        "Overall display dimensions variable\r\n2450 x 1650 x 955mm (approx when displayed)",
    ],
)
def test_tate_variable_dimensions(text: str) -> None:
    dims = parse_tate(text, "", "", "")
    assert dims == variable()
    assert dims["cm"]["text"] == VARIABLE_TEXT
    assert dims["in"]["height"] is None


def test_tate_variable_with_measures_keeps_the_measures() -> None:
    dims = parse_tate("displayed: 470 x 1370 x 630 mm (Variable)", "", "", "")
    assert dims["cm"]["text"] == f"47 {X} 137 {X} 63 cm"


@pytest.mark.parametrize("text", [None, "", "duration: 5min, 30sec", "unconfirmed"])
def test_tate_unknown(text: str | None) -> None:
    assert parse_tate(text, "", "", "") == unknown()


def test_cmoa_inches_convert_to_centimetres() -> None:
    dims = from_cmoa(17.0, 21.75, 0.0, 0.0)
    assert dims["in"] == {
        "text": f"17 {X} 21 3/4 in",
        "height": 17.0,
        "width": 21.75,
        "depth": None,
        "diameter": None,
    }
    assert dims["cm"]["text"] == f"43.2 {X} 55.2 cm"
    assert (dims["cm"]["height"], dims["cm"]["width"]) == (43.2, 55.2)


def test_cmoa_zero_means_unknown() -> None:
    assert from_cmoa(0.0, 0.0, 0.0, 0.0) == unknown()
    assert from_cmoa(None, None, None, None) == unknown()
    dims = from_cmoa(4.0, 0.0, 0.0, 0.0)
    assert dims["in"]["text"] == "4 in"
    assert dims["in"]["width"] is None


def test_cmoa_depth_and_diameter() -> None:
    assert from_cmoa(10, 5.5, 2.25, 0.0)["in"]["text"] == f"10 {X} 5 1/2 {X} 2 1/4 in"
    dims = from_cmoa(12.0, 0.0, 0.0, 12.0)
    assert dims["in"]["text"] == "12 in; diam. 12 in"
    assert dims["cm"]["diameter"] == 30.5
    assert dims["cm"]["text"] == "30.5 cm; diam. 30.5 cm"
