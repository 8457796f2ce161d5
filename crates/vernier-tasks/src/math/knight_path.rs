//! The knight-path problem: fewest knight moves on a board with occupied squares, by
//! breadth-first search.

use std::collections::VecDeque;

use serde::Serialize;

use super::wording::{INTEGER_INSTRUCTION, join_words};

/// Fewest knight moves between two squares of an n×n board with some squares occupied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnightPath {
    /// Board side (at most 26).
    pub board: u8,
    /// Start square in algebraic notation, e.g. `a1`.
    pub from: String,
    /// Target square, e.g. `h8`.
    pub to: String,
    /// Occupied squares that may not be landed on.
    pub blocked: Vec<String>,
}

impl KnightPath {
    pub(super) fn prompt(&self) -> String {
        format!(
            "On a {n}×{n} chessboard, what is the fewest number of knight moves needed to go \
             from {} to {} when the squares {} are occupied and may not be landed on (the knight \
             jumps over pieces as usual)? {INTEGER_INSTRUCTION}",
            self.from,
            self.to,
            join_words(&self.blocked),
            n = self.board
        )
    }

    /// Breadth-first search; -1 when the target cannot be reached or a square is invalid.
    pub(super) fn solve(&self) -> i128 {
        let n = i32::from(self.board);
        let (Some(from), Some(to)) = (square(&self.from, n), square(&self.to, n)) else {
            return -1;
        };
        let side = usize::from(self.board);
        let index = |(file, rank): (i32, i32)| {
            usize::try_from(rank).unwrap_or(0) * side + usize::try_from(file).unwrap_or(0)
        };
        let mut blocked = vec![false; side * side];
        for name in &self.blocked {
            match square(name, n) {
                Some(cell) => blocked[index(cell)] = true,
                None => return -1,
            }
        }
        let mut distance = vec![-1_i128; side * side];
        distance[index(from)] = 0;
        let mut queue = VecDeque::from([from]);
        while let Some((file, rank)) = queue.pop_front() {
            let here = distance[index((file, rank))];
            if (file, rank) == to {
                return here;
            }
            for (df, dr) in [
                (1, 2),
                (2, 1),
                (2, -1),
                (1, -2),
                (-1, -2),
                (-2, -1),
                (-2, 1),
                (-1, 2),
            ] {
                let next = (file + df, rank + dr);
                if (0..n).contains(&next.0)
                    && (0..n).contains(&next.1)
                    && !blocked[index(next)]
                    && distance[index(next)] < 0
                {
                    distance[index(next)] = here + 1;
                    queue.push_back(next);
                }
            }
        }
        -1
    }
}

/// Parses `a1`-style notation into zero-based (file, rank).
pub(super) fn square(name: &str, side: i32) -> Option<(i32, i32)> {
    let mut chars = name.chars();
    let file = chars.next()?;
    if !file.is_ascii_lowercase() {
        return None;
    }
    let file = i32::from(u8::try_from(file).ok()? - b'a');
    let rank: i32 = chars.as_str().parse().ok()?;
    ((0..side).contains(&file) && (1..=side).contains(&rank)).then_some((file, rank - 1))
}
