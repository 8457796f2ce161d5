from collections import deque


def shortest_path(maze):
    cells = {}
    for r, row in enumerate(maze):
        for c, char in enumerate(row):
            if char != "#":
                cells[(r, c)] = char
    start = next(cell for cell, char in cells.items() if char == "S")
    distance = {start: 0}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cells[cell] == "E":
            return distance[cell]
        r, c = cell
        for step in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if step in cells and step not in distance:
                distance[step] = distance[cell] + 1
                queue.append(step)
    return -1
