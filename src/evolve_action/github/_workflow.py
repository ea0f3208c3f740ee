"""GitHub Actions workflow commands: annotations, masks, groups, outputs and the step summary.

Owns: escaping per the workflow-command rules and writing to injected streams and env-file paths.
Guarantees: a value can never break out of its command (newlines, `%`, `:` and `,` are escaped),
control and escape characters are stripped from it (`sanitise.clean_text`), secrets and tokens in
it become `***` (`redact`), and commands pass a `sanitise.ConsoleGate` as trusted writes
(everything else written to a gated stream is neutralised). A value given to `mask` is registered
with `redact` too, so what the runner masks in the log is also redacted from everything we write.
Never reads `os.environ`: callers pass what they were given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from evolve_action.redact import redact, register
from evolve_action.sanitise import clean_text, write_trusted


def escape_data(value: str) -> str:
    """Escape a command's message part (`%`, CR, LF)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a command property value (`%`, CR, LF, `:`, `,`)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """Format one workflow command line, e.g. `::error file=a.json,line=3::bad`."""
    props = ",".join(
        f"{key}={escape_property(redact(clean_text(str(val))))}"
        for key, val in properties.items()
        if val is not None
    )
    head = f"::{name} {props}" if props else f"::{name}"
    return f"{head}::{escape_data(redact(clean_text(message)))}"


def annotate(
    stream: TextIO,
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> None:
    """Write an `::error`/`::warning`/`::notice` annotation line."""
    write_trusted(stream, command(level, message, file=file, line=line, title=title) + "\n")


def mask(stream: TextIO, secret: str) -> None:
    """Ask the runner to mask `secret` in all later log output (each line separately), and
    register it with `redact` for everything else we write or post."""
    register(secret)
    for part in secret.splitlines():
        if part.strip():
            write_trusted(stream, f"::add-mask::{escape_data(part)}\n")


def is_actions(environ: Mapping[str, str] | None) -> bool:
    """True when running as a GitHub Actions step."""
    return environ is not None and environ.get("GITHUB_ACTIONS") == "true"
