def split_csv_line(line):
    return line.split(",")
