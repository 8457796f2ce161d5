from collections import deque


def count_islands(grid):
    seen = [[False] * len(row) for row in grid]
    islands = 0
    for top, row in enumerate(grid):
        for left, cell in enumerate(row):
            if cell != 1 or seen[top][left]:
                continue
            islands += 1
            seen[top][left] = True
            queue = deque([(top, left)])
            while queue:
                r, c = queue.popleft()
                for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= nr < len(grid) and 0 <= nc < len(grid[nr]):
                        if grid[nr][nc] == 1 and not seen[nr][nc]:
                            seen[nr][nc] = True
                            queue.append((nr, nc))
    return islands
