//! A real PostgreSQL server for a test: Debian's package (`scripts/test.sh` installs it),
//! started in a folder of its own on a free loopback port, stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running PostgreSQL server of the test's own.
#[derive(Debug)]
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

/// The newest `/usr/lib/postgresql/N/bin` holding `initdb`.
fn bin_dir() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("Debian's postgresql package (scripts/test.sh installs it): /usr/lib/postgresql")
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .expect("initdb under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        .1
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// Runs `program` with `args`, as the `postgres` user when this process is root (PostgreSQL
/// refuses to run as root).
fn run_as_owner(program: &Path, args: &[&str]) -> std::process::Output {
    let mut command = if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    command
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("run {}: {error}", program.display()))
}

impl Postgres {
    /// Initialises a cluster with a `vernier` superuser (trust on loopback) and starts it.
    pub fn start() -> Self {
        let bin = bin_dir();
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("data folder");
        if is_root() {
            let status = Command::new("chmod")
                .arg("755")
                .arg(dir.path())
                .status()
                .expect("chmod");
            assert!(status.success());
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(status.success(), "chown the cluster's folder to postgres");
        }
        let data_text = data.display().to_string();
        let init = run_as_owner(
            &bin.join("initdb"),
            &[
                "-D",
                &data_text,
                "-U",
                "vernier",
                "--auth=trust",
                "-E",
                "UTF8",
            ],
        );
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let port = crate::free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            dir.path().display()
        );
        let log = dir.path().join("postgres.log").display().to_string();
        let start = run_as_owner(
            &bin.join("pg_ctl"),
            &[
                "-D", &data_text, "-o", &options, "-l", &log, "-w", "-t", "60", "start",
            ],
        );
        assert!(
            start.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&start.stderr),
            std::fs::read_to_string(dir.path().join("postgres.log")).unwrap_or_default()
        );
        Self { dir, bin, port }
    }

    /// A URL to its `postgres` database as `vernier`.
    pub fn url(&self) -> String {
        format!("postgres://vernier@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data").display().to_string();
        let _ = run_as_owner(
            &self.bin.join("pg_ctl"),
            &["-D", &data, "-m", "immediate", "-w", "stop"],
        );
    }
}
