//! The grader's error type.

/// The fix for engine trouble, appended to messages.
const ENGINE_FIX: &str =
    "is the Docker daemon running? set DOCKER_HOST, or run docker/setup-engine.sh";

/// Why the grader could not talk to the engine. Each variant wraps one engine operation;
/// messages read after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraderError {
    /// The engine address could not be used.
    #[error("connect to the Docker engine at {host}: {ENGINE_FIX}")]
    Connect {
        /// The address tried.
        host: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The engine did not answer.
    #[error("ping the Docker engine at {host}: {ENGINE_FIX}")]
    Ping {
        /// The address tried.
        host: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The image is missing or unreadable.
    #[error(
        "inspect the grader image {image}: run docker/build-grader-image.sh, or set GraderConfig::image to an image with python3 and user 65534"
    )]
    InspectImage {
        /// The image asked for.
        image: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// Listing labelled containers or volumes failed.
    #[error("list the grader's leftover containers and volumes: {ENGINE_FIX}")]
    List {
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The per-submission volume could not be created.
    #[error("create the submission volume {volume}: {ENGINE_FIX}")]
    CreateVolume {
        /// The volume's name.
        volume: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The sandbox container could not be created.
    #[error(
        "create a sandbox container from {image}: check the image and the limits; {ENGINE_FIX}"
    )]
    CreateContainer {
        /// The image ID used.
        image: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The submission's files could not be uploaded.
    #[error("upload the submission into container {container}: {ENGINE_FIX}")]
    Upload {
        /// The container's name.
        container: String,
        /// The engine client's error, or an archive error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Attaching to the container's streams failed.
    #[error("attach to container {container}: {ENGINE_FIX}")]
    Attach {
        /// The container's name.
        container: String,
        /// The engine client's or the stream's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The container did not start.
    #[error("start container {container}: {ENGINE_FIX}")]
    Start {
        /// The container's name.
        container: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// Waiting for the container's exit failed.
    #[error("wait for container {container}: {ENGINE_FIX}")]
    Wait {
        /// The container's name.
        container: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The container could not be killed at its wall-clock limit.
    #[error("kill container {container} at its time limit: {ENGINE_FIX}")]
    Kill {
        /// The container's name.
        container: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The container's exit state could not be read.
    #[error("inspect container {container}: {ENGINE_FIX}")]
    Inspect {
        /// The container's name.
        container: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The container's output stream broke.
    #[error("read the output of container {container}: {ENGINE_FIX}")]
    Logs {
        /// The container's name.
        container: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// A container or volume could not be removed.
    #[error("remove {what}: remove it with `docker rm -f` or `docker volume rm`; {ENGINE_FIX}")]
    Remove {
        /// `container NAME` or `volume NAME`.
        what: String,
        /// The engine client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The operating system's random source failed.
    #[error("draw a random nonce from the operating system: {reason}")]
    Random {
        /// The operating system's error.
        reason: String,
    },
}

impl GraderError {
    /// The message with its whole cause chain, for `GradeReason::Infra`: "failed to ...",
    /// as every binary prints an error ([`vernier_cli::cause_chain`]: a cause the message
    /// already ends with is not repeated).
    pub(crate) fn chain(&self) -> String {
        format!("failed to {}", vernier_cli::cause_chain(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_after_failed_to_with_each_cause_once() {
        let upload = GraderError::Upload {
            container: "grade-1".to_owned(),
            source: Box::new(std::io::Error::other("archive too large")),
        };
        assert_eq!(
            upload.chain(),
            format!(
                "failed to upload the submission into container grade-1: {ENGINE_FIX}: archive too large"
            )
        );
    }
}
