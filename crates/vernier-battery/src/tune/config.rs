//! A tune's configurations (named launch commands, or a grid of flags expanded to their
//! product) and its target: the sweep's grammar for speed, `pass_rate>=` for quality.

use serde::{Deserialize, Serialize};

/// One launch configuration: its name (a folder name too) and the command that starts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TuneConfig {
    /// Its name: letters, digits and `._=,+-`.
    pub name: String,
    /// The shell command that starts the server.
    pub command: String,
}

impl TuneConfig {
    /// `NAME='COMMAND'` as typed after `--config`, checked.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, command) = text.split_once('=').ok_or_else(|| {
            format!("--config {text:?}: write NAME='COMMAND', e.g. --config 'seqs4=vllm serve m --max-num-seqs 4'")
        })?;
        Self::new(name.trim(), command.trim())
    }

    /// A configuration named `name` started by `command`, checked.
    pub fn new(name: &str, command: &str) -> Result<Self, String> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._=,+-".contains(c))
            || name.starts_with('.')
        {
            return Err(format!(
                "configuration name {name:?}: use letters, digits and ._=,+- (it names the configuration's folders)"
            ));
        }
        if command.is_empty() {
            return Err(format!("configuration {name}: its launch command is empty"));
        }
        Ok(Self {
            name: name.to_owned(),
            command: command.to_owned(),
        })
    }
}

/// Refuses two configurations of one name or one command.
pub fn check_distinct(configs: &[TuneConfig]) -> Result<(), String> {
    if configs.len() < 2 {
        return Err(format!(
            "a tune compares at least two configurations ({} given): add --config NAME='COMMAND' or a --grid flag with several values",
            configs.len()
        ));
    }
    for (index, config) in configs.iter().enumerate() {
        for other in &configs[..index] {
            if other.name == config.name {
                return Err(format!(
                    "two configurations are named {}: name each once",
                    config.name
                ));
            }
            if other.command == config.command {
                return Err(format!(
                    "configurations {} and {} launch the same command: each must differ",
                    other.name, config.name
                ));
            }
        }
    }
    Ok(())
}

/// The grid's configurations: `base` with every combination of the flags' values (the first
/// flag varying slowest), each named by its values (`max-num-seqs=4,threads=2`). Refused when
/// the product exceeds `cap`, naming its size.
pub fn expand_grid(base: &str, flags: &[String], cap: usize) -> Result<Vec<TuneConfig>, String> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for flag in flags {
        let (name, values) = flag.split_once('=').ok_or_else(|| {
            format!("--grid {flag:?}: write FLAG=V1,V2, e.g. --grid '--max-num-seqs=1,4,16'")
        })?;
        let name = name.trim();
        if !name.starts_with('-') {
            return Err(format!(
                "--grid {flag:?}: the flag must start with - (as the server's command line spells it)"
            ));
        }
        let values: Vec<String> = values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect();
        if values.is_empty() {
            return Err(format!("--grid {flag:?}: give at least one value"));
        }
        axes.push((name.to_owned(), values));
    }
    if axes.is_empty() {
        return Err("--grid-base needs at least one --grid FLAG=V1,V2".to_owned());
    }
    let size: usize = axes.iter().map(|(_, values)| values.len()).product();
    if size > cap {
        return Err(format!(
            "the grid holds {size} configurations, over the cap of {cap}: drop values, or raise --max-configs (each configuration runs the whole study every round)"
        ));
    }
    let mut configs = vec![(base.trim().to_owned(), Vec::<String>::new())];
    for (flag, values) in &axes {
        let mut next = Vec::new();
        for (command, names) in &configs {
            for value in values {
                let mut names = names.clone();
                names.push(format!("{}={value}", flag.trim_start_matches('-')));
                next.push((format!("{command} {flag} {value}"), names));
            }
        }
        configs = next;
    }
    configs
        .into_iter()
        .map(|(command, names)| TuneConfig::new(&names.join(","), &command))
        .collect()
}

/// The order the configurations run in round `round` (1-based): as given in odd rounds,
/// reversed in even ones (A B C, then C B A), so drift falls on every configuration alike.
pub fn round_order(configs: &[TuneConfig], round: u32) -> Vec<String> {
    let mut names: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
    if round.is_multiple_of(2) {
        names.reverse();
    }
    names
}

/// What the winner must meet: the sweep's per-request target and a least pass rate over the
/// study's suites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TuneTarget {
    /// As typed.
    pub text: String,
    /// The speed parts, in the sweep's grammar (`ttft_p90<=500ms,itl_p99<=50ms`).
    pub speed: Option<String>,
    /// The least pass rate (0 to 1) over every suite part's scored samples.
    pub pass_rate_at_least: Option<f64>,
}

