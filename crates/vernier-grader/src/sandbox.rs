//! The grader: one hardened throwaway container per submission, through the Docker Engine API.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{
    ContainerCreateBody, HostConfig, HostConfigLogConfig, Mount, MountType, ResourcesUlimits,
    VolumeCreateRequest,
};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, ListContainersOptionsBuilder,
    ListVolumesOptionsBuilder, RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use crate::config::{GraderConfig, Limits, Submission};
use crate::error::GraderError;
use crate::grade::{Grade, GradeReason};
use crate::guard::violated_guard;
use crate::protocol::{OutputCapture, WORK_DIR, random_hex, work_archive};
use crate::verdict::{RunObservation, judge};

/// Label on every container and volume the grader creates.
pub const GRADER_LABEL: &str = "org.vernier.grader";
/// Label holding the Unix time after which a container or volume is certainly a leftover.
const DEADLINE_LABEL: &str = "org.vernier.grader.deadline";
/// Time allowed past the wall-clock limit for creating, uploading, inspecting and removing.
const DEADLINE_GRACE: Duration = Duration::from_secs(300);
/// Size of the writable /tmp.
const TMPFS_OPTIONS: &str = "rw,noexec,nosuid,nodev,size=16m,mode=1777";
/// The sandbox user and group (nobody).
const SANDBOX_USER: &str = "65534:65534";

/// Grades submissions in throwaway containers. Cheap to clone; clones share the engine
/// connection and the bound on containers in flight.
#[derive(Clone)]
pub struct Grader {
    inner: Arc<Inner>,
}

struct Inner {
    docker: Docker,
    host: String,
    image_id: String,
    config: GraderConfig,
    permits: Semaphore,
}

impl fmt::Debug for Grader {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Grader")
            .field("host", &self.inner.host)
            .field("image", &self.inner.config.image)
            .field("image_digest", &self.inner.image_id)
            .field("max_in_flight", &self.inner.config.max_in_flight)
            .finish_non_exhaustive()
    }
}

impl Grader {
    /// Connects to the engine, checks the image and records its ID, and removes leftovers
    /// of earlier runs (see [`Grader::remove_leftovers`]).
    pub async fn connect(config: GraderConfig) -> Result<Grader, GraderError> {
        let host = config.docker_host.clone().or_else(|| {
            std::env::var("DOCKER_HOST")
                .ok()
                .filter(|host| !host.is_empty())
        });
        let connected = match &host {
            Some(host) => Docker::connect_with_host(host),
            None => Docker::connect_with_local_defaults(),
        };
        let host = host.unwrap_or_else(|| "the local socket".to_owned());
        let docker = connected.map_err(|source| GraderError::Connect {
            host: host.clone(),
            source,
        })?;
        // Older engines (20.10 speaks API 1.41) refuse a newer client version.
        let docker = docker
            .negotiate_version()
            .await
            .map_err(|source| GraderError::Ping {
                host: host.clone(),
                source,
            })?;
        docker.ping().await.map_err(|source| GraderError::Ping {
            host: host.clone(),
            source,
        })?;
        let image = docker
            .inspect_image(&config.image)
            .await
            .map_err(|source| GraderError::InspectImage {
                image: config.image.clone(),
                source,
            })?;
        let image_id = image.id.unwrap_or_else(|| config.image.clone());
        let permits = Semaphore::new(config.max_in_flight.max(1));
        let grader = Grader {
            inner: Arc::new(Inner {
                docker,
                host,
                image_id,
                config,
                permits,
            }),
        };
        grader.remove_leftovers().await?;
        Ok(grader)
    }

    /// The ID (`sha256:...`) of the image every submission runs in.
    pub fn image_digest(&self) -> &str {
        &self.inner.image_id
    }

    /// Grades one submission. Never panics and never fails: engine trouble gives
    /// [`GradeReason::Infra`]. Waits while `max_in_flight` containers run.
    ///
    /// Dropping the returned future removes the container and volume in the background.
    pub async fn grade(&self, submission: &Submission) -> Grade {
        let names = || submission.cases.iter().map(|case| case.name.clone());
        let digest = self.image_digest();
        if submission.code.trim().is_empty() {
            return Grade::without_run(GradeReason::NoCode, names(), "not run: no code", digest);
        }
        if let Some(name) = violated_guard(&submission.code, &submission.guards) {
            let detail = format!("not run: the code uses {name}");
            return Grade::without_run(GradeReason::GuardViolation(name), names(), &detail, digest);
        }
        let Ok(_permit) = self.inner.permits.acquire().await else {
            return Grade::without_run(
                GradeReason::Infra("the grader was closed".to_owned()),
                names(),
                "not run",
                digest,
            );
        };
        match self.run(submission).await {
            Ok(observation) => judge(submission, observation, digest),
            Err(error) => Grade::without_run(
                GradeReason::Infra(error.chain()),
                names(),
                "not run: the sandbox failed",
                digest,
            ),
        }
    }

