//! A request's images and clips: `image_url` and `video_url` parts with data URLs after the
//! task's text.

use vernier_openai::ChatRequest;

/// The last message's text as the first of its content parts, then `media`.
pub(super) fn with_media_parts(request: &mut ChatRequest, media: Vec<serde_json::Value>) {
    let text = request
        .messages
        .last()
        .and_then(|message| message.content.as_ref())
        .map(vernier_openai::MessageContent::text)
        .unwrap_or_default();
    let mut parts = vec![serde_json::json!({"type": "text", "text": text})];
    parts.extend(media);
    if let Some(message) = request.messages.last_mut() {
        message.content = Some(vernier_openai::MessageContent::Parts(parts));
    }
}

fn image_part(png: &[u8]) -> serde_json::Value {
    serde_json::json!({
        "type": "image_url",
        "image_url": {"url": format!("data:image/png;base64,{}", base64(png))},
    })
}

fn text_part(text: &str) -> serde_json::Value {
    serde_json::json!({"type": "text", "text": text})
}

/// The task's images as `image_url` parts with `data:image/png;base64,` URLs after its text,
/// each made unique for this request ([`vernier_tasks::unique_images`]).
pub(super) fn attach_images(
    request: &mut ChatRequest,
    spec: &vernier_tasks::VisionSpec,
    nonce: u64,
) {
    let parts = vernier_tasks::unique_images(spec, nonce)
        .iter()
        .map(|png| image_part(png))
        .collect();
    with_media_parts(request, parts);
}

/// The task's clips, drawn and encoded afresh for this request
/// ([`vernier_tasks::unique_videos`]): `video_url` parts with `data:video/mp4;base64,` URLs, or
/// with `--video-as frames` each clip's sampled frames as `image_url` parts, each after a text
/// part that gives its time.
pub(super) fn video_parts(
    spec: &vernier_tasks::VideoSpec,
    nonce: u64,
    video_as: crate::journal::VideoAs,
) -> Result<Vec<serde_json::Value>, String> {
    let n_clips = spec.videos.len().max(1);
    let mut parts = Vec::new();
    match video_as {
        crate::journal::VideoAs::Frames => {
            for (k, frames) in vernier_tasks::unique_frames(spec, nonce)?
                .iter()
                .enumerate()
            {
                let name = if n_clips > 1 {
                    format!("Video {} of {n_clips}", k + 1)
                } else {
                    "The video".to_owned()
                };
                parts.push(text_part(&format!(
                    "{name} is given as {} frames, {} per second, each after its time.",
                    frames.len(),
                    vernier_tasks::FRAMES_PER_SECOND_SAMPLED
                )));
                for (at, png) in frames {
                    parts.push(text_part(&format!("Frame at {at:.1} s:")));
                    parts.push(image_part(png));
                }
            }
        }
        _ => {
            for mp4 in vernier_tasks::unique_videos(spec, nonce)? {
                parts.push(serde_json::json!({
                    "type": "video_url",
                    "video_url": {"url": format!("data:video/mp4;base64,{}", base64(&mp4))},
                }));
            }
        }
    }
    Ok(parts)
}

/// Standard base64 with padding (RFC 4648 §4).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
