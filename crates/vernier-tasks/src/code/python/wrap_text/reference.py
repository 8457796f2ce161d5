def wrap_text(text, width):
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines = []
    line = ""
    for word in text.split():
        if len(word) > width:
            if line:
                lines.append(line)
            while len(word) > width:
                lines.append(word[:width])
                word = word[width:]
            line = word
        elif not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
