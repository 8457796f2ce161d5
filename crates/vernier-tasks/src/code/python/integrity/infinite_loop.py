def merge_intervals(intervals):
    while True:
        pass
