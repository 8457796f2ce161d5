//! The headline figures of a run, as a study's part reports them (`vernier_run::Headline`):
//! what a battery shows beside the part's verdict and compares in a head-to-head.

use vernier_run::Headline;

use crate::run_file::{CellSummary, RunFile};

/// A sweep's headline figures: the median decode rate per stream at each load, the TTFT of
/// the shortest prompt at the lowest load, the capacity where searched.
pub fn sweep_headlines(run: &RunFile) -> Vec<Headline> {
    let mut headlines = Vec::new();
    let mut loads: Vec<u32> = run.cells.iter().map(|cell| cell.concurrency).collect();
    loads.sort_unstable();
    loads.dedup();
    for load in &loads {
        let cells: Vec<&CellSummary> = run
            .cells
            .iter()
            .filter(|cell| cell.concurrency == *load)
            .collect();
        let decode: Vec<f64> = cells
            .iter()
            .filter_map(|cell| cell.median.decode_tokens_per_s)
            .collect();
        if let Ok(median) = vernier_stats::median(&decode) {
            let mut headline = Headline::new(
                format!("decode per stream at {load} in flight (median over cells)"),
                median,
                "tokens/s",
            );
            if let [cell] = cells.as_slice()
                && let Some(interval) = &cell.median_interval_95.decode_tokens_per_s
            {
                headline = headline.interval(interval.low, interval.high);
            }
            headlines.push(headline);
        }
    }
    if let Some(cell) = run
        .cells
        .iter()
        .filter(|cell| Some(&cell.concurrency) == loads.first())
        .min_by_key(|cell| cell.prompt_tokens_target)
        && let Some(ttft) = cell.median.ttft_ms
    {
        let mut headline = Headline::new(
            format!("TTFT at {} prompt tokens", cell.prompt_tokens_target),
            ttft,
            "ms",
        )
        .lower_is_better();
        if let Some(interval) = &cell.median_interval_95.ttft_ms {
            headline = headline.interval(interval.low, interval.high);
        }
        headlines.push(headline);
    }
    if let Some(capacity) = run.capacity.as_ref().and_then(|c| c.capacity) {
        headlines.push(Headline::new(
            format!(
                "capacity meeting {}",
                run.capacity.as_ref().map_or("", |c| c.target.as_str())
            ),
            capacity,
            run.capacity
                .as_ref()
                .map_or("", |c| c.load_kind.as_str())
                .to_owned(),
        ));
    }
    headlines
}
