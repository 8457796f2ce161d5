_SYMBOLS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)


def to_roman(n):
    if type(n) is not int or not 1 <= n <= 3999:
        raise ValueError(f"{n!r} is outside 1..3999")
    parts = []
    for value, symbol in _SYMBOLS:
        count, n = divmod(n, value)
        parts.append(symbol * count)
    return "".join(parts)


_CANONICAL = {to_roman(n): n for n in range(1, 4000)}


def from_roman(s):
    try:
        return _CANONICAL[s]
    except (KeyError, TypeError):
        raise ValueError(f"{s!r} is not a canonical Roman numeral") from None
