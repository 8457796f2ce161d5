//! Finding the code in a model's reply.

/// Returns the content of the last fenced code block tagged `python`, `py`, `python3`,
/// `py3` or untagged; `None` when there is none or it is blank.
///
/// Fences are three or more backticks or tildes, indented at most three spaces; a
/// block runs to a closing fence of the same character at least as long, or to the end
/// of the reply when it is the last block (a reply cut off mid-code still gives its code).
/// Blocks in other languages (` ```json `, ` ```bash `) are skipped.
///
/// ```
/// use vernier_grader::extract_code;
/// let reply = "First try:\n```python\nx = 1\n```\nBetter:\n```\nx = 2\n```\n";
/// assert_eq!(extract_code(reply).as_deref(), Some("x = 2\n"));
/// assert_eq!(extract_code("no code here"), None);
/// ```
pub fn extract_code(reply: &str) -> Option<String> {
    let mut last: Option<String> = None;
    let mut open: Option<(char, usize, bool, String)> = None; // fence char, length, wanted, body
    for line in reply.split_inclusive('\n') {
        let trimmed_end = line.trim_end_matches(['\n', '\r']);
        let indent = trimmed_end.len() - trimmed_end.trim_start_matches(' ').len();
        let text = &trimmed_end[indent..];
        if let Some((fence_char, fence_len, wanted, body)) = open.as_mut() {
            let run = text.chars().take_while(|c| c == fence_char).count();
            if indent <= 3
                && run >= *fence_len
                && text[run * fence_char.len_utf8()..].trim().is_empty()
            {
                if *wanted && !body.trim().is_empty() {
                    last = Some(std::mem::take(body));
                }
                open = None;
            } else {
                body.push_str(line);
            }
        } else {
            if indent > 3 {
                continue;
            }
            let Some(fence_char) = text.chars().next().filter(|c| *c == '`' || *c == '~') else {
                continue;
            };
            let run = text.chars().take_while(|c| *c == fence_char).count();
            if run < 3 {
                continue;
            }
            let info = text[run..].trim();
            if fence_char == '`' && info.contains('`') {
                continue; // inline code such as ```x```, not a fence
            }
            let language = info
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            let wanted = matches!(language.as_str(), "" | "python" | "py" | "python3" | "py3");
            open = Some((fence_char, run, wanted, String::new()));
        }
    }
    if let Some((_, _, true, body)) = open
        && !body.trim().is_empty()
    {
        last = Some(body);
    }
    last
}

#[cfg(test)]
mod tests {
    use super::extract_code;

    #[test]
    fn takes_the_last_python_or_bare_block() {
        let reply = "```py\na = 1\n```\ntext\n```python\nb = 2\n```\n";
        assert_eq!(extract_code(reply).as_deref(), Some("b = 2\n"));
    }

    #[test]
    fn skips_other_languages() {
        let reply = "```python\nkeep = 1\n```\n```json\n{\"a\": 1}\n```\n";
        assert_eq!(extract_code(reply).as_deref(), Some("keep = 1\n"));
    }

    #[test]
    fn none_without_a_fence_or_with_a_blank_block() {
        assert_eq!(extract_code("def f(): return 1"), None);
        assert_eq!(extract_code("```python\n   \n```"), None);
        assert_eq!(extract_code(""), None);
    }

    #[test]
    fn a_longer_fence_holds_a_shorter_one() {
        let reply = "````python\ns = '''\n```\n'''\n````\n";
        assert_eq!(extract_code(reply).as_deref(), Some("s = '''\n```\n'''\n"));
    }

    #[test]
    fn an_unclosed_last_block_counts() {
        let reply = "```python\ndef f():\n    return 1\n";
        assert_eq!(
            extract_code(reply).as_deref(),
            Some("def f():\n    return 1\n")
        );
    }

    #[test]
    fn tildes_crlf_and_language_case() {
        let reply = "~~~Python\r\nx = 3\r\n~~~\r\n";
        assert_eq!(extract_code(reply).as_deref(), Some("x = 3\r\n"));
    }

    #[test]
    fn inline_triple_backticks_are_not_fences() {
        let reply = "Use ```x``` here.\n```\ny = 1\n```";
        assert_eq!(extract_code(reply).as_deref(), Some("y = 1\n"));
    }
}
