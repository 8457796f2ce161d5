//! `count-islands`: 4-connected components of land, without recursion trouble.

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r"Write a Python function

    def count_islands(grid: list[list[int]]) -> int:

The grid is a rectangle of cells, each 1 (land) or 0 (water); it may be empty ([] or
[[]]). An island is a maximal group of land cells connected horizontally or vertically
(not diagonally). Return the number of islands. Cells outside the grid are water.

The tests include 300x300 grids: one all land, one a single serpentine path that
winds through every row. Your solution must handle them within the time limit and
without exceeding Python's default recursion limit (the tests do not raise it). You
may modify the grid.";

/// Side of the large grids.
const LARGE: usize = 300;

/// The Rust reference: an explicit-stack flood fill.
pub(super) fn count(grid: &[Vec<u8>]) -> usize {
    let mut seen: Vec<Vec<bool>> = grid.iter().map(|row| vec![false; row.len()]).collect();
    let mut islands = 0;
    let mut stack = Vec::new();
    for top in 0..grid.len() {
        for left in 0..grid[top].len() {
            if grid[top][left] != 1 || seen[top][left] {
                continue;
            }
            islands += 1;
            seen[top][left] = true;
            stack.push((top, left));
            while let Some((row, column)) = stack.pop() {
                let neighbours = [
                    (row.wrapping_sub(1), column),
                    (row + 1, column),
                    (row, column.wrapping_sub(1)),
                    (row, column + 1),
                ];
                for (next_row, next_column) in neighbours {
                    let land =
                        grid.get(next_row).and_then(|cells| cells.get(next_column)) == Some(&1);
                    if land && !seen[next_row][next_column] {
                        seen[next_row][next_column] = true;
                        stack.push((next_row, next_column));
                    }
                }
            }
        }
    }
    islands
}

/// Even rows are all land; odd rows are water except one cell that links the rows
/// above and below, alternately at the right and the left end: one island, a path
/// of about n²/2 cells.
pub(super) fn serpentine(side: usize) -> Vec<Vec<u8>> {
    (0..side)
        .map(|row| {
            if row % 2 == 0 {
                vec![1; side]
            } else {
                let mut cells = vec![0; side];
                let link = if row % 4 == 1 { side - 1 } else { 0 };
                cells[link] = 1;
                cells
            }
        })
        .collect()
}

fn random_grid(seed: u64, side: usize, land_percent: u64) -> Vec<Vec<u8>> {
    let mut generator = SplitMix64::new(seed);
    (0..side)
        .map(|_| {
            (0..side)
                .map(|_| u8::from(generator.chance(land_percent, 100)))
                .collect()
        })
        .collect()
}

fn checkerboard(side: usize) -> Vec<Vec<u8>> {
    (0..side)
        .map(|row| {
            (0..side)
                .map(|column| u8::from((row + column) % 2 == 0))
                .collect()
        })
        .collect()
}

fn case(name: &str, grid: &[Vec<u8>]) -> vernier_grader::Case {
    Case::new(name, json!(grid), Value::from(count(grid)))
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let large = draw.adversarial_size(LARGE);
    // Grids grow by the adversarial scale only (a 900×900 grid is megabytes of JSON); the
    // extra random grids keep the bundled side.
    let random = large;
    let mut cases = vec![
        case("empty", &[]),
        case("empty_row", &[vec![]]),
        case("single_water", &[vec![0]]),
        case("single_land", &[vec![1]]),
        case("diagonal_not_connected", &[vec![1, 0], vec![0, 1]]),
        case(
            "ring_with_lake",
            &[vec![1, 1, 1], vec![1, 0, 1], vec![1, 1, 1]],
        ),
        case(
            "classic",
            &[
                vec![1, 1, 0, 0, 0],
                vec![1, 1, 0, 0, 0],
                vec![0, 0, 1, 0, 0],
                vec![0, 0, 0, 1, 1],
            ],
        ),
        case("one_row", &[vec![1, 0, 1, 1, 0, 1]]),
        case("one_column", &[vec![1], vec![1], vec![0], vec![1]]),
        case("checkerboard_60", &checkerboard(60)),
        case(&format!("all_land_{large}"), &vec![vec![1; large]; large]),
        case(&format!("serpentine_{large}"), &serpentine(large)),
        case(
            &format!("random_{random}"),
            &random_grid(draw.seed(0x6973_6c01), random, 55),
        ),
    ];
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_{LARGE}_extra_{index}"),
            &random_grid(draw.extra_seed(0x6973_6c01, index), LARGE, 55),
        ));
    }
    single_control_spec!(
        id: "count-islands",
        folder: "count_islands",
        control: "recursive-dfs" => "control_recursive_dfs.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_grids_by_hand() {
        assert_eq!(count(&[]), 0);
        assert_eq!(count(&[vec![]]), 0);
        assert_eq!(count(&[vec![1, 0], vec![0, 1]]), 2);
        assert_eq!(count(&[vec![1, 1, 1], vec![1, 0, 1], vec![1, 1, 1]]), 1);
        let classic = [
            vec![1, 1, 0, 0, 0],
            vec![1, 1, 0, 0, 0],
            vec![0, 0, 1, 0, 0],
            vec![0, 0, 0, 1, 1],
        ];
        assert_eq!(count(&classic), 3);
        assert_eq!(count(&checkerboard(60)), 1_800);
    }

    #[test]
    fn large_grids_are_single_long_islands() {
        assert_eq!(count(&vec![vec![1; LARGE]; LARGE]), 1);
        let snake = serpentine(LARGE);
        assert_eq!(count(&snake), 1);
        let land: usize = snake.iter().flatten().map(|&cell| usize::from(cell)).sum();
        assert_eq!(land, 150 * LARGE + 150);
    }
}
