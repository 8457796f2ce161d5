//! `maze-path`: shortest path length in a grid maze, by breadth-first search.

use std::collections::VecDeque;

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r##"Write a Python function

    def shortest_path(maze: list[str]) -> int:

The maze is a list of equal-length strings: "S" is the start, "E" the end (exactly
one of each), "#" a wall and "." open floor. A step moves up, down, left or right to a
cell that is not a wall; outside the grid is wall. Return the smallest number of
steps from S to E, or -1 when E cannot be reached. Example: ["S.#", "..#", "#.E"]
gives 4. The tests include 200x200 mazes with many loops, within a time limit."##;

/// Side of the large mazes.
const LARGE: usize = 200;

/// The Rust reference: breadth-first search. `None` means E is unreachable (or the
/// maze lacks S or E, which no case does).
pub(super) fn shortest(maze: &[String]) -> Option<usize> {
    let grid: Vec<&[u8]> = maze.iter().map(String::as_bytes).collect();
    let start = grid.iter().enumerate().find_map(|(row, cells)| {
        cells
            .iter()
            .position(|&c| c == b'S')
            .map(|column| (row, column))
    })?;
    let mut distance: Vec<Vec<Option<usize>>> =
        grid.iter().map(|cells| vec![None; cells.len()]).collect();
    distance[start.0][start.1] = Some(0);
    let mut queue = VecDeque::from([start]);
    while let Some((row, column)) = queue.pop_front() {
        let steps = distance[row][column]?;
        if grid[row][column] == b'E' {
            return Some(steps);
        }
        let neighbours = [
            (row.wrapping_sub(1), column),
            (row + 1, column),
            (row, column.wrapping_sub(1)),
            (row, column + 1),
        ];
        for (next_row, next_column) in neighbours {
            let open = grid
                .get(next_row)
                .and_then(|cells| cells.get(next_column))
                .is_some_and(|&c| c != b'#');
            if open && distance[next_row][next_column].is_none() {
                distance[next_row][next_column] = Some(steps + 1);
                queue.push_back((next_row, next_column));
            }
        }
    }
    None
}

fn rows(cells: &[Vec<u8>]) -> Vec<String> {
    cells
        .iter()
        .map(|row| row.iter().map(|&c| char::from(c)).collect())
        .collect()
}

/// A 200x200 field with `wall_percent` walls at random, S and E at given cells. With
/// walls well below the percolation threshold the open floor is one big region full of
/// loops, where the first path a depth-first search finds is far from the shortest.
fn random_maze(
    seed: u64,
    wall_percent: u64,
    start: (usize, usize),
    end: (usize, usize),
) -> Vec<Vec<u8>> {
    let mut generator = SplitMix64::new(seed);
    let mut cells: Vec<Vec<u8>> = (0..LARGE)
        .map(|_| {
            (0..LARGE)
                .map(|_| {
                    if generator.chance(wall_percent, 100) {
                        b'#'
                    } else {
                        b'.'
                    }
                })
                .collect()
        })
        .collect();
    cells[start.0][start.1] = b'S';
    cells[end.0][end.1] = b'E';
    cells
}

/// The first reachable random maze among the 1,000 seeds from `seed` on.
fn reachable_maze(
    seed: u64,
    wall_percent: u64,
    start: (usize, usize),
    end: (usize, usize),
) -> Vec<String> {
    (seed..seed + 1_000)
        .map(|seed| rows(&random_maze(seed, wall_percent, start, end)))
        .find(|maze| shortest(maze).is_some())
        .unwrap_or_default()
}

/// Random walls, then a closed ring of walls around E.
fn walled_off_maze(seed: u64) -> Vec<String> {
    let end = (120, 80);
    let mut cells = random_maze(seed, 20, (3, 3), end);
    for (row, cells_of_row) in cells.iter_mut().enumerate() {
        for (column, cell) in cells_of_row.iter_mut().enumerate() {
            let (down, across) = (row.abs_diff(end.0), column.abs_diff(end.1));
            if down.max(across) == 2 {
                *cell = b'#';
            }
        }
    }
    rows(&cells)
}

