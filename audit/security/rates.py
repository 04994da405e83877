"""Rates written as text ("10/min", "5/15min"): the one grammar of every throttle setting.

Plain Python, so the settings can check a rate from the environment at start-up
(``theoria.settings.env.envrate``) with the same rules ``audit.security.throttling`` applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
_RATE_RE = re.compile(r"(\d{1,9})/(\d{0,6})([a-z]{1,6})")


@dataclass(frozen=True)
class Rate:
    """``count`` events per ``seconds``."""

    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str | None) -> Rate | None:
        """ "10/min", "5/15min", "1000/day" -> Rate; "" or None -> None (no limit).

        Raises ValueError naming the accepted form for anything else.
        """
        text = (text or "").strip().lower()
        if not text:
            return None
        m = _RATE_RE.fullmatch(text)
        unit = (_UNITS.get(m.group(3)) or _UNITS.get(m.group(3).removesuffix("s"))) if m else None
        if not m or not unit or int(m.group(1)) < 1 or (m.group(2) and int(m.group(2)) == 0):
            raise ValueError(f"{text!r} is not a rate; write N/unit or N/<k>unit, e.g. 10/min or 5/15min.")
        return cls(int(m.group(1)), int(m.group(2) or 1) * unit)
