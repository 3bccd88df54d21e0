//! A tool's input schema as providers accept it (docs/configuration.md §MCP servers, "Tool
//! schemas"). Servers write schemas providers refuse, and one refused schema makes the provider
//! refuse the whole request — every turn of the pod. So each tool's schema is normalised once,
//! when the server lists it, before it can be offered in a segment (`segment_start.tools`
//! stores the result, so replay sends the same bytes); a schema that cannot be made acceptable
//! leaves its tool out, and the server's note and an alert say why.
//!
//! What providers refuse (OpenAI's function `parameters`, strict or not, and Anthropic's
//! `input_schema`):
//! - a root that is not `type: object` (both); a root without `properties` (some
//!   OpenAI-compatible servers);
//! - `anyOf`, `oneOf`, `allOf`, `enum` or `not` at the root (OpenAI refuses all five; Anthropic
//!   the first three);
//! - an `array` without `items` anywhere (OpenAI: "array schema missing items");
//! - `properties` that is not an object, `required` that is not a list of names, a `type`
//!   that is not a JSON Schema type.
//!
//! Everything else is kept as the server wrote it. A schema that was already acceptable comes
//! out unchanged, byte for byte, so no existing segment's tools change.

use serde_json::{Map, Value};

/// Deeper than this, a schema is refused rather than walked (a server decides its depth).
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// Root keywords providers refuse; dropped, the rest of the schema kept.
const ROOT_REFUSED: [&str; 5] = ["anyOf", "oneOf", "allOf", "enum", "not"];

/// JSON Schema's types.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Keywords whose value is one subschema.
const ONE_SCHEMA: [&str; 8] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAPS: [&str; 4] = ["properties", "$defs", "definitions", "patternProperties"];

/// `schema`, changed as little as providers need; and what was changed, for the log.
/// `Err` says why no provider would take it.
pub fn normalise(schema: Map<String, Value>) -> Result<(Map<String, Value>, Vec<String>), String> {
    let mut schema = schema;
    let mut changes = Vec::new();
    match schema.get("type") {
        None => {
            schema.insert("type".into(), "object".into());
        }
        Some(Value::String(kind)) if kind == "object" => {}
        // `["object", "null"]`: an object it is.
        Some(Value::Array(kinds)) if kinds.iter().any(|k| k == "object") => {
            schema.insert("type".into(), "object".into());
            changes.push("root type set to object".to_owned());
        }
        Some(other) => {
            return Err(format!(
                "its input schema is of type {other}, and providers take only an object"
            ));
        }
    }
    if !schema.contains_key("properties") {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    for keyword in ROOT_REFUSED {
        if schema.remove(keyword).is_some() {
            changes.push(format!("`{keyword}` at the root dropped"));
        }
    }
    let mut root = Value::Object(schema);
    walk(&mut root, "", 0, &mut changes)?;
    match root {
        Value::Object(map) => Ok((map, changes)),
        _ => Err("its input schema is not an object".to_owned()),
    }
}

/// Fix `node` (a subschema at `path`) and everything under it.
fn walk(
    node: &mut Value,
    path: &str,
    depth: usize,
    changes: &mut Vec<String>,
) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!(
            "its input schema is nested deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    let map = match node {
        Value::Object(map) => map,
        // `true` and `false` are schemas too.
        Value::Bool(_) => return Ok(()),
        other => {
            return Err(format!(
                "its input schema has {other} where a schema belongs (at {})",
                shown(path)
            ));
        }
    };
    fix_type(map, path, changes);
    if let Some(required) = map.get("required")
        && !required
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string))
    {
        map.remove("required");
        changes.push(format!(
            "`required` that is not a list of names dropped at {}",
            shown(path)
        ));
    }
    let is_array = match map.get("type") {
        Some(Value::String(kind)) => kind == "array",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "array"),
        _ => false,
    };
    if is_array && !map.contains_key("items") {
        map.insert("items".into(), Value::Object(Map::new()));
        changes.push(format!("`items` added to the array at {}", shown(path)));
    }
    for keyword in ONE_SCHEMA {
        // A list of `items` (the tuple form of older drafts) is a list of schemas.
        match map.get_mut(keyword) {
            Some(Value::Array(list)) if keyword == "items" => {
                for (i, sub) in list.iter_mut().enumerate() {
                    walk(sub, &format!("{path}/items/{i}"), depth + 1, changes)?;
                }
            }
            Some(sub) => walk(sub, &format!("{path}/{keyword}"), depth + 1, changes)?,
            None => {}
        }
    }
    for keyword in SCHEMA_LISTS {
        match map.get_mut(keyword) {
            Some(Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    walk(sub, &format!("{path}/{keyword}/{i}"), depth + 1, changes)?;
                }
            }
            Some(_) => {
                return Err(format!(
                    "its input schema's `{keyword}` at {} is not a list",
                    shown(path)
                ));
            }
            None => {}
        }
    }
    for keyword in SCHEMA_MAPS {
        match map.get_mut(keyword) {
            Some(Value::Object(subs)) => {
                for (name, sub) in subs.iter_mut() {
                    walk(sub, &format!("{path}/{keyword}/{name}"), depth + 1, changes)?;
                }
            }
            Some(_) => {
                return Err(format!(
                    "its input schema's `{keyword}` at {} is not an object",
                    shown(path)
                ));
            }
            None => {}
        }
    }
    Ok(())
}

