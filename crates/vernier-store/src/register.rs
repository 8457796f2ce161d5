//! Registering a run an engine just finished: never a reason for the run to fail.

use std::path::Path;

use crate::read::read_runs;
use crate::store::{Location, Store};

/// What registering a finished run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Registered {
    /// Registering is off (`VERNIER_STORE=off`, or no home folder).
    Off,
    /// Registered as `id` in the store at `location`.
    Done {
        /// The run's id.
        id: String,
        /// The store, for messages.
        location: String,
    },
    /// Not registered: the warning to print, with the command that registers it later.
    Warning(String),
}

/// Registers the run in `folder` in the store `$VERNIER_STORE` names (else the default file).
pub async fn register_finished(folder: &Path) -> Registered {
    let location = match Location::from_environment() {
        Ok(Some(location)) => location,
        Ok(None) => return Registered::Off,
        Err(error) => {
            return Registered::Warning(format!(
                "the run was not registered: {error}; register it later with `runs register {}`",
                folder.display()
            ));
        }
    };
    let later = |error: &dyn std::fmt::Display| {
        Registered::Warning(format!(
            "the run was not registered in the run store: {error}; register it later with `runs register {} --store {}`",
            folder.display(),
            location.display()
        ))
    };
    let records = match read_runs(folder) {
        Ok(records) => records,
        Err(error) => return later(&error),
    };
    let store = match Store::open(&location).await {
        Ok(store) => store,
        Err(error) => return later(&error),
    };
    let mut outcome = Registered::Off;
    for record in &records {
        if let Err(error) = store.register(record).await {
            outcome = later(&error);
            break;
        }
    }
    if outcome == Registered::Off {
        outcome = Registered::Done {
            id: records
                .first()
                .map(|record| record.id.clone())
                .unwrap_or_default(),
            location: location.display(),
        };
    }
    store.close().await;
    outcome
}

/// A command's end with the run it finished registered: a note naming its id, or a warning
/// with the command that registers it later. An interrupted run, or a command that ran none,
/// is left as it is.
pub fn registering<E>(
    result: Result<vernier_cli::Finished, E>,
) -> Result<vernier_cli::Finished, E> {
    let Ok(finished) = result else {
        return result;
    };
    let Some(folder) = finished.run_folder.clone() else {
        return Ok(finished);
    };
    if finished.kind == vernier_cli::ExitKind::Interrupted {
        return Ok(finished);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return Ok(finished.note(format!(
                "warning: the run was not registered in the run store ({error}); register it later with `runs register {}`",
                folder.display()
            )));
        }
    };
    Ok(match runtime.block_on(register_finished(&folder)) {
        Registered::Off => finished,
        Registered::Done { id, location } => {
            finished.note(format!("run store: registered as {id} in {location}"))
        }
        Registered::Warning(warning) => finished.note(format!("warning: {warning}")),
    })
}