    /// Removes containers and volumes labelled by any grader whose deadline (wall-clock
    /// limit plus five minutes) has passed: those left by a killed process. Live work of
    /// other graders, even in other processes, is left alone. Returns how many were removed.
    pub async fn remove_leftovers(&self) -> Result<usize, GraderError> {
        let docker = &self.inner.docker;
        let now = unix_seconds(SystemTime::now());
        let filters: HashMap<&str, Vec<&str>> = HashMap::from([("label", vec![GRADER_LABEL])]);
        let containers = docker
            .list_containers(Some(
                ListContainersOptionsBuilder::new()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(|source| GraderError::List { source })?;
        let mut removed = 0;
        for container in containers {
            let (Some(id), Some(labels)) = (container.id, container.labels) else {
                continue;
            };
            if !expired(&labels, now) {
                continue;
            }
            match remove_container(docker, &id).await {
                Ok(true) => removed += 1,
                Ok(false) => {}
                Err(source) => {
                    return Err(GraderError::Remove {
                        what: format!("container {id}"),
                        source,
                    });
                }
            }
        }
        let volumes = docker
            .list_volumes(Some(
                ListVolumesOptionsBuilder::new().filters(&filters).build(),
            ))
            .await
            .map_err(|source| GraderError::List { source })?;
        for volume in volumes.volumes.unwrap_or_default() {
            if !expired(&volume.labels, now) {
                continue;
            }
            match remove_volume(docker, &volume.name).await {
                Ok(true) => removed += 1,
                Ok(false) => {}
                Err(source) => {
                    return Err(GraderError::Remove {
                        what: format!("volume {}", volume.name),
                        source,
                    });
                }
            }
        }
        Ok(removed)
    }

    async fn run(&self, submission: &Submission) -> Result<RunObservation, GraderError> {
        let random_error = |error: getrandom::Error| GraderError::Random {
            reason: error.to_string(),
        };
        let docker = &self.inner.docker;
        let limits = submission.limits;
        let name = format!("vernier-grader-{}", random_hex(8).map_err(random_error)?);
        let nonce = random_hex(16).map_err(random_error)?;
        let labels = self.labels(limits.wall_time);

        // Armed before anything exists: removing what was never created is harmless.
        let mut cleanup = Cleanup {
            docker: docker.clone(),
            name: name.clone(),
            armed: true,
        };

        docker
            .create_volume(VolumeCreateRequest {
                name: Some(name.clone()),
                labels: Some(labels.clone()),
                ..Default::default()
            })
            .await
            .map_err(|source| GraderError::CreateVolume {
                volume: name.clone(),
                source,
            })?;
        let body = container_body(&self.inner.image_id, &name, labels, &limits);
        docker
            .create_container(
                Some(CreateContainerOptionsBuilder::new().name(&name).build()),
                body,
            )
            .await
            .map_err(|source| GraderError::CreateContainer {
                image: self.inner.image_id.clone(),
                source,
            })?;

        let archive = work_archive(submission).map_err(|error| GraderError::Upload {
            container: name.clone(),
            source: Box::new(error),
        })?;
        docker
            .upload_to_container(
                &name,
                Some(
                    UploadToContainerOptionsBuilder::new()
                        .path(WORK_DIR)
                        .build(),
                ),
                bollard::body_full(archive.into()),
            )
            .await
            .map_err(|source| GraderError::Upload {
                container: name.clone(),
                source: Box::new(source),
            })?;

        let observation = self.execute(&name, &nonce, submission).await?;
        cleanup.now().await?;
        Ok(observation)
    }

    /// Attaches, starts, feeds the nonce, collects output until exit or the wall-clock
    /// limit, and reads the exit state.
    async fn execute(
        &self,
        name: &str,
        nonce: &str,
        submission: &Submission,
    ) -> Result<RunObservation, GraderError> {
        let docker = &self.inner.docker;
        let limits = submission.limits;
        let name = name.to_owned();
        let attach_options = AttachContainerOptionsBuilder::new()
            .stdin(true)
            .stdout(true)
            .stderr(true)
            .stream(true)
            .logs(false)
            .build();
        let attached = docker
            .attach_container(&name, Some(attach_options))
            .await
            .map_err(|source| GraderError::Attach {
                container: name.clone(),
                source: Box::new(source),
            })?;
        let (output, mut input) = (attached.output, attached.input);

        docker
            .start_container(&name, None)
            .await
            .map_err(|source| GraderError::Start {
                container: name.clone(),
                source,
            })?;
        let started = Instant::now();
        // The nonce goes in by stdin, which the runner reads before importing anything
        // untrusted; it never appears in a file, an argument or the environment.
        input
            .write_all(format!("{nonce}\n").as_bytes())
            .await
            .map_err(|source| GraderError::Attach {
                container: name.clone(),
                source: Box::new(source),
            })?;
        input.flush().await.map_err(|source| GraderError::Attach {
            container: name.clone(),
            source: Box::new(source),
        })?;

        let mut capture = OutputCapture::new(nonce, limits.output_bytes, submission.cases.len());
        let timed_out =
            collect_until_exit(docker, &name, output, &mut capture, limits.wall_time).await?;
        let wall_time = started.elapsed();
        drop(input);
        if timed_out {
            kill_container(docker, &name)
                .await
                .map_err(|source| GraderError::Kill {
                    container: name.clone(),
                    source,
                })?;
        }

        let inspected = docker
            .inspect_container(&name, None)
            .await
            .map_err(|source| GraderError::Inspect {
                container: name.clone(),
                source,
            })?;
        let state = inspected.state.unwrap_or_default();
        Ok(RunObservation {
            output: capture.finish(),
            timed_out,
            exit_code: state.exit_code,
            oom_killed: state.oom_killed.unwrap_or(false),
            wall_time,
        })
    }

    fn labels(&self, wall_time: Duration) -> HashMap<String, String> {
        // Saturating: an absurd wall-clock limit gives a far deadline, not a panic.
        let deadline = unix_seconds(SystemTime::now())
            .saturating_add(wall_time.saturating_add(DEADLINE_GRACE).as_secs());
        let mut labels: HashMap<String, String> = self
            .inner
            .config
            .labels
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        labels.insert(GRADER_LABEL.to_owned(), "1".to_owned());
        labels.insert(DEADLINE_LABEL.to_owned(), deadline.to_string());
        labels
    }
}

/// Drains the attached output into `capture` until the container exits; `Ok(true)` when
/// the wall-clock limit came first (the caller kills the container).
async fn collect_until_exit(
    docker: &Docker,
    name: &str,
    mut output: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>,
    >,
    capture: &mut OutputCapture,
    wall_time: Duration,
) -> Result<bool, GraderError> {
    let drain = async {
        while let Some(item) = output.next().await {
            match item {
                Ok(LogOutput::StdOut { message }) => capture.push_stdout(&message),
                Ok(LogOutput::StdErr { message }) => capture.push_stderr(&message),
                Ok(_) => {}
                Err(source) => {
                    return Err(GraderError::Logs {
                        container: name.to_owned(),
                        source,
                    });
                }
            }
        }
        Ok(())
    };
    let wait = async {
        let mut waiting = docker.wait_container(name, None);
        match waiting.next().await {
            // A non-zero exit arrives as an error item; the exit code is read by inspection.
            Some(Ok(_) | Err(bollard::errors::Error::DockerContainerWaitError { .. })) | None => {
                Ok(())
            }
            Some(Err(source)) => Err(GraderError::Wait {
                container: name.to_owned(),
                source,
            }),
        }
    };
    match tokio::time::timeout(wall_time, async { tokio::try_join!(drain, wait) }).await {
        Ok(result) => result.map(|_| false),
        Err(_elapsed) => Ok(true),
    }
}

/// The hardened container: no network, capped memory (no swap), processes and CPU,
/// read-only root, small noexec /tmp, no capabilities, no privilege gain, user nobody,
/// no IPC namespace sharing or /dev/shm, no logs kept on the engine's disk, and only the
/// submission's own volume mounted.
fn container_body(
    image: &str,
    volume: &str,
    labels: HashMap<String, String>,
    limits: &Limits,
) -> ContainerCreateBody {
    let memory = i64::try_from(limits.memory_bytes).unwrap_or(i64::MAX);
    ContainerCreateBody {
        image: Some(image.to_owned()),
        entrypoint: Some(vec![
            "python3".into(),
            "-I".into(),
            "-B".into(),
            format!("{WORK_DIR}/runner.py"),
        ]),
        cmd: Some(Vec::new()),
        user: Some(SANDBOX_USER.to_owned()),
        working_dir: Some(WORK_DIR.to_owned()),
        hostname: Some("sandbox".to_owned()),
        env: Some(vec![
            "LANG=C.UTF-8".to_owned(),
            "HOME=/tmp".to_owned(),
            format!("VERNIER_MAX_RECORD={}", limits.output_bytes),
            format!("VERNIER_MEMORY_BYTES={}", limits.memory_bytes),
        ]),
        labels: Some(labels),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        network_disabled: Some(true),
        host_config: Some(HostConfig {
            network_mode: Some("none".to_owned()),
            memory: Some(memory),
            memory_swap: Some(memory),
            pids_limit: Some(limits.pids),
            nano_cpus: Some(limits.nano_cpus),
            readonly_rootfs: Some(true),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_owned(),
                TMPFS_OPTIONS.to_owned(),
            )])),
            cap_drop: Some(vec!["ALL".to_owned()]),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            ipc_mode: Some("none".to_owned()),
            privileged: Some(false),
            ulimits: Some(vec![ResourcesUlimits {
                name: Some("core".to_owned()),
                soft: Some(0),
                hard: Some(0),
            }]),
            log_config: Some(HostConfigLogConfig {
                typ: Some("none".to_owned()),
                config: None,
            }),
            mounts: Some(vec![Mount {
                target: Some(WORK_DIR.to_owned()),
                source: Some(volume.to_owned()),
                typ: Some(MountType::VOLUME),
                read_only: Some(false),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Removes the container and its volume when the grade ends, on every path: awaited on
/// success, spawned on the runtime when the future is dropped or fails early.
struct Cleanup {
    docker: Docker,
    name: String,
    armed: bool,
}

impl Cleanup {
    async fn now(&mut self) -> Result<(), GraderError> {
        remove_container(&self.docker, &self.name)
            .await
            .map_err(|source| GraderError::Remove {
                what: format!("container {}", self.name),
                source,
            })?;
        remove_volume(&self.docker, &self.name)
            .await
            .map_err(|source| GraderError::Remove {
                what: format!("volume {}", self.name),
                source,
            })?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime: the next connect's leftover sweep removes it after its deadline
        };
        let docker = self.docker.clone();
        let name = std::mem::take(&mut self.name);
        runtime.spawn(async move {
            let _ = remove_container(&docker, &name).await;
            let _ = remove_volume(&docker, &name).await;
        });
    }
}

/// Force-removes a container; `Ok(false)` when it was already gone.
async fn remove_container(docker: &Docker, name: &str) -> Result<bool, bollard::errors::Error> {
    let options = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    match docker.remove_container(name, Some(options)).await {
        Ok(()) => Ok(true),
        Err(error) if status_of(&error) == Some(404) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Removes a volume; `Ok(false)` when it was gone or is still in use (by a live container).
async fn remove_volume(docker: &Docker, name: &str) -> Result<bool, bollard::errors::Error> {
    match docker
        .remove_volume(name, None::<bollard::query_parameters::RemoveVolumeOptions>)
        .await
    {
        Ok(()) => Ok(true),
        Err(error) if matches!(status_of(&error), Some(404 | 409)) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Kills a container at its time limit; one that already stopped is fine.
async fn kill_container(docker: &Docker, name: &str) -> Result<(), bollard::errors::Error> {
    match docker.kill_container(name, None).await {
        Err(error) if !matches!(status_of(&error), Some(404 | 409)) => Err(error),
        _ => Ok(()),
    }
}

fn status_of(error: &bollard::errors::Error) -> Option<u16> {
    match error {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

fn expired(labels: &HashMap<String, String>, now: u64) -> bool {
    labels
        .get(DEADLINE_LABEL)
        .and_then(|deadline| deadline.parse::<u64>().ok())
        .is_none_or(|deadline| deadline < now)
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_is_hardened() {
        let limits = Limits::default();
        let body = container_body("sha256:abc", "vol", HashMap::new(), &limits);
        let host = body.host_config.expect("host config");
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.memory, Some(256 << 20));
        assert_eq!(host.memory_swap, host.memory);
        assert_eq!(host.pids_limit, Some(64));
        assert_eq!(host.nano_cpus, Some(1_000_000_000));
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_owned()]));
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges".to_owned()])
        );
        assert_eq!(host.ipc_mode.as_deref(), Some("none"));
        assert!(host.binds.is_none(), "no host path is mounted");
        let mounts = host.mounts.expect("mounts");
        assert_eq!(mounts.len(), 1);
        assert_eq!(mounts[0].typ, Some(MountType::VOLUME));
        assert_eq!(body.user.as_deref(), Some("65534:65534"));
        assert!(host.tmpfs.expect("tmpfs")["/tmp"].contains("size=16m"));
    }

    #[test]
    fn deadlines_decide_leftovers() {
        let labels =
            |deadline: &str| HashMap::from([(DEADLINE_LABEL.to_owned(), deadline.to_owned())]);
        assert!(expired(&labels("100"), 200));
        assert!(!expired(&labels("300"), 200));
        assert!(expired(&labels("soon"), 200));
        assert!(expired(&HashMap::new(), 200));
    }
}
