//! The database behind the runs: SQLite in a file (the default, under the user's data folder)
//! or a team's PostgreSQL, both through sqlx's one driver and its migrator.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, Row as _, SqlSafeStr as _};
use vernier_run::{Headline, Score};

use crate::error::StoreError;
use crate::record::RunRecord;

/// The environment variable that names the store engines register into: a file path, a
/// `postgres://` URL, or `off`.
pub const STORE_VARIABLE: &str = "VERNIER_STORE";

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL server, by URL.
    Postgres(String),
}

impl Location {
    /// Reads a location as a user gives it: `postgres://…` (or `postgresql://…`), else a file
    /// path; `None` for `off`.
    pub fn parse(given: &str) -> Result<Option<Self>, StoreError> {
        let given = given.trim();
        if given.is_empty() {
            return Err(StoreError::Location {
                given: given.to_owned(),
                detail: "it is empty".to_owned(),
            });
        }
        if given == "off" {
            return Ok(None);
        }
        if given.starts_with("postgres://") || given.starts_with("postgresql://") {
            return Ok(Some(Self::Postgres(given.to_owned())));
        }
        if given.contains("://") {
            return Err(StoreError::Location {
                given: given.to_owned(),
                detail: "only SQLite files and postgres:// URLs are stores".to_owned(),
            });
        }
        Ok(Some(Self::Sqlite(PathBuf::from(given))))
    }

    /// The store engines register into: `$VERNIER_STORE`, else `runs.sqlite` under
    /// `$XDG_DATA_HOME/vernier` (or `~/.local/share/vernier`); `None` when registering is off
    /// or no home is known.
    pub fn from_environment() -> Result<Option<Self>, StoreError> {
        if let Some(given) = std::env::var_os(STORE_VARIABLE) {
            return Self::parse(&given.to_string_lossy());
        }
        Ok(default_file().map(Self::Sqlite))
    }

    /// The address for messages, a password hidden.
    pub fn display(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres(url) => hide_password(url),
        }
    }
}

/// `runs.sqlite` under the user's data folder.
pub fn default_file() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|value| !value.is_empty())
                .map(|home| Path::new(&home).join(".local").join("share"))
        })?;
    Some(data.join("vernier").join("runs.sqlite"))
}

fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((credentials, host)) = rest.split_once('@') else {
        return url.to_owned();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

fn migrator() -> Migrator {
    Migrator::with_migrations(vec![Migration::new(
        1,
        Cow::Borrowed("runs"),
        MigrationType::Simple,
        include_str!("../migrations/0001_runs.sql").into_sql_str(),
        false,
    )])
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    pool: AnyPool,
    location: Location,
}

impl Store {
    /// Opens the store at `location` (a SQLite file is made, with its folder, when missing)
    /// and brings its schema up to date.
    pub async fn open(location: &Location) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let url = match location {
            Location::Sqlite(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                format!("sqlite://{}?mode=rwc", path.display())
            }
            Location::Postgres(url) => url.clone(),
        };
        let pool = AnyPoolOptions::new()
            .max_connections(2)
            .connect(&url)
            .await
            .map_err(|source| StoreError::Database {
                action: "open",
                location: location.display(),
                source,
            })?;
        migrator()
            .run(&pool)
            .await
            .map_err(|source| StoreError::Migrate {
                location: location.display(),
                source,
            })?;
        Ok(Self {
            pool,
            location: location.clone(),
        })
    }

    /// Where it is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    fn database(&self, action: &'static str) -> impl Fn(sqlx::Error) -> StoreError + '_ {
        move |source| StoreError::Database {
            action,
            location: self.location.display(),
            source,
        }
    }

    /// Registers `record`, replacing any earlier registration of the same run.
    pub async fn register(&self, record: &RunRecord) -> Result<(), StoreError> {
        let failed = self.database("register a run in");
        let mut transaction = self.pool.begin().await.map_err(&failed)?;
        for table in [
            "DELETE FROM figures WHERE run_id = $1",
            "DELETE FROM scores WHERE run_id = $1",
            "DELETE FROM settings WHERE run_id = $1",
            "DELETE FROM runs WHERE id = $1",
        ] {
            sqlx::query(table)
                .bind(&record.id)
                .execute(&mut *transaction)
                .await
                .map_err(&failed)?;
        }
        sqlx::query(
            "INSERT INTO runs (id, kind, folder, started_unix_ms, ended_unix_ms, target, server_kind, server_version, model, weights, gpu, driver, machine, verdict, verdict_reasons, folder_present) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(&record.id)
        .bind(&record.kind)
        .bind(&record.folder)
        .bind(record.started_unix_ms)
        .bind(record.ended_unix_ms)
        .bind(&record.target)
        .bind(&record.server_kind)
        .bind(&record.server_version)
        .bind(&record.model)
        .bind(&record.weights)
        .bind(&record.gpu)
        .bind(&record.driver)
        .bind(&record.machine)
        .bind(&record.verdict)
        .bind(&record.verdict_reasons)
        .bind(i64::from(record.folder_present))
        .execute(&mut *transaction)
        .await
        .map_err(&failed)?;
        for (position, figure) in record.figures.iter().enumerate() {
            sqlx::query(
                "INSERT INTO figures (run_id, position, name, value, unit, low, high, higher_is_better) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&record.id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(&figure.name)
            .bind(figure.value)
            .bind(&figure.unit)
            .bind(figure.interval.map(|(low, _)| low))
            .bind(figure.interval.map(|(_, high)| high))
            .bind(i64::from(figure.higher_is_better))
            .execute(&mut *transaction)
            .await
            .map_err(&failed)?;
        }
        for (position, score) in record.scores.iter().enumerate() {
            sqlx::query(
                "INSERT INTO scores (run_id, position, dimension, passed, scored) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&record.id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(&score.dimension)
            .bind(i64::try_from(score.passed).unwrap_or(i64::MAX))
            .bind(i64::try_from(score.scored).unwrap_or(i64::MAX))
            .execute(&mut *transaction)
            .await
            .map_err(&failed)?;
        }
        for (position, (name, value)) in record.settings.iter().enumerate() {
            sqlx::query(
                "INSERT INTO settings (run_id, position, name, value) VALUES ($1, $2, $3, $4)",
            )
            .bind(&record.id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(name)
            .bind(value)
            .execute(&mut *transaction)
            .await
            .map_err(&failed)?;
        }
        transaction.commit().await.map_err(&failed)?;
        Ok(())
    }

    /// Every run, oldest first, with its figures, scores and settings.
    pub async fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let failed = self.database("read");
        let rows = sqlx::query(
            "SELECT id, kind, folder, started_unix_ms, ended_unix_ms, target, server_kind, server_version, model, weights, gpu, driver, machine, verdict, verdict_reasons, folder_present FROM runs ORDER BY started_unix_ms, id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(&failed)?;
        let mut runs: Vec<RunRecord> = rows
            .iter()
            .map(run_of)
            .collect::<Result<_, _>>()
            .map_err(&failed)?;
        let figures = sqlx::query(
            "SELECT run_id, name, value, unit, low, high, higher_is_better FROM figures ORDER BY run_id, position",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(&failed)?;
        let scores = sqlx::query(
            "SELECT run_id, dimension, passed, scored FROM scores ORDER BY run_id, position",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(&failed)?;
        let settings =
            sqlx::query("SELECT run_id, name, value FROM settings ORDER BY run_id, position")
                .fetch_all(&self.pool)
                .await
                .map_err(&failed)?;
        let index: std::collections::HashMap<String, usize> = runs
            .iter()
            .enumerate()
            .map(|(at, run)| (run.id.clone(), at))
            .collect();
        for row in &figures {
            let id: String = row.try_get("run_id").map_err(&failed)?;
            let Some(&at) = index.get(&id) else { continue };
            runs[at].figures.push(figure_of(row).map_err(&failed)?);
        }
        for row in &scores {
            let id: String = row.try_get("run_id").map_err(&failed)?;
            let Some(&at) = index.get(&id) else { continue };
            let n_pass: i64 = row.try_get("passed").map_err(&failed)?;
            let n_scored: i64 = row.try_get("scored").map_err(&failed)?;
            runs[at].scores.push(Score::new(
                row.try_get::<String, _>("dimension").map_err(&failed)?,
                u64::try_from(n_pass).unwrap_or(0),
                u64::try_from(n_scored).unwrap_or(0),
            ));
        }
        for row in &settings {
            let id: String = row.try_get("run_id").map_err(&failed)?;
            let Some(&at) = index.get(&id) else { continue };
            runs[at].settings.push((
                row.try_get("name").map_err(&failed)?,
                row.try_get("value").map_err(&failed)?,
            ));
        }
        Ok(runs)
    }

    /// The run `id` (or the only run whose id starts with it).
    pub async fn run(&self, id: &str) -> Result<RunRecord, StoreError> {
        let runs = self.runs().await?;
        if let Some(run) = runs.iter().find(|run| run.id == id) {
            return Ok(run.clone());
        }
        let mut matching = runs.into_iter().filter(|run| run.id.starts_with(id));
        match (matching.next(), matching.next()) {
            (Some(run), None) => Ok(run),
            _ => Err(StoreError::NoSuchRun { id: id.to_owned() }),
        }
    }

    /// Marks whether the run `id`'s folder is there.
    pub async fn mark_folder(&self, id: &str, present: bool) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET folder_present = $1 WHERE id = $2")
            .bind(i64::from(present))
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(self.database("mark a run in"))?;
        Ok(())
    }

    /// Closes the connections.
    pub async fn close(self) {
        self.pool.close().await;
    }
}

fn run_of(row: &AnyRow) -> Result<RunRecord, sqlx::Error> {
    let present: i64 = row.try_get("folder_present")?;
    Ok(RunRecord {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        folder: row.try_get("folder")?,
        started_unix_ms: row.try_get("started_unix_ms")?,
        ended_unix_ms: row.try_get("ended_unix_ms")?,
        target: row.try_get("target")?,
        server_kind: row.try_get("server_kind")?,
        server_version: row.try_get("server_version")?,
        model: row.try_get("model")?,
        weights: row.try_get("weights")?,
        gpu: row.try_get("gpu")?,
        driver: row.try_get("driver")?,
        machine: row.try_get("machine")?,
        verdict: row.try_get("verdict")?,
        verdict_reasons: row.try_get("verdict_reasons")?,
        folder_present: present != 0,
        figures: Vec::new(),
        scores: Vec::new(),
        settings: Vec::new(),
    })
}

fn figure_of(row: &AnyRow) -> Result<Headline, sqlx::Error> {
    let mut figure = Headline::new(
        row.try_get::<String, _>("name")?,
        row.try_get::<f64, _>("value")?,
        row.try_get::<String, _>("unit")?,
    );
    let low: Option<f64> = row.try_get("low")?;
    let high: Option<f64> = row.try_get("high")?;
    if let (Some(low), Some(high)) = (low, high) {
        figure = figure.interval(low, high);
    }
    if row.try_get::<i64, _>("higher_is_better")? == 0 {
        figure = figure.lower_is_better();
    }
    Ok(figure)
}
