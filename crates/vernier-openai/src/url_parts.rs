//! Parts of a URL read the same way for the server and the proxy: the port, and the URL as it
//! may be printed.

/// The port an authority names, or `default` when it names none. A port that is not a number
/// from 1 to 65535 is refused: read as absent it would quietly send the requests to the
/// scheme's default port, where another server may answer.
pub(crate) fn port_of(authority: &http::uri::Authority, default: u16) -> Result<u16, &'static str> {
    let text = authority.as_str();
    // After an IPv6 literal's closing bracket, or the whole authority.
    let after_host = text.rsplit_once(']').map_or(text, |(_, rest)| rest);
    match after_host.rsplit_once(':').map(|(_, port)| port) {
        None | Some("") => Ok(default),
        Some(port) => match port.parse::<u16>() {
            Ok(0) | Err(_) => Err("the port must be a number from 1 to 65535"),
            Ok(port) => Ok(port),
        },
    }
}

/// `url` with any user information (`user:key@`) replaced by `***`, so that a key typed into
/// a URL is never printed back.
pub(crate) fn redact_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |at| at + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| start + at);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}
