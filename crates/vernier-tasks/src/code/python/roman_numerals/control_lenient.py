_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
_SYMBOLS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)


def to_roman(n):
    if not 1 <= n <= 3999:
        raise ValueError(f"{n} is outside 1..3999")
    parts = []
    for value, symbol in _SYMBOLS:
        count, n = divmod(n, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(s):
    # The defect: any string of valid symbols is read with the subtractive
    # rule, so "IIII", "IC" and "MMMM" are accepted.
    if not s or any(char not in _VALUES for char in s):
        raise ValueError(f"{s!r} is not a Roman numeral")
    total = 0
    for i, char in enumerate(s):
        value = _VALUES[char]
        if i + 1 < len(s) and _VALUES[s[i + 1]] > value:
            total -= value
        else:
            total += value
    return total
