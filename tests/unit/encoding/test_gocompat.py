"""Go standard-library behaviours (engine spec §0, report spec §0.2–0.3)."""

from __future__ import annotations

import math

import pytest

from evolve_action.encoding import (
    go_clean,
    go_float,
    go_join,
    go_str_list,
    round1,
    round6,
    round_half_away,
    split_lines,
    strip_ansi,
    tail_bytes,
    trim_space,
    truncate_bytes,
)


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0.5, 1.0),
        (-0.5, -1.0),
        (1.5, 2.0),
        (2.5, 3.0),  # Python round() gives 2
        (-2.5, -3.0),
        (0.49999999999999994, 0.0),  # the largest float below 0.5 must not round up
        (0.0, 0.0),
        (3.0, 3.0),
        (-0.4, -0.0),
        (1e300, 1e300),
    ],
)
def test_round_half_away(x: float, want: float) -> None:
    assert round_half_away(x) == want


def test_round_half_away_is_exact_half_away_from_zero() -> None:
    # Against exact decimal arithmetic on the float's exact value, halves and near-halves included.
    import random
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    rng = random.Random(6)
    xs = [k / 2 for k in range(-41, 42)]
    xs += [math.nextafter(x, d) for x in xs for d in (-math.inf, math.inf)]
    xs += [rng.uniform(-1e6, 1e6) for _ in range(2000)] + [2.0**52 + 0.5, 2.0**53, 1e300, -1e300]
    for x in xs:
        with localcontext() as ctx:
            ctx.prec = 400
            want = float(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        got = round_half_away(x)
        assert got == want and math.copysign(1, got) == math.copysign(1, x), x


def test_round_half_away_keeps_sign_of_zero_and_specials() -> None:
    assert math.copysign(1, round_half_away(-0.2)) == -1
    assert math.isnan(round_half_away(math.nan))
    assert round_half_away(math.inf) == math.inf


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0.25, 0.3),  # Python round(0.25, 1) == 0.2
        (-0.25, -0.3),
        (0.35, 0.4),  # 0.35*10 is exactly 3.5 in float64; round(0.35, 1) == 0.3
        (2.25, 2.3),
        (0.15, 0.2),
        (1.45, 1.5),
        (12.345, 12.3),
        (10.0, 10.0),
        (0.05, 0.1),
    ],
)
def test_round1(x: float, want: float) -> None:
    assert round1(x) == want


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (2 / 3, 0.666667),
        (1 / 3, 0.333333),
        (0.0000035, 0.000004),  # round(x, 6) == 3e-06
        (0.1234565, 0.123457),  # round(x, 6) == 0.123456
        (5e-07, 1e-06),  # round(x, 6) == 0.0
        (1.0000005, 1.000001),
        (0.75, 0.75),
        (-0.0000035, -0.000004),
    ],
)
def test_round6(x: float, want: float) -> None:
    assert round6(x) == want


@pytest.mark.parametrize(
    ("s", "want"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("a\r\nb\rc", ["a", "b", "c"]),
        ("a\r\n", ["a"]),
        ("\n", []),
        ("\n\n", ["", ""]),
        ("a\x0bb\x0cc\x1cd\x85e\u2028f", ["a\x0bb\x0cc\x1cd\x85e\u2028f"]),  # not line breaks in Go
        ("x\n y \n", ["x", " y "]),
    ],
)
def test_split_lines(s: str, want: list[str]) -> None:
    assert split_lines(s) == want


@pytest.mark.parametrize(
    ("s", "want"),
    [
        ("  a b \t\n", "a b"),
        ("\x85\xa0a\u3000", "a"),
        ("\ufeffa\ufeff", "\ufeffa\ufeff"),  # BOM is not White_Space
        ("\x1ca\x1f", "\x1ca\x1f"),  # str.strip() would remove these
        ("\u2028a\u2029", "a"),
        ("", ""),
    ],
)
def test_trim_space(s: str, want: str) -> None:
    assert trim_space(s) == want


@pytest.mark.parametrize(
    ("base", "p", "want"),
    [
        ("/ws", "/etc/x", "/ws/etc/x"),  # os.path.join would drop /ws
        ("/ws", "a/./b/", "/ws/a/b"),
        ("/ws", "../x", "/x"),
        ("/ws", "a/../../..", "/"),
        ("/ws", "", "/ws"),
        ("", "a", "a"),
        ("", "", ""),
        ("a", "b", "a/b"),
        ("a", "../..", ".."),
        ("/", "/x", "/x"),
        ("", "//x", "/x"),
        ("/ws/", "//a//b", "/ws/a/b"),
    ],
)
def test_go_join(base: str, p: str, want: str) -> None:
    assert go_join(base, p) == want


