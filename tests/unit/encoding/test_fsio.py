"""Atomic writes and sibling clean-up (report spec §0.1)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from evolve_action.encoding import UnsafeWriteError, atomic_write_text, remove_siblings, write_text


def test_atomic_write_creates_dirs_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "a" / "b" / "results.json"
    atomic_write_text(p, '{\n  "é": 1\n}\n')
    assert p.read_bytes() == '{\n  "é": 1\n}\n'.encode()
    assert sorted(x.name for x in p.parent.iterdir()) == ["results.json"]
    assert stat.S_IMODE(p.stat().st_mode) & 0o600 == 0o600
    atomic_write_text(p, "second\n")
    assert p.read_text() == "second\n"


def test_atomic_write_keeps_newlines_verbatim(tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    atomic_write_text(p, "a\nb\r\n")
    assert p.read_bytes() == b"a\nb\r\n"


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "results.json"
    p.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(p, "bad \ud800")
    assert p.read_text() == "old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["results.json"]


def test_write_text(tmp_path: Path) -> None:
    p = tmp_path / "d" / "EVALUATION.md"
    write_text(p, "# r\n")
    assert p.read_bytes() == b"# r\n"


def test_remove_siblings(tmp_path: Path) -> None:
    for ext in ("json", "jsonc", "yaml", "yml"):
        (tmp_path / f"results.{ext}").write_text("x")
    (tmp_path / "results.md").write_text("keep")
    (tmp_path / "EVALUATION.json").write_text("keep")
    kept = tmp_path / "results.yaml"
    removed = remove_siblings(kept)
    assert sorted(p.name for p in removed) == ["results.json", "results.jsonc", "results.yml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "EVALUATION.json",
        "results.md",
        "results.yaml",
    ]
    assert remove_siblings(kept) == []


def test_remove_siblings_with_explicit_stem_and_dirs(tmp_path: Path) -> None:
    (tmp_path / "EVALUATION.yml").write_text("x")
    (tmp_path / "EVALUATION.jsonc").mkdir()  # directories are left alone
    removed = remove_siblings(
        tmp_path / "EVALUATION.json", stem="EVALUATION", exts=["yml", "jsonc"]
    )
    assert [p.name for p in removed] == ["EVALUATION.yml"]
    assert (tmp_path / "EVALUATION.jsonc").is_dir()


# ---------------------------------------------------------------------------------------------
# Link safety: nothing is written through a link a pull request could have made


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout (a directory holding `.git`) beside an `outside` directory."""
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    (top / ".github" / "workflows").mkdir(parents=True)
    (top / ".github" / "workflows" / "x.yml").write_text("on: push\n")
    (tmp_path / "outside").mkdir()
    return top


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_a_symlinked_destination_is_refused_and_its_target_untouched(checkout: Path) -> None:
    link = checkout / "EVALUATION.md"
    link.symlink_to(".github/workflows/x.yml")
    before = _tree(checkout)
    for write in (atomic_write_text, write_text):
        with pytest.raises(UnsafeWriteError) as err:
            write(link, "# report\n")
        assert str(link) in err.value.message and "symbolic link" in err.value.message
        assert err.value.path == link
    assert _tree(checkout) == before
    assert link.is_symlink() and sorted(p.name for p in checkout.iterdir()) == [
        ".git",
        ".github",
        "EVALUATION.md",
    ]


def test_a_symlinked_yaml_destination_outside_the_checkout_is_refused(checkout: Path) -> None:
    target = checkout.parent / "outside" / "victim.yaml"
    target.write_text("keep: 1\n")
    (checkout / "EVALUATION.yaml").symlink_to(target)
    with pytest.raises(UnsafeWriteError, match=r"EVALUATION\.yaml"):
        atomic_write_text(checkout / "EVALUATION.yaml", "a: 1\n")
    assert target.read_text() == "keep: 1\n"


