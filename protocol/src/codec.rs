//! Encoding messages to JSON text and decoding requests from it; how text becomes frames on
//! the wire is `frames.rs`.

use serde::Serialize;

use crate::ids::RequestId;
use crate::message::{ErrorCode, Method, Request};

/// Serialise one frame (without the trailing newline). Our types contain no maps with
/// non-string keys and no non-finite floats, so this cannot fail for them.
pub fn encode<T: Serialize>(msg: &T) -> String {
    match serde_json::to_string(msg) {
        Ok(line) => line,
        Err(err) => {
            // Unreachable for protocol types; keep the connection alive with a typed error.
            serde_json::json!({
                "type": "error",
                "code": "internal",
                "message": format!("could not encode a frame: {err}"),
            })
            .to_string()
        }
    }
}

/// Why a client frame could not be turned into a `Request`; carries the id when one was readable
/// so the error reply can be correlated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct FrameError {
    pub id: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
}

/// Decode one client line. Unknown methods and bad parameters are `invalid_request`; text that is
/// not a JSON object is `malformed_frame`.
pub fn decode_request(line: &str) -> Result<Request, FrameError> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|err| FrameError {
        id: None,
        code: ErrorCode::MalformedFrame,
        message: format!("frame is not valid JSON ({err}); send one JSON object per line"),
    })?;
    let Some(object) = value.as_object() else {
        return Err(FrameError {
            id: None,
            code: ErrorCode::MalformedFrame,
            message: "frame must be a JSON object with a \"method\" field".into(),
        });
    };
    let id = object
        .get("id")
        .and_then(serde_json::Value::as_u64)
        .map(RequestId::new);
    let method_name = object
        .get("method")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let Some(method_name) = method_name else {
        return Err(FrameError {
            id,
            code: ErrorCode::InvalidRequest,
            message: "frame has no \"method\" string".into(),
        });
    };
    let request: Request = serde_json::from_value(value).map_err(|err| FrameError {
        id,
        code: ErrorCode::InvalidRequest,
        message: format!("bad parameters for method \"{method_name}\": {err}"),
    })?;
    if request.method == Method::Unknown {
        return Err(FrameError {
            id,
            code: ErrorCode::InvalidRequest,
            message: format!("unknown method \"{method_name}\""),
        });
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_notify_with_default_wake() {
        let req = decode_request(r#"{"id":3,"method":"notify","message":"hi"}"#).unwrap();
        assert_eq!(req.id, Some(RequestId::new(3)));
        assert_eq!(
            req.method,
            Method::Notify {
                message: "hi".into(),
                wake: true
            }
        );
    }

    #[test]
    fn unknown_method_is_invalid_request_with_id() {
        let err = decode_request(r#"{"id":9,"method":"fly"}"#).unwrap_err();
        assert_eq!(err.id, Some(RequestId::new(9)));
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(err.message.contains("fly"), "{}", err.message);
    }

    #[test]
    fn garbage_is_malformed() {
        let err = decode_request("\u{1}\u{2}not json").unwrap_err();
        assert_eq!(err.code, ErrorCode::MalformedFrame);
        let err = decode_request("[1,2]").unwrap_err();
        assert_eq!(err.code, ErrorCode::MalformedFrame);
    }

    #[test]
    fn bad_parameters_are_invalid_request() {
        let err = decode_request(r#"{"id":1,"method":"notify","message":5}"#).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert_eq!(err.id, Some(RequestId::new(1)));
    }
}
