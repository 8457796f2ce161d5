//! Property: any split of the byte stream gives the same events, equal to a plain reference
//! decoder that sees the whole input at once.

use proptest::prelude::*;
use vernier_openai::{SseDecoder, SseEvent};

use crate::support::{SERVERS, read_fixture, stems};

fn decode_split(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut decoder = SseDecoder::default();
    let mut events = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        decoder
            .decode(&bytes[start..cut], &mut events)
            .expect("decodes");
        start = cut;
    }
    decoder.finish(&mut events).expect("finishes");
    events
}

/// The WHATWG algorithm written the obvious way, over the whole text.
fn reference(bytes: &[u8]) -> Vec<SseEvent> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = Vec::new();
    let (mut data, mut has_data, mut event, mut id) = (String::new(), false, None, None);
    let mut lines: Vec<&str> = normalised.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines.push(""); // finish(): a pending event is dispatched at the end.
    for line in lines {
        if line.is_empty() {
            if has_data {
                events.push(SseEvent {
                    event: event.take(),
                    data: std::mem::take(&mut data),
                    id: id.take(),
                });
            }
            has_data = false;
            event = None;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (name, value) = line.split_once(':').map_or((line, ""), |(name, value)| {
            (name, value.strip_prefix(' ').unwrap_or(value))
        });
        match name {
            "data" | "error" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
                if name == "error" {
                    event = Some("error".to_owned());
                }
            }
            "event" => event = Some(value.to_owned()),
            "id" => id = Some(value.to_owned()),
            _ => {}
        }
    }
    events
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z{}\":, ]{0,12}".prop_map(|text| format!("data: {text}")),
        "[éあ😀a ]{0,6}".prop_map(|text| format!("data:{text}")),
        Just("data: [DONE]".to_owned()),
        Just(": ping".to_owned()),
        Just(String::new()),
        Just("data".to_owned()),
        "[a-z]{1,5}".prop_map(|name| format!("event: {name}")),
        "[0-9]{1,3}".prop_map(|id| format!("id: {id}")),
        Just("retry: 100".to_owned()),
        Just("error: {\"code\":500}".to_owned()),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        prop::collection::vec(
            (line(), prop::sample::select(vec!["\n", "\r\n", "\r"])),
            0..30,
        ),
    )
        .prop_map(|(bom, lines)| {
            let mut bytes = if bom {
                b"\xEF\xBB\xBF".to_vec()
            } else {
                Vec::new()
            };
            for (line, end) in lines {
                bytes.extend_from_slice(line.as_bytes());
                bytes.extend_from_slice(end.as_bytes());
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_streams_decode_the_same_under_any_split(
        bytes in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let whole = decode_split(&bytes, &[]);
        prop_assert_eq!(&whole, &reference(&bytes));
        prop_assert_eq!(decode_split(&bytes, &cuts), whole);
    }

    #[test]
    fn fixtures_decode_the_same_under_any_split(
        which in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..200),
    ) {
        let files: Vec<(&str, String)> = SERVERS
            .iter()
            .flat_map(|server| stems(server, "sse").into_iter().map(move |stem| (*server, stem)))
            .collect();
        let (server, stem) = which.get(&files);
        let bytes = read_fixture(server, &format!("{stem}.sse"));
        let whole = decode_split(&bytes, &[]);
        prop_assert_eq!(&whole, &reference(&bytes));
        prop_assert_eq!(decode_split(&bytes, &cuts), whole);
    }
}

#[test]
fn every_split_point_of_a_crlf_stream() {
    let bytes = "\u{feff}data: é😀\r\n\r\n: ping\r\rdata: a\r\ndata: b\r\n\r\n".as_bytes();
    let whole = decode_split(bytes, &[]);
    assert_eq!(whole.len(), 2);
    assert_eq!(whole[0].data, "é😀");
    assert_eq!(whole[1].data, "a\nb");
    for first in 0..=bytes.len() {
        for second in first..=bytes.len() {
            assert_eq!(
                decode_split(bytes, &[first, second]),
                whole,
                "cuts at {first} and {second}"
            );
        }
    }
}