@pytest.mark.parametrize(
    ("p", "want"),
    [
        ("", "."),
        (".", "."),
        ("a/./b/../c/", "a/c"),
        ("//x//y", "/x/y"),  # POSIX normpath keeps a leading "//"; Go does not
        ("../a", "../a"),
        ("/..", "/"),
    ],
)
def test_go_clean(p: str, want: str) -> None:
    assert go_clean(p) == want


@pytest.mark.parametrize(("items", "want"), [([], "[]"), (["a"], "[a]"), (["a", "b c"], "[a b c]")])
def test_go_str_list(items: list[str], want: str) -> None:
    assert go_str_list(items) == want


@pytest.mark.parametrize(
    ("s", "n", "want"),
    [
        ("hello", 10, "hello"),
        ("hello", 3, "hel"),
        ("hello", 0, ""),
        ("héllo", 2, "h\ufffd"),  # cuts the 2-byte é in half, like Go slicing
        ("héllo", 3, "hé"),
        ("日本", 3, "日"),
    ],
)
def test_truncate_bytes(s: str, n: int, want: str) -> None:
    assert truncate_bytes(s, n) == want


@pytest.mark.parametrize(
    ("s", "n", "want"),
    [
        ("hello", 10, "hello"),
        ("hello", 3, "llo"),
        ("hello", 0, ""),
        ("héllo", 5, "éllo"),
        ("héllo", 4, "\ufffdllo"),
    ],
)
def test_tail_bytes(s: str, n: int, want: str) -> None:
    assert tail_bytes(s, n) == want


@pytest.mark.parametrize(
    ("s", "want"),
    [
        ("plain text\twith tab\n", "plain text\twith tab\n"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;38;5;208mbold\x1b[m", "bold"),
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),
        ("\x1b]0;window title\x07text", "text"),
        ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
        ("\x1b_apc payload\x1b\\x", "x"),
        ("\x1b(Bcharset", "charset"),
        ("\x1bMreverse index", "reverse index"),
        ("\x1b7saved\x1b8", "saved"),
        ("\x9b31mC1 csi", "C1 csi"),
        ("trailing esc\x1b", "trailing esc"),
        ("\x1b]unterminated osc", ""),
        ("héllo → ✓", "héllo → ✓"),
        ("\r\nkeep CR LF", "\r\nkeep CR LF"),
    ],
)
def test_strip_ansi(s: str, want: str) -> None:
    assert strip_ansi(s) == want


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (1.0, "1"),
        (18.0, "18"),
        (10.0, "10"),
        (0.5, "0.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (123456789.125, "123456789.125"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e-6, "0.000001"),
        (2.5e-05, "0.000025"),
        (1e-7, "1e-7"),  # Go cleans e-07 to e-7
        (1.5e-7, "1.5e-7"),
        (1.23e-10, "1.23e-10"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-0.0, "-0"),
        (0.0, "0"),
        (-2.5, "-2.5"),
        (0.666667, "0.666667"),
        (1e16, "10000000000000000"),
    ],
)
def test_go_float(x: float, want: str) -> None:
    assert go_float(x) == want


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf])
def test_go_float_rejects_non_finite(x: float) -> None:
    with pytest.raises(ValueError, match="unsupported float"):
        go_float(x)


def _go_float_by_decimal(x: float) -> str:
    """Go's `encoding/json` float text, the slow obvious way (positional from the exact digits)."""
    from decimal import Decimal

    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if 1e-6 <= abs(x) < 1e21:
        text = format(Decimal(repr(x)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mant, _, exp = repr(x).partition("e")
    sign, digits = exp[0], exp[1:].lstrip("0")
    return f"{mant}e{sign}{digits if sign == '-' else digits.zfill(2)}"


def test_go_float_agrees_with_the_decimal_formulation_everywhere() -> None:
    # The `repr` shortcut (1e-4 <= |x| < 1e16) and the general path meet at the edges.
    import random

    rng = random.Random(5)
    edges = [1e-4, 1e16, 1e-6, 1e21, 9999999999999998.0, 0.00009999999999999999, 2.0**53]
    xs = [
        *edges,
        *(math.nextafter(e, d) for e in edges for d in (0.0, math.inf)),
        *(rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 24) for _ in range(3000)),
        *(float(rng.randint(-(2**60), 2**60)) for _ in range(300)),
        *(rng.randint(-(10**6), 10**6) / 10.0 ** rng.randint(0, 8) for _ in range(1000)),
    ]
    for x in (*xs, *(-x for x in xs)):
        assert go_float(x) == _go_float_by_decimal(x), repr(x)
