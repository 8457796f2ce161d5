def merge_intervals(intervals):
    return list(intervals)
