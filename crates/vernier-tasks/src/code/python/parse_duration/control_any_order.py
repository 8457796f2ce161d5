import re

_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    # The defect: units may come in any order (each still at most once).
    if not re.fullmatch(r"(?:[0-9]+[dhms])+", text):
        raise ValueError(f"malformed duration {text!r}")
    total = 0
    seen = set()
    for number, unit in re.findall(r"([0-9]+)([dhms])", text):
        if unit in seen:
            raise ValueError(f"unit {unit!r} repeated")
        seen.add(unit)
        total += int(number) * _SECONDS[unit]
    return total