def test_a_symlinked_directory_inside_the_checkout_is_refused(checkout: Path) -> None:
    outside = checkout.parent / "outside"
    (checkout / ".evolve-action").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeWriteError) as err:
        write_text(checkout / ".evolve-action" / "comment.md", "body\n")
    assert "goes through the symbolic link" in err.value.message
    assert str(checkout / ".evolve-action") in err.value.message
    assert list(outside.iterdir()) == []
    # deeper, and when the directory below the link does not exist yet
    with pytest.raises(UnsafeWriteError):
        atomic_write_text(checkout / ".evolve-action" / "new" / "dir" / "x.json", "{}\n")
    assert list(outside.iterdir()) == []


def test_a_planted_temp_name_is_never_opened(checkout: Path) -> None:
    victim = checkout.parent / "outside" / "victim"
    victim.write_text("keep\n")
    results = checkout / "evals" / "s"
    results.mkdir(parents=True)
    (results / "results.yaml.tmp").symlink_to(victim)
    atomic_write_text(results / "results.yaml", "a: 1\n")
    assert (results / "results.yaml").read_text() == "a: 1\n"
    assert victim.read_text() == "keep\n"
    assert sorted(p.name for p in results.iterdir()) == ["results.yaml", "results.yaml.tmp"]


def test_a_symlinked_cache_file_is_refused_outside_a_checkout_too(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    victim = tmp_path / "victim.json"
    victim.write_text("{}\n")
    (cache / "token-counts.json").symlink_to(victim)
    with pytest.raises(UnsafeWriteError, match=r"token-counts\.json"):
        atomic_write_text(cache / "token-counts.json", '{"k": 1}\n')
    assert victim.read_text() == "{}\n"


def test_links_above_the_checkout_and_outside_any_checkout_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    atomic_write_text(tmp_path / "alias" / "repo" / "out" / "EVALUATION.md", "# r\n")
    assert (real / "repo" / "out" / "EVALUATION.md").read_text() == "# r\n"
    (tmp_path / "plain").mkdir()
    (tmp_path / "cachelink").symlink_to(tmp_path / "plain", target_is_directory=True)
    atomic_write_text(tmp_path / "cachelink" / "token-counts.json", "{}\n")
    assert (tmp_path / "plain" / "token-counts.json").read_text() == "{}\n"


def test_remove_siblings_removes_a_link_never_its_target(checkout: Path) -> None:
    victim = checkout.parent / "outside" / "victim.json"
    victim.write_text("keep\n")
    (checkout / "results.json").symlink_to(victim)
    atomic_write_text(checkout / "results.yaml", "a: 1\n")
    assert [p.name for p in remove_siblings(checkout / "results.yaml")] == ["results.json"]
    assert victim.read_text() == "keep\n"
    assert not (checkout / "results.json").is_symlink()


# ---------------------------------------------------------------------------------------------
# The redaction gate at the point of writing

KEY = "sk-ant-test-9Qx7Lm2Rt5Vw8Zk3Np6Hs1Jd4Fg0Yb-AaBbCcDdEeFf_GgHh"


@pytest.fixture
def key_registered() -> None:
    from evolve_action import redact

    redact.register(KEY)  # the suite's autouse fixture forgets it after the test


def _scrub(value: object) -> object:
    from evolve_action.redact import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {redact(k): _scrub(v) for k, v in value.items()}
    return value


SECRET_DOCS = [
    {"evidence": KEY},  # a whole plain scalar: `***` would be a YAML alias if written bare
    {"list": [KEY, f"{KEY} trailing", "ok"]},
    {KEY: {"nested": KEY}},  # a key
    {"block": f"line one\n{KEY}\n  - {KEY}\nend\n"},  # a literal block
    {"quoted": f"tab\t{KEY}", "single": f"'{KEY}': yes"},
    {"split": f"{KEY[:30]}\n{KEY[30:]}", "n": 12345678, "ok": True},
]


@pytest.mark.parametrize("doc", SECRET_DOCS)
@pytest.mark.parametrize("fmt", ["yaml", "json", "jsonc"])
def test_a_written_document_holds_no_secret_and_stays_valid(
    tmp_path: Path, key_registered: None, doc: dict[str, object], fmt: str
) -> None:
    from evolve_action.encoding import decode_path, encode_document

    path = tmp_path / f"results.{fmt}"
    atomic_write_text(path, encode_document(doc, fmt, "Maintained by evolve run"))  # type: ignore[arg-type]
    written = path.read_text(encoding="utf-8")
    assert KEY[:12] not in written and KEY[-12:] not in written
    assert decode_path(path) == _scrub(doc)
    assert written.startswith(("#", "//") if fmt != "json" else "{")


def test_written_files_of_every_kind_are_redacted(tmp_path: Path, key_registered: None) -> None:
    import xml.etree.ElementTree as ET

    files = {
        "EVALUATION.md": f"- `m` failed `x`: {KEY}\n",
        "junit.xml": f'<testsuites><testcase name="{KEY}">{KEY[:20]}&#xA;{KEY[20:]}</testcase></testsuites>\n',
        "step-summary.md": f"key {KEY}",
    }
    for name, text in files.items():
        write_text(tmp_path / name, text)
        assert KEY[:12] not in (tmp_path / name).read_text()
    ET.parse(tmp_path / "junit.xml")


@pytest.mark.parametrize("name", ["results.yaml", "results.json", "EVALUATION.md", "j.xml"])
def test_text_without_secrets_is_written_byte_for_byte(
    tmp_path: Path, key_registered: None, name: str
) -> None:
    text = '# c\n"a": "sk-ant- task-management-system-design-2024 ghp_short"\nb: [1, 2]\n'
    atomic_write_text(tmp_path / name, text)
    write_text(tmp_path / ("plain-" + name), text)
    assert (tmp_path / name).read_bytes() == text.encode()
    assert (tmp_path / ("plain-" + name)).read_bytes() == text.encode()


ENCODED = {
    "zero-width": "\u200b".join(KEY),
    "percent": "".join(f"%{ord(c):02X}" for c in KEY),
    "u-escape": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "entities": "".join(f"&#{ord(c)};" for c in KEY),
    "upper": KEY.upper(),
}


def _sees_key(text: str) -> bool:
    """The test's own decoders: is either end of the key visible?"""
    import html
    import re
    import unicodedata
    from urllib.parse import unquote

    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    u = re.sub(r"\\{1,2}u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), visible)
    views = (
        visible,
        unquote(visible),
        html.unescape(visible),
        html.unescape(html.unescape(visible)),
    )
    views += (u, html.unescape(u))  # JSON as Go writes it escapes `&` as `\u0026`
    return any(p.lower() in v.lower() for v in views for p in (KEY[:12], KEY[-12:]))


@pytest.mark.parametrize("form", list(ENCODED))
@pytest.mark.parametrize("name", ["EVALUATION.md", "results.json", "results.yaml", "junit.xml"])
def test_an_encoded_secret_is_absent_from_every_written_file(
    tmp_path: Path, key_registered: None, form: str, name: str
) -> None:
    """Issue 29 item 5: each encoding of a planted secret, in each kind of file we write."""
    import xml.etree.ElementTree as ET

    from evolve_action.encoding import decode_path, encode_document

    planted = f"the agent wrote {ENCODED[form]} here"
    if name.endswith((".json", ".yaml")):
        text = encode_document({"evidence": planted, "n": 1}, name.rsplit(".", 1)[1], "c")  # type: ignore[arg-type]
    elif name.endswith(".xml"):
        text = f'<testsuites><testcase name="x">{planted.replace("&", "&amp;")}</testcase></testsuites>\n'
    else:
        text = f"- failed: {planted}\n"
    assert _sees_key(text)
    path = tmp_path / name
    atomic_write_text(path, text)
    written = path.read_text(encoding="utf-8")
    assert not _sees_key(written), written
    if name.endswith((".json", ".yaml")):
        assert decode_path(path)["n"] == 1  # still a valid document
    if name.endswith(".xml"):
        assert not _sees_key(ET.parse(path).getroot().findtext("testcase") or "")
