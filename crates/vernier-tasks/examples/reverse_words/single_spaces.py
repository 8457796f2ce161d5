def reverse_words(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    return " ".join(reversed(text.split(" ")))
