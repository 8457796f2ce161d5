//! Shared setup: a grader per test, labelled with a unique run ID.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bollard::Docker;
use bollard::query_parameters::{ListContainersOptionsBuilder, ListVolumesOptionsBuilder};
use vernier_grader::{Case, Grade, GradeReason, Grader, GraderConfig, Limits, Submission};

/// The label carrying each test's run ID.
pub(crate) const RUN_LABEL: &str = "org.vernier.test-run";

/// Binds a [`connect`]ed grader for `$test`, or returns from the test when it is skipped.
macro_rules! connect_or_skip {
    ($test:expr) => {
        match $crate::support::connect($test).await {
            Some(harness) => harness,
            None => return,
        }
    };
}
pub(crate) use connect_or_skip;

/// A grader for one test, with its run ID.
#[derive(Debug)]
pub(crate) struct Harness {
    pub(crate) grader: Grader,
    pub(crate) run_id: String,
    pub(crate) docker: Docker,
}

/// Connects a labelled grader, or returns `None` when the tests are skipped on purpose.
/// Panics with the fix when no engine or image is there.
pub(crate) async fn connect(test: &str) -> Option<Harness> {
    if std::env::var("VERNIER_SKIP_DOCKER_TESTS").as_deref() == Ok("1") {
        #[expect(clippy::print_stderr, reason = "a skipped test says so")]
        {
            eprintln!("skipping {test}: VERNIER_SKIP_DOCKER_TESTS=1");
        }
        return None;
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let run_id = format!("{test}-{}-{nanos}", std::process::id());
    let config = GraderConfig::default()
        .with_label(RUN_LABEL, run_id.clone())
        .with_max_in_flight(4);
    let grader = Grader::connect(config).await.unwrap_or_else(|error| {
        panic!(
            "the grader tests need a Docker engine and the grader image: {error:?}\n\
             fix: run docker/setup-engine.sh && docker/build-grader-image.sh \
             (or set VERNIER_SKIP_DOCKER_TESTS=1 to skip these tests on purpose)"
        )
    });
    let docker = Docker::connect_with_local_defaults()
        .expect("docker client")
        .negotiate_version()
        .await
        .expect("docker version");
    Some(Harness {
        grader,
        run_id,
        docker,
    })
}

impl Harness {
    /// Containers and volumes that carry this test's run ID.
    pub(crate) async fn labelled(&self) -> (usize, usize) {
        let label = format!("{RUN_LABEL}={}", self.run_id);
        let filters: HashMap<&str, Vec<&str>> = HashMap::from([("label", vec![label.as_str()])]);
        let containers = self
            .docker
            .list_containers(Some(
                ListContainersOptionsBuilder::new()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .expect("list containers");
        let volumes = self
            .docker
            .list_volumes(Some(
                ListVolumesOptionsBuilder::new().filters(&filters).build(),
            ))
            .await
            .expect("list volumes")
            .volumes
            .unwrap_or_default();
        (containers.len(), volumes.len())
    }

    /// Asserts that nothing with this test's label remains.
    pub(crate) async fn assert_nothing_left(&self) {
        assert_eq!(
            self.labelled().await,
            (0, 0),
            "containers and volumes left by run {}",
            self.run_id
        );
    }

    /// Grades `code` on `cases` through the [`CALL_F`] harness, with the default limits.
    pub(crate) async fn grade_f(&self, code: impl Into<String>, cases: Vec<Case>) -> Grade {
        self.grade_f_within(code, cases, Limits::default()).await
    }

    /// Grades `code` on `cases` through the [`CALL_F`] harness, within `limits`.
    pub(crate) async fn grade_f_within(
        &self,
        code: impl Into<String>,
        cases: Vec<Case>,
        limits: Limits,
    ) -> Grade {
        self.grader
            .grade(&Submission::new(code, CALL_F, cases).with_limits(limits))
            .await
    }

    /// Waits (up to `limit`) for background removal, then asserts nothing remains.
    pub(crate) async fn assert_nothing_left_within(&self, limit: Duration) {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.labelled().await == (0, 0) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        self.assert_nothing_left().await;
    }
}

/// The harness most tests use: call `solution.f(case_input)`.
pub(crate) const CALL_F: &str =
    "def run_case(solution, case_input):\n    return solution.f(case_input)\n";

/// Asserts `grade` failed exactly the cases `names`, in order.
#[track_caller]
pub(crate) fn assert_failed(grade: &Grade, names: &[&str]) {
    let names = names.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(grade.reason, GradeReason::FailedCases(names), "{grade:#?}");
}

/// Asserts `grade` ended for `reason`.
#[track_caller]
pub(crate) fn assert_reason(grade: &Grade, reason: &GradeReason) {
    assert_eq!(&grade.reason, reason, "{grade:#?}");
}

/// Asserts the detail of case `index` contains `needle`.
#[track_caller]
pub(crate) fn assert_detail_contains(grade: &Grade, index: usize, needle: &str) {
    let detail = &grade.cases[index].detail;
    assert!(detail.contains(needle), "{detail}");
}
