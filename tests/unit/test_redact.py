"""The redaction gate (`evolve_action.redact`): token shapes, registered values and their encoded
forms, fragments left by a size cut, short values, structured documents kept valid, scoping."""

from __future__ import annotations

import base64
import json
import textwrap
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest

from evolve_action import redact
from evolve_action.redact import REDACTED, Redactor, is_secret_name

KEY = "sk-ant-test-9Qx7Lm2Rt5Vw8Zk3Np6Hs1Jd4Fg0Yb-AaBbCcDdEeFf_GgHh"
"""A realistic Anthropic-shaped key, registered in most tests."""


def fresh(*values: str) -> Redactor:
    r = Redactor()
    for v in values:
        r.register(v)
    return r


ORDINARY = [
    "",
    "plain text\nwith lines\tand tabs",
    "exit 0: ok\n",
    "| Claude Sonnet 5 (`claude-sonnet-5`) | PASS | 3/3 | +0% |",
    "task-management-system-design-2024 and risk-assessment-framework-v2",  # `sk-` inside words
    "keys start with sk-ant- and GitHub tokens with ghp_ or github_pat_",  # prefixes alone
    "sk-learn-something-quite-long-here",  # no digit: not an OpenAI key shape
    "ghp_short",
    "actions/checkout@df4cb1c069e1874edd31",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_text_without_secrets_is_returned_as_is(text: str) -> None:
    r = fresh(KEY)
    assert r.redact(text) is text
    assert r.redact_structured(json.dumps({"t": text}), "json") == json.dumps({"t": text})


SHAPES = [
    "sk-ant-api03-" + "Ab1_" * 20 + "-xyzAA",  # Anthropic API key
    "sk-ant-oat01-" + "x9" * 30,  # Claude Code OAuth token
    "sk-proj-" + "Tq7" * 30,  # OpenAI project key
    "sk-svcacct-" + "Tq7" * 20,
    "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2",  # OpenAI user key
    "ghp_" + "a1B2" * 9,  # GitHub classic PAT (36 characters)
    "gho_" + "Z9y8" * 9,
    "ghu_" + "Z9y8" * 9,
    "ghs_" + "Z9y8" * 9,  # installation token
    "ghr_" + "Z9y8" * 19,
    "github_pat_11ABCDEFG0" + "x" * 12 + "_" + "Y" * 59,  # fine-grained PAT
    "evolve-session-" + "Ab3_-xY9" * 5 + "Q1z",  # a model-gateway session token (43 characters)
]


@pytest.mark.parametrize("token", SHAPES)
def test_token_shapes_are_redacted_unregistered(token: str) -> None:
    r = fresh()
    assert r.redact(f"the agent said {token}.") == f"the agent said {REDACTED}."
    assert r.redact(f"key={token}\n") == f"key={REDACTED}\n"


def test_a_registered_value_and_its_encoded_forms() -> None:
    r = fresh(KEY)
    raw = KEY.encode()
    forms = [
        KEY,
        quote(KEY, safe=""),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(b"x" + raw).decode(),  # the other two alignments
        base64.b64encode(b"xy" + raw).decode(),
        base64.b64encode(b"prefix text: " + raw + b"\n").decode(),  # inside a longer encoding
        KEY[:30] + "\n" + KEY[30:],  # split by a line break
        KEY[:20] + "\n    " + KEY[20:50] + " " + KEY[50:],  # wrapped and indented
        KEY[:25] + "\\n" + KEY[25:],  # split by an escaped line break (JSON, YAML)
        KEY[:25] + "&#xA;" + KEY[25:],  # split by an XML character reference
        "\n".join(textwrap.wrap(base64.b64encode(raw * 3).decode(), 76)),  # `base64` wraps at 76
    ]
    for form in forms:
        out = r.redact(f"before {form} after")
        assert out.startswith("before ") and out.endswith(" after"), (form, out)
        for piece in (KEY, KEY[:12], KEY[-12:], base64.b64encode(raw).decode()[4:20]):
            assert piece not in out, (form, out)


def test_a_value_needing_json_escapes_is_found_in_json_text() -> None:
    secret = 'pa"ss\\word-with-quotes-1234'
    r = fresh(secret)
    doc = json.dumps({"evidence": f"got {secret}!"})
    out = r.redact_structured(doc, "json")
    assert json.loads(out) == {"evidence": f"got {REDACTED}!"}


def test_what_is_left_of_a_cut_value_is_redacted() -> None:
    r = fresh(KEY)
    tail = "exit 0: " + KEY[23:] + "\n"  # a command's output keeps its last 200 bytes
    head = "matched: " + KEY[:40] + "…"  # a regex match keeps its first 120 bytes
    assert r.redact(tail) == f"exit 0: {REDACTED}\n"
    assert r.redact(head) == f"matched: {REDACTED}…"


def test_short_values_are_ignored_and_do_not_wreck_text() -> None:
    r = Redactor()
    assert r.register("abc") is False
    assert r.register("  secret ") is False  # 6 characters once stripped
    assert r.register("") is False
    assert r.values == frozenset()
    text = "abc secret text"
    assert r.redact(text) is text
    assert r.register("12345678") is True  # exactly the minimum
    assert r.redact("pin 12345678.") == f"pin {REDACTED}."


def test_each_line_of_a_multi_line_secret_is_registered() -> None:
    pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"
    r = fresh(pem)
    assert r.redact("line: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") == f"line: {REDACTED}"


@pytest.mark.parametrize(
    "value",
    [
        {"evidence": f"exit 0: {KEY}\n"},
        {"evidence": f"\n{KEY}\n"},  # the value right after an escape
        {"evidence": f"n{KEY[1:]}"},
        {"evidence": f"exit 1: \n{KEY[20:]}"},  # a cut value widened into the `\n` before it
        {"evidence": f"\\{KEY}"},  # an escaped backslash before it
        {"e": f"é{KEY}é", "n": 12345678},
        {KEY: [KEY, f"{KEY[:30]}\n{KEY[30:]}"]},
        {"tail": KEY[30:], "head": KEY[:30]},
    ],
)
def test_json_stays_valid_and_holds_no_secret(value: object) -> None:
    r = fresh(KEY, "12345678")
    for text in (json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
        out = r.redact_structured(text, "json")
        decoded = json.loads(out)  # still JSON
        assert KEY[:12] not in out and KEY[-12:] not in out
        assert "12345678" in out or "12345678" not in text  # a number is never touched
        assert REDACTED in json.dumps(decoded)


def test_xml_stays_well_formed() -> None:
    r = fresh(KEY)
    doc = (
        '<?xml version="1.0"?>\n<testsuite name="x">'
        f'<failure message="exit 1: {KEY}&#xA;more">exit 1: {KEY[:20]}&#xA;{KEY[20:]} &amp; x'
        f"</failure><error>&#xA;{KEY[3:]}</error></testsuite>\n"
    )
    out = r.redact_structured(doc, "xml")
    ET.fromstring(out.split("\n", 1)[1])
    assert KEY[-12:] not in out and KEY[:12] not in out


def test_is_secret_name() -> None:
    for name in (
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "INPUT_GITHUB_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_ANTHROPIC_API_KEY",
        "INPUT_OPENAI-API-KEY",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "CODEX_API_KEY",
        "MY_SECRET",
        "DB_PASSWORD",
        "GITHUB_PAT",
        "token",
    ):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "MAX_TOKENS", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "TOKENIZER"):
        assert not is_secret_name(name), name


def test_register_environ_and_scoped() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-scripted-key",
        "EVOLVE_ANTHROPIC_API_KEY": "another-key-1234",
        "INPUT_GITHUB_TOKEN": "ghs_installation_token",
        "HOME": "/home/runner/work",
        "NAMED": "named-secret-value",
        "PATH": "/usr/bin:/bin",
    }
    with redact.scoped():
        redact.register_environ(env, names=("NAMED", "EVOLVE_ANTHROPIC_API_KEY"))
        values = redact.redactor().values
        assert values == {
            "sk-scripted-key",
            "another-key-1234",
            "ghs_installation_token",
            "named-secret-value",
        }
        assert redact.redact("HOME=/home/runner/work key=sk-scripted-key") == (
            f"HOME=/home/runner/work key={REDACTED}"
        )
    assert "sk-scripted-key" not in redact.redactor().values
    assert redact.redact("key=sk-scripted-key") == "key=sk-scripted-key"


