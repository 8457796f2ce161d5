//! Video files for the video tasks: frames encoded as H.264 (`OpenH264`, yuv420p, every frame
//! kept) in an MP4 container, and the same files decoded again to RGB frames for the proofs.

#![expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "frame geometry and counts: videos are at most a few hundred pixels a side and a few hundred frames"
)]

use std::io::Cursor;

use openh264::OpenH264API;
use openh264::Timestamp;
use openh264::decoder::Decoder;
use openh264::encoder::{Encoder, EncoderConfig, FrameRate, QpRange, RateControlMode, UsageType};
use openh264::formats::{RgbSliceU8, YUVBuffer, YUVSource as _};

use crate::canvas::Image;

/// A decoded video: its size, frame rate and frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Frames per second, as the container's track says (rounded).
    pub fps: u32,
    /// The frames, in display order.
    pub frames: Vec<Image>,
}

/// NAL unit types (ITU-T H.264 Table 7-1).
const NAL_SPS: u8 = 7;
const NAL_PPS: u8 = 8;

/// The NAL units of an Annex B stream, without their start codes.
fn split_annex_b(stream: &[u8]) -> Vec<&[u8]> {
    openh264::nal_units(stream)
        .map(|unit| {
            unit.strip_prefix(&[0, 0, 0, 1])
                .or_else(|| unit.strip_prefix(&[0, 0, 1]))
                .unwrap_or(unit)
        })
        .filter(|unit| !unit.is_empty())
        .collect()
}

/// Encodes `frames` (all one size, even sides) at `fps` as H.264 in MP4. Every frame becomes one
/// sample: the encoder skips none.
pub fn encode_mp4(frames: &[Image], fps: u32) -> Result<Vec<u8>, String> {
    let Some(first) = frames.first() else {
        return Err("a video needs at least one frame".to_owned());
    };
    let (width, height) = (first.width, first.height);
    if width % 2 != 0 || height % 2 != 0 {
        return Err(format!("{width}×{height}: yuv420p needs even sides"));
    }
    let config = EncoderConfig::new()
        .skip_frames(false)
        .usage_type(UsageType::ScreenContentRealTime)
        .rate_control_mode(RateControlMode::Off)
        .background_detection(false)
        .adaptive_quantization(false)
        .max_frame_rate(FrameRate::from_hz(fps as f32))
        .qp(QpRange::new(8, 20))
        .num_threads(1);
    let mut encoder = Encoder::with_api_config(OpenH264API::from_source(), config)
        .map_err(|error| format!("the H.264 encoder does not start: {error}"))?;
    let (mut sps, mut pps) = (None, None);
    let mut samples: Vec<(Vec<u8>, bool)> = Vec::with_capacity(frames.len());
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    for (index, frame) in frames.iter().enumerate() {
        if (frame.width, frame.height) != (width, height) {
            return Err(format!(
                "frame {index} is {}×{}, the video {width}×{height}",
                frame.width, frame.height
            ));
        }
        rgb.clear();
        rgb.extend(frame.pixels.iter().flatten());
        let yuv =
            YUVBuffer::from_rgb8_source(RgbSliceU8::new(&rgb, (width as usize, height as usize)));
        let at = Timestamp::from_millis(index as u64 * 1000 / u64::from(fps.max(1)));
        let stream = encoder
            .encode_at(&yuv, at)
            .map_err(|error| format!("frame {index} does not encode: {error}"))?
            .to_vec();
        let mut sample = Vec::with_capacity(stream.len() + 16);
        let mut sync = false;
        for unit in split_annex_b(&stream) {
            match unit[0] & 0x1f {
                NAL_SPS => sps = Some(unit.to_vec()),
                NAL_PPS => pps = Some(unit.to_vec()),
                kind => {
                    sync |= kind == 5;
                    let length = u32::try_from(unit.len())
                        .map_err(|_| format!("frame {index}: a NAL unit over 4 GiB"))?;
                    sample.extend_from_slice(&length.to_be_bytes());
                    sample.extend_from_slice(unit);
                }
            }
        }
        if sample.is_empty() {
            return Err(format!("frame {index}: the encoder gave no picture"));
        }
        samples.push((sample, sync));
    }
    let (Some(sps), Some(pps)) = (sps, pps) else {
        return Err("the encoder gave no SPS or PPS".to_owned());
    };
    mux(width, height, fps, &sps, &pps, samples)
}

fn yuv_dimensions_checked(width: u32, height: u32) -> Result<(u16, u16), String> {
    match (u16::try_from(width), u16::try_from(height)) {
        (Ok(w), Ok(h)) => Ok((w, h)),
        _ => Err(format!("{width}×{height} is too large for a video track")),
    }
}

