"""The job's spend through every model gateway: measured, reserved by requests in flight, capped.

Owns: `Spend` (the measured total, what requests in flight reserve, the `--max-cost-usd` cap, and
the one request in flight that relies on the prompt cache: `relying_usd`).
Guarantees: thread-safe; a reservation is refused (nothing held) when spent + reserved would pass
the cap; at most one request in flight at a time is reserved below its worst case on the strength
of a prefix the gateway saw cached (`reserve(…, relying=…)`), so the cap is passed by at most that
one request's `relying` (what a cache miss would add: docs/gateway.md).
Never does: price a request (the gateway's rules do), read `os.environ`, print.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from evolve_action.harness._meter import (
    Metered,
)

__all__ = ["Spend"]


@dataclass(slots=True)
class Spend:
    """The job's measured spend through every gateway, what requests in flight reserve, the cap."""

    limit_usd: float | None = None
    total: Metered = field(default_factory=Metered)
    reserved_usd: float = 0.0
    """The worst case of every request in flight (released when its answer is settled)."""
    relying_usd: float = 0.0
    """What a cache miss would add to the one request in flight reserved at cache-read prices
    (0: none is)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, used: Metered) -> None:
        """Count one response."""
        with self._lock:
            self.total = self.total + used

    def exhausted(self) -> bool:
        """True once the measured spend reached the cap."""
        return self.limit_usd is not None and self.total.cost_usd >= self.limit_usd

    def reserve(self, usd: float, *, relying: float = 0.0) -> bool:
        """Hold `usd` for one request; False (nothing held) when spent + reserved would pass the
        cap, or when the request relies on the prompt cache (`relying` > 0: what a miss would add
        to `usd`) while another request in flight does."""
        with self._lock:
            if self.limit_usd is not None and (
                self.total.cost_usd >= self.limit_usd
                or self.total.cost_usd + self.reserved_usd + usd > self.limit_usd
            ):
                return False
            if relying > 0:
                if self.relying_usd > 0:
                    return False
                self.relying_usd = relying
            self.reserved_usd += usd
            return True

    def room(self) -> float | None:
        """Dollars the cap still allows past what is spent and reserved (None: no cap)."""
        with self._lock:
            if self.limit_usd is None:
                return None
            return self.limit_usd - self.total.cost_usd - self.reserved_usd

    def settle(self, reserved: float, used: Metered, *, relying: float = 0.0) -> None:
        """Release one request's reservation (and its reliance on the cache) and count what it
        used."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved)
            if relying > 0:
                self.relying_usd = 0.0
            self.total = self.total + used
