use super::knight_path::square;
use super::wording::grouped;
use super::*;

#[test]
fn small_cases_by_hand() {
    assert_eq!(
        DominoTiling {
            width: 2,
            length: 3
        }
        .solve(),
        3
    );
    assert_eq!(
        DominoTiling {
            width: 3,
            length: 2
        }
        .solve(),
        3
    );
    assert_eq!(
        BracketDepth {
            pairs: 3,
            max_depth: 1
        }
        .solve(),
        1
    );
    assert_eq!(SubsetSum { n: 3, target: 3 }.solve(), 2);
    assert_eq!(FixedPoints { n: 3, k: 1 }.solve(), 3);
}

#[test]
fn squares_parse() {
    assert_eq!(square("a1", 8), Some((0, 0)));
    assert_eq!(square("h8", 8), Some((7, 7)));
    assert_eq!(square("i1", 8), None);
    assert_eq!(square("a9", 8), None);
}

#[test]
fn unsolvable_round_table_is_invalid() {
    let problem = Problem::RoundTable(RoundTable {
        people: vec!['A', 'B', 'C', 'D'],
        adjacent: vec![('A', 'B')],
        not_adjacent: vec![('A', 'B')],
        opposite: vec![],
    });
    assert!(problem.validate().is_err());
}

#[test]
fn grouping() {
    assert_eq!(grouped(1_000_000), "1,000,000");
    assert_eq!(grouped(999), "999");
}
