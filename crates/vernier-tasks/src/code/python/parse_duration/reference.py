_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_ORDER = "dhms"


def parse_duration(text):
    if not text:
        raise ValueError("empty duration")
    total = 0
    next_unit = 0
    i = 0
    while i < len(text):
        start = i
        while i < len(text) and text[i] in "0123456789":
            i += 1
        if i == start:
            raise ValueError(f"expected digits at {start} in {text!r}")
        if i == len(text):
            raise ValueError(f"{text!r} ends without a unit")
        unit = text[i]
        if unit not in _SECONDS:
            raise ValueError(f"unknown unit {unit!r} in {text!r}")
        rank = _ORDER.index(unit)
        if rank < next_unit:
            raise ValueError(f"unit {unit!r} is out of order or repeated in {text!r}")
        next_unit = rank + 1
        total += int(text[start:i]) * _SECONDS[unit]
        i += 1
    return total