/// Drop a `type` that names no JSON Schema type (`"int"`, `42`): providers refuse it, and
/// without it the value is simply unconstrained.
fn fix_type(map: &mut Map<String, Value>, path: &str, changes: &mut Vec<String>) {
    let valid = |kind: &Value| kind.as_str().is_some_and(|k| TYPES.contains(&k));
    let ok = match map.get("type") {
        None => true,
        Some(Value::Array(kinds)) => !kinds.is_empty() && kinds.iter().all(valid),
        Some(kind) => valid(kind),
    };
    if !ok {
        map.remove("type");
        changes.push(format!(
            "a `type` that is no JSON Schema type dropped at {}",
            shown(path)
        ));
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "the root" } else { path }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn an_acceptable_schema_comes_out_byte_for_byte() {
        let schemas = [
            json!({"type": "object", "properties": {}}),
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                    "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "n": {"type": ["integer", "null"], "minimum": 0}
                },
                "required": ["tags"],
                "additionalProperties": false,
                "$defs": {"x": {"type": "object", "properties": {}}},
                "$schema": "https://json-schema.org/draft/2020-12/schema"
            }),
        ];
        for schema in schemas {
            let before = serde_json::to_string(&schema).unwrap();
            let (after, changes) = normalise(map(schema)).unwrap();
            assert_eq!(serde_json::to_string(&after).unwrap(), before);
            assert!(changes.is_empty(), "{changes:?}");
        }
    }

    #[test]
    fn what_providers_refuse_is_fixed_and_the_rest_kept() {
        let (fixed, changes) = normalise(map(json!({
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
            "properties": {
                "tags": {"type": "array", "description": "Tags."},
                "deep": {"type": "object", "properties": {"list": {"type": ["array", "null"]}}},
                "odd": {"type": "int"},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "array"}]}
            },
            "required": "tags"
        })))
        .unwrap();
        assert_eq!(
            Value::Object(fixed),
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "description": "Tags.", "items": {}},
                    "deep": {"type": "object", "properties": {
                        "list": {"type": ["array", "null"], "items": {}}
                    }},
                    "odd": {},
                    "pair": {"type": "array", "items": [
                        {"type": "string"}, {"type": "array", "items": {}}
                    ]}
                }
            })
        );
        assert_eq!(changes.len(), 6, "{changes:?}");
        assert!(
            changes.iter().any(|c| c.contains("/properties/tags")),
            "{changes:?}"
        );
    }

    #[test]
    fn a_schema_no_provider_takes_is_refused_with_a_reason() {
        for (schema, says) in [
            (json!({"type": "array", "items": {}}), "of type \"array\""),
            (json!({"type": "object", "properties": 5}), "`properties`"),
            (json!({"properties": {"a": 3}}), "/properties/a"),
            (json!({"properties": {"a": {"anyOf": {}}}}), "`anyOf`"),
        ] {
            let err = normalise(map(schema)).unwrap_err();
            assert!(err.contains(says), "{err}");
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert!(normalise(map(deep)).unwrap_err().contains("deeper"));
    }
}
