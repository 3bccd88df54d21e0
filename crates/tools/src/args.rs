//! Tool arguments: the JSON schema offered to the model is generated from the same struct the
//! arguments are parsed into, so the two cannot drift apart.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

use seedpod_engine::ToolOutput;

/// The argument schema for `A`, shaped for tool definitions.
///
/// Deterministic by construction: `serde_json` maps are sorted (the workspace never enables
/// `preserve_order`), and nothing here depends on time or hashing.
pub(crate) fn schema<A: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.meta_schema = None);
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<A>()
        .to_value();
    if let Some(object) = schema.as_object_mut() {
        // The Rust type's name tells the model nothing.
        object.remove("title");
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            properties.values_mut().for_each(simplify_property);
        }
    }
    schema
}

/// Per property: `Option<T>` fields come out as `"type": [T, "null"]`; an optional field is already expressed by
/// its absence from `required`, and some providers refuse type arrays. `format`s such as
/// `uint64` are Rust-specific and refused by some providers; `minimum` carries the useful part.
fn simplify_property(property: &mut Value) {
    let Some(object) = property.as_object_mut() else {
        return;
    };
    object.remove("format");
    // Doc comments arrive with their source line breaks; a description is one paragraph.
    if let Some(Value::String(description)) = object.get_mut("description") {
        *description = description.replace('\n', " ");
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [single] = non_null.as_slice() {
            object.insert("type".to_owned(), single.clone());
        }
    }
}

/// Parse a call's arguments into `A`. Wrong or missing fields become an error result that names
/// the problem and lists the expected fields, so the model can fix the call in one step.
pub(crate) fn parse<A: DeserializeOwned + JsonSchema>(
    tool: &str,
    arguments: &str,
) -> Result<A, ToolOutput> {
    serde_json::from_str(arguments).map_err(|err| {
        ToolOutput::error(format!(
            "invalid arguments for {tool}: {err}. Expected a JSON object with {}. Fix the \
             arguments and call {tool} again.",
            fields(&schema::<A>())
        ))
    })
}

/// "path (string, required), offset (integer, optional)" from a generated schema.
fn fields(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return "no fields".to_owned();
    };
    // Required fields first; within each group, the schema's (sorted) order.
    let mut listed: Vec<(bool, String)> = properties
        .iter()
        .map(|(name, property)| {
            let is_required = required.contains(&name.as_str());
            let kind = property["type"].as_str().unwrap_or("value");
            let need = if is_required { "required" } else { "optional" };
            (!is_required, format!("{name} ({kind}, {need})"))
        })
        .collect();
    listed.sort_by_key(|(optional, _)| *optional);
    let listed: Vec<String> = listed.into_iter().map(|(_, field)| field).collect();
    listed.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Test arguments.
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// Where.
        path: String,
        /// How many.
        limit: Option<u64>,
        #[serde(default)]
        all: bool,
    }

    #[test]
    fn the_schema_is_plain_and_documented() {
        let schema = schema::<Args>();
        assert_eq!(
            schema,
            serde_json::json!({
                "additionalProperties": false,
                "description": "Test arguments.",
                "properties": {
                    "all": {"default": false, "type": "boolean"},
                    "limit": {"description": "How many.", "minimum": 0, "type": "integer"},
                    "path": {"description": "Where.", "type": "string"}
                },
                "required": ["path"],
                "type": "object"
            })
        );
    }

    #[test]
    fn bad_arguments_name_the_problem_and_the_fields() {
        let missing = parse::<Args>("t", "{}").unwrap_err();
        assert!(missing.is_error);
        assert!(
            missing
                .content
                .starts_with("invalid arguments for t: missing field `path`")
        );
        assert!(
            missing.content.contains(
                "Expected a JSON object with path (string, required), all (boolean, optional), \
                 limit (integer, optional). Fix the arguments and call t again."
            ),
            "{}",
            missing.content
        );
        let wrong = parse::<Args>("t", r#"{"path": 3}"#).unwrap_err();
        assert!(
            wrong
                .content
                .contains("invalid type: integer `3`, expected a string")
        );
        let unknown = parse::<Args>("t", r#"{"path": "a", "lines": 3}"#).unwrap_err();
        assert!(
            unknown.content.contains("unknown field `lines`"),
            "{}",
            unknown.content
        );
        let null_is_absent = parse::<Args>("t", r#"{"path": "a", "limit": null}"#).unwrap();
        assert_eq!(null_is_absent.limit, None);
    }
}