def test_never_raises_on_odd_text() -> None:
    r = fresh(KEY)
    for text in ("\ud800 lone surrogate", "\x00\x1b[31m", "🙂" * 1000, KEY * 50):
        r.redact(text)
        r.redact_structured(text, "json")
        r.redact_structured(text, "xml")
    assert r.redact(KEY * 3) == REDACTED


def test_quick_test_agrees_with_the_full_pattern() -> None:
    # `holds_any` (values pattern, then substring tests before the shapes pattern, on each
    # normalised view) must say yes exactly where `spans` finds something, for every near miss.
    import random

    rng = random.Random(24)
    pieces = [
        *SHAPES,
        KEY,
        KEY[:12],
        KEY[-12:],
        base64.b64encode(KEY.encode()).decode(),
        quote(KEY, safe=""),
        "sk-",
        "sk-ant-",
        "gh",
        "ghp_",
        "github_pat_",
        "a1B2" * 9,
        "x",
        "_",
        "-",
        " ",
        "\n",
        "\\n",
        "é",
        "SK-ANT-",
        "%73",
        "&#115;",
        "&amp;",
        "\\u0073",
        "\u200b",
    ]
    for values in ((), (KEY,), ("short-but-ok", KEY)):
        r = fresh(*values)
        for _ in range(400):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
            if rng.random() < 0.5 and len(text) > 4:  # cut a piece in two
                cut = rng.randint(1, len(text) - 1)
                text = text[:cut] + rng.choice(["", " ", "x"]) + text[cut:]
            assert r.holds_any(text) is bool(r.spans(text)), (values, text)


