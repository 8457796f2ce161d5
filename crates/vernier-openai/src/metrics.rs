//! A Prometheus text-format parser for `/metrics`.

use crate::ClientError;

/// One sample: a metric name, its labels and its value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sample {
    /// Metric name (with any `_total`, `_bucket`, ... suffix).
    pub name: String,
    /// Label pairs in the order written.
    pub labels: Vec<(String, String)>,
    /// The value (NaN and ±Inf allowed).
    pub value: f64,
}

impl Sample {
    /// The value of label `name`, if present.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// All samples of one `/metrics` scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    samples: Vec<Sample>,
}

impl MetricsSnapshot {
    /// Parses Prometheus text exposition format: `# HELP`/`# TYPE` and other comments are
    /// skipped, label values may hold escaped `\\`, `\"` and `\n`, an optional timestamp after
    /// the value is ignored.
    pub fn parse(text: &str) -> Result<Self, ClientError> {
        let mut samples = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fail = |reason: &str| ClientError::Metrics {
                line: index + 1,
                reason: format!("{reason} in {line:?}"),
            };
            let name_end = line
                .find(|c: char| c == '{' || c.is_whitespace())
                .ok_or_else(|| fail("no value"))?;
            let name = &line[..name_end];
            if name.is_empty() {
                return Err(fail("no metric name"));
            }
            let mut rest = &line[name_end..];
            let mut labels = Vec::new();
            if let Some(after_brace) = rest.strip_prefix('{') {
                rest = parse_labels(after_brace, &mut labels).map_err(&fail)?;
            }
            let value_text = rest
                .split_whitespace()
                .next()
                .ok_or_else(|| fail("no value"))?;
            let value = parse_value(value_text).ok_or_else(|| fail("the value is not a number"))?;
            samples.push(Sample {
                name: name.to_owned(),
                labels,
                value,
            });
        }
        Ok(Self { samples })
    }

    /// Every sample in scrape order.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// The sum of `name` over all its label sets; `None` when absent.
    pub fn sum(&self, name: &str) -> Option<f64> {
        self.samples
            .iter()
            .filter(|sample| sample.name == name)
            .map(|sample| sample.value)
            .reduce(|a, b| a + b)
    }

    /// The first sample named `name` whose labels include every pair in `labels`.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.samples
            .iter()
            .find(|sample| {
                sample.name == name
                    && labels
                        .iter()
                        .all(|(key, value)| sample.label(key) == Some(value))
            })
            .map(|sample| sample.value)
    }
}

fn parse_value(text: &str) -> Option<f64> {
    match text {
        "NaN" | "nan" => Some(f64::NAN),
        "+Inf" | "Inf" | "inf" | "+inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

/// Parses `key="value",...}` and returns what follows the closing brace.
fn parse_labels<'a>(
    mut text: &'a str,
    labels: &mut Vec<(String, String)>,
) -> Result<&'a str, &'static str> {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix('}') {
            return Ok(rest);
        }
        let equals = text.find('=').ok_or("a label has no '='")?;
        let key = text[..equals].trim().to_owned();
        text = text[equals + 1..]
            .trim_start()
            .strip_prefix('"')
            .ok_or("a label value is not quoted")?;
        let mut value = String::new();
        let mut chars = text.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("a label value is not closed"),
                Some((at, '"')) => break at,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => return Err("a label value ends in a backslash"),
                },
                Some((_, other)) => value.push(other),
            }
        };
        labels.push((key, value));
        text = text[end + 1..].trim_start();
        text = text.strip_prefix(',').unwrap_or(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_labels_special_values_and_comments() {
        let text = "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n\
            vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 2.0\n\
            vllm:num_requests_running{model_name=\"m\",engine=\"1\"} 3\n\
            weird{path=\"a\\\"b\\\\c\\nd\",} NaN 1700000000\n\
            le_bucket{le=\"+Inf\"} +Inf\n\
            plain_total 1.5e3\n";
        let snapshot = MetricsSnapshot::parse(text).expect("parses");
        assert_eq!(snapshot.samples().len(), 5);
        assert_eq!(snapshot.sum("vllm:num_requests_running"), Some(5.0));
        assert_eq!(
            snapshot.get("vllm:num_requests_running", &[("engine", "1")]),
            Some(3.0)
        );
        assert_eq!(snapshot.samples()[2].label("path"), Some("a\"b\\c\nd"));
        assert!(snapshot.samples()[2].value.is_nan());
        assert_eq!(snapshot.sum("le_bucket"), Some(f64::INFINITY));
        assert_eq!(snapshot.sum("plain_total"), Some(1500.0));
        assert_eq!(snapshot.sum("absent"), None);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let error = MetricsSnapshot::parse("ok 1\nbroken{a=\"x} 1\n").expect_err("unclosed");
        assert!(
            matches!(error, ClientError::Metrics { line: 2, .. }),
            "{error}"
        );
    }
}
