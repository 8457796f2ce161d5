//! `battery run --resume` and `battery versus` of batteries whose files are not what their
//! `battery.json` says: a done part's folder deleted, no `battery.json`, a corrupt one.

use std::path::Path;

use crate::{battery, battery_json, succeeded, text};

/// A battery of the sweep part alone, small, against the bundled simulator, finished.
fn small_battery(out: &Path) {
    let run = battery(&[
        "run",
        "--parts",
        "sweep",
        "--preset",
        "quick",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--concurrency",
        "2",
        "--reps",
        "2",
        "--quiet",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    succeeded(&run);
}

/// Copies the files of folder `from` into `to` (one level of subfolders, as a battery has).
fn copy_battery(from: &Path, to: &Path) {
    for entry in walk(from) {
        let target = to.join(entry.strip_prefix(from).expect("inside"));
        std::fs::create_dir_all(target.parent().expect("a folder")).expect("make the folder");
        std::fs::copy(&entry, &target).expect("copy");
    }
}

fn walk(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).expect("read the folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A battery whose finished sweep folder was deleted: `versus` refuses it (exit 2) naming the
/// part, and `run --resume` runs the part again, saying so, and finishes with it done.
/// (Before, `versus` compared without the part, as if only the other side had measured it, and
/// the resume found every part done and ran nothing: the battery stayed without its sweep.)
#[test]
fn a_done_part_whose_folder_is_gone_is_refused_by_versus_and_run_again_by_resume() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (whole, gutted) = (dir.path().join("whole"), dir.path().join("gutted"));
    small_battery(&whole);
    copy_battery(&whole, &gutted);
    std::fs::remove_dir_all(gutted.join("sweep")).expect("delete the sweep part");

    let compared = crate::versus(&whole, &gutted, &dir.path().join("v"));
    assert_eq!(
        compared.status.code(),
        Some(2),
        "{}",
        text(&compared.stderr)
    );
    let said = text(&compared.stderr);
    assert!(
        said.contains("sweep part") && said.contains("--resume"),
        "{said}"
    );

    let resumed = battery(&[
        "run",
        "--resume",
        gutted.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    succeeded(&resumed);
    let said = text(&resumed.stderr);
    assert!(
        said.contains("sweep: recorded done") && said.contains("running it again"),
        "{said}"
    );
    assert!(gutted.join("sweep/run.json").is_file());
    assert_eq!(battery_json(&gutted)["parts"][0]["status"], "done");
}

/// `run --resume` of a folder without `battery.json`, and of one whose `battery.json` is not
/// JSON, is a refused argument: exit 2, naming the file. (Before, both ended with exit 1, as
/// a failure while running.)
#[test]
fn a_resume_without_a_readable_battery_json_is_refused() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("folder");
    let refused = battery(&["run", "--resume", empty.to_str().expect("UTF-8"), "--quiet"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("battery.json"),
        "{}",
        text(&refused.stderr)
    );

    let corrupt = dir.path().join("corrupt");
    std::fs::create_dir_all(&corrupt).expect("folder");
    std::fs::write(
        corrupt.join("battery.json"),
        "{\"schema_version\": 1, \"parts\": [",
    )
    .expect("write");
    let refused = battery(&[
        "run",
        "--resume",
        corrupt.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("battery.json"),
        "{}",
        text(&refused.stderr)
    );
}