impl TuneTarget {
    /// Parses `ttft_p90<=500ms,itl_p99<=50ms,pass_rate>=0.6` (a pass rate as a share or a
    /// percentage, `pass_rate>=60%`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut speed = Vec::new();
        let mut pass_rate = None;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(bound) = part.strip_prefix("pass_rate") {
                let bound = bound.trim().strip_prefix(">=").ok_or_else(|| {
                    format!("{part:?}: a pass rate is bounded below, e.g. pass_rate>=0.6")
                })?;
                let bound = bound.trim();
                let value = match bound.strip_suffix('%') {
                    Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
                    None => bound.parse::<f64>(),
                }
                .ok()
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| {
                    format!(
                        "{part:?}: give a share from 0 to 1 or a percentage, e.g. pass_rate>=0.6"
                    )
                })?;
                pass_rate = Some(value);
            } else {
                speed.push(part);
            }
        }
        let speed = (!speed.is_empty()).then(|| speed.join(","));
        if let Some(speed) = &speed {
            vernier_sweep::Target::parse(speed)
                .map_err(|message| format!("--target: {message}"))?;
        }
        if speed.is_none() && pass_rate.is_none() {
            return Err("--target is empty: e.g. --target 'ttft_p90<=500ms'".to_owned());
        }
        Ok(Self {
            text: text.to_owned(),
            speed,
            pass_rate_at_least: pass_rate,
        })
    }
}

/// What ranks the configurations that meet the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RankBy {
    /// Output tokens per second at the largest load that meets the target (without a speed
    /// target, at the load with the most).
    #[default]
    Goodput,
    /// The largest load that meets the target; goodput breaks ties.
    Capacity,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_expands_to_its_product_named_by_its_values() {
        let configs = expand_grid(
            "serve --port 8000",
            &["--max-num-seqs=1,4".to_owned(), "--threads=2,8".to_owned()],
            8,
        )
        .expect("grid");
        let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "max-num-seqs=1,threads=2",
                "max-num-seqs=1,threads=8",
                "max-num-seqs=4,threads=2",
                "max-num-seqs=4,threads=8"
            ]
        );
        assert_eq!(
            configs[2].command,
            "serve --port 8000 --max-num-seqs 4 --threads 2"
        );
        let quantised = expand_grid("s", &["--cache-type-k=f16,q8_0".to_owned()], 5)
            .expect("an underscore in a value");
        assert_eq!(quantised[1].name, "cache-type-k=q8_0");
        let over = expand_grid("s", &["--a=1,2,3".to_owned(), "--b=1,2".to_owned()], 5)
            .expect_err("6 over a cap of 5");
        assert!(over.contains("6 configurations"), "{over}");
        assert!(expand_grid("s", &["a=1".to_owned()], 5).is_err());
    }

    #[test]
    fn rounds_alternate_their_order() {
        let configs: Vec<TuneConfig> = ["a", "b", "c"]
            .iter()
            .map(|n| TuneConfig::new(n, &format!("run {n}")).expect("config"))
            .collect();
        assert_eq!(round_order(&configs, 1), ["a", "b", "c"]);
        assert_eq!(round_order(&configs, 2), ["c", "b", "a"]);
        assert_eq!(round_order(&configs, 3), ["a", "b", "c"]);
    }

    #[test]
    fn configurations_and_targets_refuse_what_cannot_be_meant() {
        assert!(TuneConfig::parse("no command").is_err());
        assert!(TuneConfig::parse("a/b=serve").is_err());
        assert!(TuneConfig::parse("=serve").is_err());
        let a = TuneConfig::parse("a=serve -np 1").expect("config");
        assert_eq!(a.command, "serve -np 1");
        let same = TuneConfig::parse("b=serve -np 1").expect("config");
        assert!(check_distinct(&[a.clone(), same]).is_err());
        assert!(check_distinct(std::slice::from_ref(&a)).is_err());
        let target = TuneTarget::parse("ttft_p90<=500ms, pass_rate>=60%").expect("target");
        assert_eq!(target.speed.as_deref(), Some("ttft_p90<=500ms"));
        assert_eq!(target.pass_rate_at_least, Some(0.6));
        assert!(TuneTarget::parse("pass_rate<=0.5").is_err());
        assert!(TuneTarget::parse("pass_rate>=1.5").is_err());
        assert!(TuneTarget::parse("speed>=3").is_err());
    }
}