/// Open floor with a wall that has one gap far from the straight line.
fn detour_maze() -> Vec<String> {
    let mut cells = vec![vec![b'.'; LARGE]; LARGE];
    for (column, cell) in cells[100].iter_mut().enumerate() {
        if column != 190 {
            *cell = b'#';
        }
    }
    cells[0][0] = b'S';
    cells[199][0] = b'E';
    rows(&cells)
}

fn case(name: &str, maze: &[String]) -> vernier_grader::Case {
    let steps = shortest(maze).map_or(Value::from(-1), Value::from);
    Case::new(name, json!(maze), steps)
}

fn owned(maze: &[&str]) -> Vec<String> {
    maze.iter().map(|&row| row.to_owned()).collect()
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let open_field = {
        let mut cells = vec![vec![b'.'; LARGE]; LARGE];
        cells[0][0] = b'S';
        cells[LARGE - 1][LARGE - 1] = b'E';
        rows(&cells)
    };
    let mut cases = vec![
        case("adjacent", &owned(&["SE"])),
        case("wall_between", &owned(&["S#E"])),
        case("prompt_example", &owned(&["S.#", "..#", "#.E"])),
        case("corridor", &owned(&["S....E"])),
        case("column", &owned(&["S", ".", ".", "E"])),
        case(
            "loop_choice",
            &owned(&["S....", ".###.", ".....", ".###.", "....E"]),
        ),
        case("enclosed_end", &owned(&["S..#.", "...#E", "...##"])),
        case("open_field_200", &open_field),
        case("detour_200", &detour_maze()),
        case(
            "random_walls_25_200",
            &reachable_maze(
                draw.seed(0x006d_617a_6501),
                25,
                (0, 0),
                (LARGE - 1, LARGE - 1),
            ),
        ),
        case(
            "random_walls_35_200",
            &reachable_maze(draw.seed(0x006d_617a_6502), 35, (17, 190), (185, 9)),
        ),
        case(
            "random_walled_off_200",
            &walled_off_maze(draw.seed(0x006d_617a_6503)),
        ),
    ];
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_walls_35_200_extra_{index}"),
            &reachable_maze(
                draw.extra_seed(0x006d_617a_6502, index),
                35,
                (17, 190),
                (185, 9),
            ),
        ));
    }
    single_control_spec!(
        id: "maze-path",
        folder: "maze_path",
        control: "first-path-dfs" => "control_first_path_dfs.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_mazes_by_hand() {
        assert_eq!(shortest(&owned(&["SE"])), Some(1));
        assert_eq!(shortest(&owned(&["S#E"])), None);
        assert_eq!(shortest(&owned(&["S.#", "..#", "#.E"])), Some(4));
        assert_eq!(
            shortest(&owned(&["S....", ".###.", ".....", ".###.", "....E"])),
            Some(8)
        );
        assert_eq!(shortest(&owned(&["S..#.", "...#E", "...##"])), None);
    }

    #[test]
    fn large_mazes_have_the_expected_shape() {
        let open: Vec<String> = {
            let mut cells = vec![vec![b'.'; LARGE]; LARGE];
            cells[0][0] = b'S';
            cells[LARGE - 1][LARGE - 1] = b'E';
            rows(&cells)
        };
        assert_eq!(shortest(&open), Some(2 * (LARGE - 1)));
        // Down to row 99, across to column 190, through the gap, back to column 0, down to 199.
        assert_eq!(shortest(&detour_maze()), Some(99 + 190 + 2 + 190 + 98));
        assert_eq!(shortest(&walled_off_maze(0x006d_617a_6503)), None);
        let random = reachable_maze(0x006d_617a_6502, 35, (17, 190), (185, 9));
        assert_eq!(random.len(), LARGE);
        assert!(shortest(&random).is_some_and(|steps| steps >= 168 + 181));
    }
}