fn mux(
    width: u32,
    height: u32,
    fps: u32,
    sps: &[u8],
    pps: &[u8],
    samples: Vec<(Vec<u8>, bool)>,
) -> Result<Vec<u8>, String> {
    let (w, h) = yuv_dimensions_checked(width, height)?;
    let fail = |error: mp4::Error| format!("the MP4 does not write: {error}");
    // One tick per frame: the track's timescale is the frame rate.
    let config = mp4::Mp4Config {
        major_brand: "isom".parse().map_err(fail)?,
        minor_version: 512,
        compatible_brands: vec![
            "isom".parse().map_err(fail)?,
            "iso2".parse().map_err(fail)?,
            "avc1".parse().map_err(fail)?,
            "mp41".parse().map_err(fail)?,
        ],
        timescale: 1000,
    };
    let mut writer = mp4::Mp4Writer::write_start(Cursor::new(Vec::new()), &config).map_err(fail)?;
    writer
        .add_track(&mp4::TrackConfig {
            track_type: mp4::TrackType::Video,
            timescale: fps.max(1),
            language: "und".to_owned(),
            media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                width: w,
                height: h,
                seq_param_set: sps.to_vec(),
                pic_param_set: pps.to_vec(),
            }),
        })
        .map_err(fail)?;
    for (index, (bytes, is_sync)) in samples.into_iter().enumerate() {
        writer
            .write_sample(
                1,
                &mp4::Mp4Sample {
                    start_time: index as u64,
                    duration: 1,
                    rendering_offset: 0,
                    is_sync,
                    bytes: bytes.into(),
                },
            )
            .map_err(fail)?;
    }
    writer.write_end().map_err(fail)?;
    Ok(writer.into_writer().into_inner())
}

/// Decodes an MP4 of one H.264 track back to RGB frames.
pub fn decode_mp4(bytes: &[u8]) -> Result<Decoded, String> {
    let fail = |error: mp4::Error| format!("the MP4 does not read: {error}");
    let mut reader =
        mp4::Mp4Reader::read_header(Cursor::new(bytes), bytes.len() as u64).map_err(fail)?;
    let (track_id, width, height, fps, n_samples, sps, pps) = {
        let Some(track) = reader
            .tracks()
            .values()
            .find(|track| track.track_type().ok() == Some(mp4::TrackType::Video))
        else {
            return Err("the MP4 has no video track".to_owned());
        };
        (
            track.track_id(),
            u32::from(track.width()),
            u32::from(track.height()),
            track.frame_rate().round() as u32,
            track.sample_count(),
            track.sequence_parameter_set().map_err(fail)?.to_vec(),
            track.picture_parameter_set().map_err(fail)?.to_vec(),
        )
    };
    let mut decoder = Decoder::with_api_config(
        OpenH264API::from_source(),
        openh264::decoder::DecoderConfig::new(),
    )
    .map_err(|error| format!("the H.264 decoder does not start: {error}"))?;
    let mut frames = Vec::with_capacity(n_samples as usize);
    let mut annex_b = Vec::new();
    for unit in [&sps, &pps] {
        annex_b.extend_from_slice(&[0, 0, 0, 1]);
        annex_b.extend_from_slice(unit);
    }
    for sample_id in 1..=n_samples {
        let Some(sample) = reader.read_sample(track_id, sample_id).map_err(fail)? else {
            return Err(format!("sample {sample_id} is missing"));
        };
        // AVCC (4-byte lengths) to Annex B (start codes).
        let mut rest: &[u8] = &sample.bytes;
        while rest.len() >= 4 {
            let length = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let Some(unit) = rest.get(4..4 + length) else {
                return Err(format!(
                    "sample {sample_id}: a NAL unit runs past its sample"
                ));
            };
            annex_b.extend_from_slice(&[0, 0, 0, 1]);
            annex_b.extend_from_slice(unit);
            rest = &rest[4 + length..];
        }
        let picture = decoder
            .decode(&annex_b)
            .map_err(|error| format!("sample {sample_id} does not decode: {error}"))?;
        annex_b.clear();
        if let Some(yuv) = picture {
            frames.push(to_image(&yuv));
        }
    }
    let rest = decoder
        .flush_remaining()
        .map_err(|error| format!("the decoder does not flush: {error}"))?;
    frames.extend(rest.iter().map(to_image));
    Ok(Decoded {
        width,
        height,
        fps,
        frames,
    })
}

fn to_image(yuv: &openh264::decoder::DecodedYUV<'_>) -> Image {
    let (w, h) = yuv.dimensions();
    let mut rgb = vec![0; w * h * 3];
    yuv.write_rgb8(&mut rgb);
    let mut image = Image::new(w as u32, h as u32);
    for (pixel, chunk) in image.pixels.iter_mut().zip(rgb.chunks_exact(3)) {
        *pixel = [chunk[0], chunk[1], chunk[2]];
    }
    image
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_encoding_and_decoding_in_count_size_and_colour() {
        let frames: Vec<Image> = (0..10)
            .map(|i| {
                let mut image = Image::new(64, 48);
                image.fill_rect(4 + i * 4, 10, 16, 16, [220, 40, 40]);
                image
            })
            .collect();
        let bytes = encode_mp4(&frames, 8).expect("encodes");
        assert_eq!(&bytes[4..8], b"ftyp");
        let decoded = decode_mp4(&bytes).expect("decodes");
        assert_eq!((decoded.width, decoded.height, decoded.fps), (64, 48, 8));
        assert_eq!(decoded.frames.len(), 10);
        // The square's middle keeps its colour within the codec's error.
        let [r, g, b] = decoded.frames[5].get(4 + 20 + 8, 18);
        assert!(r > 180 && g < 90 && b < 90, "{r} {g} {b}");
        assert!(encode_mp4(&[Image::new(63, 48)], 8).is_err());
    }
}
