//! The one palette: Tableau 10, ten colours that stay apart for the common kinds of colour
//! blindness, and the fixed colours of marks and flags.

/// Series colours, in the order series are given.
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// The colour of the series at `index` (the palette again from the start after ten).
pub fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// A target level and a flagged point (the palette's red).
pub(crate) const LEVEL: &str = "#d62728";
/// A marked x value: a load, a crossover (the palette's green).
pub(crate) const AT: &str = "#2ca02c";
/// The Pareto front and reference lines.
pub(crate) const FRONT: &str = "#222222";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_colours_cycle_through_tableau_10() {
        assert_eq!(colour(0), "#1f77b4");
        assert_eq!(colour(9), "#17becf");
        assert_eq!(colour(10), colour(0));
    }
}
