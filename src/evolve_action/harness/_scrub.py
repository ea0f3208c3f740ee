"""Removing secrets from what the model gateway passes back: a byte stream fed in chunks, or a text.

Owns: `Scrubber` (and the text a secret is replaced with).
Guarantees: a secret split across chunks is removed too; only the longest tail that could still
begin a secret is held back.
Never does: decide what a secret is (the caller passes them), log, print.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["Scrubber"]

_REDACTED = b"[redacted by evolve-action]"


class Scrubber:
    """Removes secrets from a byte stream fed in chunks, a secret split across chunks included:
    it holds back only the longest tail that could still begin one."""

    def __init__(self, secrets: Iterator[str] | tuple[str, ...]) -> None:
        self._secrets = tuple(sorted({s.encode() for s in secrets if s}, key=len, reverse=True))
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        """The bytes of `chunk` (after what was held) that are safe to pass on now."""
        if not self._secrets:
            return chunk
        data = self._held + chunk
        for secret in self._secrets:
            data = data.replace(secret, _REDACTED)
        keep = 0
        longest = len(self._secrets[0]) - 1
        for k in range(min(longest, len(data)), 0, -1):
            tail = data[-k:]
            if any(s.startswith(tail) for s in self._secrets):
                keep = k
                break
        self._held = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep]

    def flush(self) -> bytes:
        """What is still held (the stream ended: it can begin no secret any more)."""
        rest, self._held = self._held, b""
        return rest

    def text(self, value: str) -> str:
        """`value` with every secret removed."""
        out = value.encode("utf-8", "surrogateescape")
        for secret in self._secrets:
            out = out.replace(secret, _REDACTED)
        return out.decode("utf-8", "surrogateescape")