# ---------------------------------------------------------------------------------------------
# Issue 29 item 5: text is normalised before matching


def encodings(secret: str) -> dict[str, str]:
    """The forms an agent produces without effort, each one character-by-character."""
    return {
        "zero-width": "\u200b".join(secret),
        "word-joiner-and-soft-hyphen": "\u2060\u00ad".join(secret),
        "percent": "".join(f"%{ord(c):02X}" for c in secret),
        "percent-lower": "".join(f"%{ord(c):02x}" for c in secret),
        "u-escape": "".join(f"\\u{ord(c):04x}" for c in secret),
        "x-escape": "".join(f"\\x{ord(c):02x}" for c in secret),
        "entity-decimal": "".join(f"&#{ord(c)};" for c in secret),
        "entity-hex": "".join(f"&#x{ord(c):X};" for c in secret),
        "entity-mixed": "".join(f"&#{ord(c)};" if i % 2 else c for i, c in enumerate(secret)),
        "upper": secret.upper(),
        "lower": secret.lower(),
        "alternating": "".join(c.upper() if i % 2 else c for i, c in enumerate(secret)),
        "partly-percent": secret[:10] + quote(secret[10:], safe="").replace("-", "%2D"),
    }


def decoded_views(text: str) -> list[str]:
    """The test's own decoders (independent of the code under test), each applied once."""
    import html
    import re
    import unicodedata
    from urllib.parse import unquote

    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    u = re.sub(r"\\[ux]([0-9a-fA-F]{2,4})", lambda m: chr(int(m.group(1), 16)), visible)
    return [v.lower() for v in (text, visible, unquote(visible), html.unescape(visible), u)]


def holds(text: str, secret: str) -> bool:
    return any(p.lower() in v for v in decoded_views(text) for p in (secret[:12], secret[-12:]))


CUSTOM = "hunter2-Correct-Horse-Battery"  # a registered secret of no known token shape


@pytest.mark.parametrize("secret", [KEY, CUSTOM, "ghs_" + "Z9y8" * 9])
@pytest.mark.parametrize("name", list(encodings("x")))
def test_each_encoding_of_a_secret_is_redacted(secret: str, name: str) -> None:
    r = fresh(KEY, CUSTOM)
    form = encodings(secret)[name]
    text = f"The agent said: {form} (done)\n"
    assert holds(text, secret)  # the oracle sees the secret in the input
    out = r.redact(text)
    assert not holds(out, secret), out
    assert out.startswith("The agent said: ") and out.endswith(" (done)\n")
    doc = json.dumps({"evidence": text, "n": 1})
    cleaned = r.redact_structured(doc, "json")
    assert json.loads(cleaned)["n"] == 1 and not holds(json.loads(cleaned)["evidence"], secret)
    xml = f"<r><e>{text.replace('&', '&amp;')}</e></r>"
    assert not holds(ET.fromstring(r.redact_structured(xml, "xml")).findtext("e") or "", secret)


ORDINARY_ENCODED = [
    "50%25 of runs, 100%2F100 and %7E in a URL: https://example.com/a%20b?q=%41",
    "Fish &amp; chips &lt;b&gt; &#169; &#x2014; &nbsp;",
    'JSON "caf\\u00e9" and \\x41 and \\u{1F600}',
    "zero\u200bwidth\u200djoin\ufeffbom and soft\u00adhyphen",
    "SHOUTING TASK-MANAGEMENT-SYSTEM-DESIGN-2024 AND SK-LEARN-SOMETHING-QUITE-LONG",
    "GHP_SHORT and GITHUB_PAT_ alone",
]


@pytest.mark.parametrize("text", ORDINARY_ENCODED)
def test_text_without_secrets_stays_byte_identical_whatever_it_escapes(text: str) -> None:
    r = fresh(KEY, CUSTOM)
    assert r.redact(text) is text
    assert r.redact_structured(json.dumps({"t": text}), "json") == json.dumps({"t": text})


def test_normalised_maps_every_character_back_to_where_it_came_from() -> None:
    from evolve_action.redact import normalised

    text = "a%41\\u0042&amp;\u200bz"
    clean, where = normalised(text)
    assert clean == "aAB&z"
    assert where is not None
    assert [text[s:e] for s, e in where] == ["a", "%41", "\\u0042", "&amp;", "z"]
    assert normalised("plain text") == ("plain text", None)
    assert normalised("100% sure") == ("100% sure", None)


def test_every_format_character_of_the_bmp_is_dropped() -> None:
    import unicodedata

    from evolve_action.redact import normalised

    cf = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf"]
    for c in cf:
        assert normalised(f"a{c}b")[0] == "ab", hex(ord(c))
