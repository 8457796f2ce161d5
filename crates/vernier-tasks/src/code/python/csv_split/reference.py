def split_csv_line(line):
    fields = []
    i = 0
    while True:
        if i < len(line) and line[i] == '"':
            i += 1
            field = []
            while True:
                if i >= len(line):
                    raise ValueError("a quoted field is not terminated")
                if line[i] == '"':
                    if i + 1 < len(line) and line[i + 1] == '"':
                        field.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                field.append(line[i])
                i += 1
            fields.append("".join(field))
            if i < len(line) and line[i] != ",":
                raise ValueError(f"text after a closing quote at {i}")
        else:
            end = line.find(",", i)
            if end == -1:
                end = len(line)
            fields.append(line[i:end])
            i = end
        if i >= len(line):
            return fields
        i += 1  # the comma
