//! An image an MCP tool returned, checked before a model is sent it: a kind models take (PNG,
//! JPEG, GIF, WebP), base64 that decodes, bytes that are that kind of image, and a bounded
//! size. What passes is kept (re-encoded, so the log holds one canonical form) in the result's
//! metadata, which the log's fold turns into the history's images; what does not is a
//! placeholder line saying why (docs/configuration.md §MCP servers, images).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use seedpod_protocol::{ToolAttachment, thousands};

/// The largest image (decoded) a model is sent; providers refuse or scale down larger ones,
/// and every later request of the segment carries it.
pub const MAX_IMAGE_BYTES: usize = 1024 * 1024;
/// The most image bytes (decoded) of one result passed on: one log entry, one event frame,
/// stays far below the frame limit.
pub const MAX_RESULT_IMAGE_BYTES: usize = 2 * 1024 * 1024;

/// The kinds of image passed on, and how each one's bytes begin.
const KINDS: [(&str, &[u8]); 4] = [
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF8"),
    ("image/webp", b"RIFF"),
];

/// Checks images in order, counting what one result has passed on so far.
#[derive(Debug, Default)]
pub struct Images {
    passed: usize,
}

impl Images {
    /// The attachment for image `data` (base64) that the server says is `mime_type`.
    pub fn attach(&mut self, data: &str, mime_type: String) -> ToolAttachment {
        let claimed = base64_len(data);
        match self.check(data, &mime_type) {
            Ok(bytes) => ToolAttachment::Image {
                mime_type,
                bytes: bytes.len() as u64,
                data: Some(STANDARD.encode(&bytes)),
                left_out: None,
            },
            Err(why) => ToolAttachment::Image {
                mime_type: seedpod_protocol::printable_line(&mime_type)
                    .chars()
                    .take(64)
                    .collect(),
                bytes: claimed,
                data: None,
                left_out: Some(why),
            },
        }
    }

    fn check(&mut self, data: &str, mime_type: &str) -> Result<Vec<u8>, String> {
        let Some((_, magic)) = KINDS.iter().find(|(kind, _)| *kind == mime_type) else {
            return Err("models are sent PNG, JPEG, GIF and WebP images only".into());
        };
        // Decoding more than the limit is not needed to know it is too large.
        let claimed = base64_len(data) as usize;
        if claimed > MAX_IMAGE_BYTES {
            return Err(format!(
                "larger than {} bytes",
                thousands(MAX_IMAGE_BYTES as u64)
            ));
        }
        if self.passed + claimed > MAX_RESULT_IMAGE_BYTES {
            return Err(format!(
                "this result's images passed on already come to {} bytes of at most {}",
                thousands(self.passed as u64),
                thousands(MAX_RESULT_IMAGE_BYTES as u64)
            ));
        }
        let bytes = STANDARD
            .decode(data.trim())
            .map_err(|_| "its data is not valid base64".to_owned())?;
        let is_kind = bytes.starts_with(magic)
            && (mime_type != "image/webp" || bytes.get(8..12) == Some(b"WEBP"));
        if !is_kind {
            return Err(format!("its bytes are not a {mime_type} image"));
        }
        self.passed += bytes.len();
        Ok(bytes)
    }
}

/// The decoded size of base64 `data` (without decoding it).
pub fn base64_len(data: &str) -> u64 {
    let body = data.trim().trim_end_matches('=');
    (body.len() as u64 * 3) / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn passed(attachment: &ToolAttachment) -> Result<(&str, u64), &str> {
        match attachment {
            ToolAttachment::Image {
                data: Some(data),
                bytes,
                left_out: None,
                ..
            } => Ok((data.as_str(), *bytes)),
            ToolAttachment::Image {
                left_out: Some(why),
                data: None,
                ..
            } => Err(why.as_str()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_image_of_an_allowed_kind_passes_re_encoded() {
        let mut images = Images::default();
        // With a trailing newline, as some servers send it: kept in one canonical form.
        let loose = format!("{}\n", STANDARD.encode(PNG));
        let attachment = images.attach(&loose, "image/png".into());
        assert_eq!(passed(&attachment), Ok((STANDARD.encode(PNG).as_str(), 16)));
        let webp = b"RIFF\0\0\0\0WEBPVP8 ";
        assert!(passed(&images.attach(&STANDARD.encode(webp), "image/webp".into())).is_ok());
    }

    /// What a hostile or careless server may send, and what the model reads instead.
    #[test]
    fn what_is_not_a_bounded_image_of_its_kind_is_left_out_with_a_reason() {
        let huge = STANDARD.encode(vec![0u8; MAX_IMAGE_BYTES + 1]);
        let cases: [(String, &str, &str); 6] = [
            (
                STANDARD.encode(PNG),
                "image/svg+xml",
                "PNG, JPEG, GIF and WebP",
            ),
            (STANDARD.encode(PNG), "image/jpeg", "not a image/jpeg image"),
            ("not base64 at all!".into(), "image/png", "not valid base64"),
            (
                STANDARD.encode(b"RIFF\0\0\0\0WAVE"),
                "image/webp",
                "not a image/webp",
            ),
            (huge, "image/png", "larger than 1,048,576 bytes"),
            (
                STANDARD.encode(b"<script>"),
                "image/gif",
                "not a image/gif image",
            ),
        ];
        for (data, mime, why) in cases {
            let attachment = Images::default().attach(&data, mime.into());
            let reason = passed(&attachment).expect_err(mime);
            assert!(reason.contains(why), "{mime}: {reason}");
            assert!(
                attachment.placeholder().contains("not passed on"),
                "{}",
                attachment.placeholder()
            );
        }
    }

    #[test]
    fn one_results_images_are_bounded_together() {
        let mut images = Images::default();
        let mut big = PNG.to_vec();
        big.resize(MAX_IMAGE_BYTES, 0);
        let data = STANDARD.encode(&big);
        assert!(passed(&images.attach(&data, "image/png".into())).is_ok());
        assert!(passed(&images.attach(&data, "image/png".into())).is_ok());
        let third = images.attach(&data, "image/png".into());
        assert!(
            passed(&third).unwrap_err().contains("already come to"),
            "{third:?}"
        );
    }
}
