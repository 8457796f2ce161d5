//! Writing to the terminal: a result on stdout (a closed pipe is success), a note or an error
//! and its causes on stderr, each cause printed once.

use std::io::Write as _;

/// An error and its causes: "message: cause: cause". Each cause is printed once, even when
/// an error's message already repeats its source's text at its end.
pub fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// [`cause_chain`] on one line: line breaks become spaces (for journals and progress lines).
pub fn one_line(error: &dyn std::error::Error) -> String {
    cause_chain(error).replace(['\n', '\r'], " ")
}

/// Writes `text` to stdout and flushes it. A closed pipe (the reader went away, as with
/// `| head`) is success: `Ok(())`.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error),
        _ => Ok(()),
    }
}

/// Writes `error: failed to <cause chain>` to stderr, the form every binary uses.
pub fn report_error(error: &dyn std::error::Error) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "error: failed to {}",
        cause_chain(error)
    );
}

/// Writes one line to stderr; a closed stderr is ignored.
pub fn note(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
