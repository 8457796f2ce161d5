def wrap_text(text, width):
    # The defect: a word longer than the width stays whole on its own line.
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines = []
    line = ""
    for word in text.split():
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
