"""The job's spend through every model gateway: measured, reserved by requests in flight, capped.

Owns: `Spend` (the measured total, what requests in flight reserve, the `--max-cost-usd` cap).
Guarantees: thread-safe; a reservation is refused (nothing held) when spent + reserved would pass
the cap.
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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, used: Metered) -> None:
        """Count one response."""
        with self._lock:
            self.total = self.total + used

    def exhausted(self) -> bool:
        """True once the measured spend reached the cap."""
        return self.limit_usd is not None and self.total.cost_usd >= self.limit_usd

    def reserve(self, usd: float) -> bool:
        """Hold `usd` for one request; False (nothing held) when spent + reserved would pass the
        cap."""
        with self._lock:
            if self.limit_usd is not None and (
                self.total.cost_usd >= self.limit_usd
                or self.total.cost_usd + self.reserved_usd + usd > self.limit_usd
            ):
                return False
            self.reserved_usd += usd
            return True

    def room(self) -> float | None:
        """Dollars the cap still allows past what is spent and reserved (None: no cap)."""
        with self._lock:
            if self.limit_usd is None:
                return None
            return self.limit_usd - self.total.cost_usd - self.reserved_usd

    def settle(self, reserved: float, used: Metered) -> None:
        """Release one request's reservation and count what it used."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved)
            self.total = self.total + used
