def count_islands(grid):
    seen = set()

    def sink(r, c):
        if r < 0 or r >= len(grid) or c < 0 or c >= len(grid[r]):
            return
        if grid[r][c] != 1 or (r, c) in seen:
            return
        seen.add((r, c))
        sink(r - 1, c)
        sink(r + 1, c)
        sink(r, c - 1)
        sink(r, c + 1)

    islands = 0
    for r in range(len(grid)):
        for c in range(len(grid[r])):
            if grid[r][c] == 1 and (r, c) not in seen:
                islands += 1
                sink(r, c)
    return islands
