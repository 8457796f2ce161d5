def shortest_path(maze):
    # The defect: depth-first search returns the length of the first path it
    # finds, which is not the shortest once the maze has loops.
    height = len(maze)
    start = next((r, row.index("S")) for r, row in enumerate(maze) if "S" in row)
    seen = {start}
    stack = [(start, 0)]
    while stack:
        (r, c), steps = stack.pop()
        if maze[r][c] == "E":
            return steps
        for nr, nc in ((r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)):
            if 0 <= nr < height and 0 <= nc < len(maze[nr]) and maze[nr][nc] != "#":
                if (nr, nc) not in seen:
                    seen.add((nr, nc))
                    stack.append(((nr, nc), steps + 1))
    return -1
