//! Argument schemas (generated from the tools' argument structs) and validation of a call's
//! arguments against them, with precise errors and the coercions models commonly need.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The JSON Schema of a tool's argument struct, in the plain form function-calling APIs take:
/// an object schema with `properties` and `required`, no `$schema`, `title`, `format` or
/// `null` types (an optional argument is simply not required).
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft07();
    settings.inline_subschemas = true;
    let mut value = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut value {
        root.remove("$schema");
        root.remove("title");
        root.remove("definitions");
        root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    }
    simplify(&mut value);
    value
}

fn simplify(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("format");
            if map.get("default").is_some_and(Value::is_null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(list)) = map.get_mut("enum") {
                list.retain(|v| !v.is_null());
            }
            map.values_mut().for_each(simplify);
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// Arguments that passed validation.
#[derive(Debug)]
pub struct Validated {
    /// The arguments, with coercions applied and unknown properties removed.
    pub value: Value,
    /// Unknown properties that were dropped (non-strict tools only).
    pub ignored: Vec<String>,
}

/// Why arguments do not fit a tool's schema: what the model is told, naming the argument
/// (`` `edits[1].old_string`: missing required argument ``).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidArguments(pub String);

/// Validates `args` against `schema`. Coerces what models often get wrong but mean clearly:
/// numbers and booleans sent as strings, arrays and objects sent as JSON text. Unknown
/// properties are an error when `strict`, else dropped and listed.
pub fn validate_arguments(schema: &Value, args: Value, strict: bool) -> Result<Validated, InvalidArguments> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    let mut ignored = Vec::new();
    let value = check(schema, args, "", strict, &mut ignored)?;
    Ok(Validated { value, ignored })
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn matches_type(value: &Value, ty: &str) -> bool {
    match (ty, value) {
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        ("number", Value::Number(_)) => true,
        (ty, value) => type_name(value) == ty,
    }
}

fn coerce(value: &Value, ty: &str) -> Option<Value> {
    let Value::String(text) = value else { return None };
    let text = text.trim();
    match ty {
        "integer" => text.parse::<i64>().ok().map(Value::from),
        "number" => text.parse::<f64>().ok().and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)),
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "array" | "object" => serde_json::from_str::<Value>(text).ok().filter(|v| type_name(v) == ty),
        _ => None,
    }
}

fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 { format!("{}…", text.chars().take(60).collect::<String>()) } else { text }
}

fn at(path: &str) -> String {
    if path.is_empty() { "arguments".to_owned() } else { format!("`{path}`") }
}

fn check(
    schema: &Value,
    value: Value,
    path: &str,
    strict: bool,
    ignored: &mut Vec<String>,
) -> Result<Value, InvalidArguments> {
    let Value::Object(schema) = schema else { return Ok(value) };
    let mut value = value;

    if let Some(alternatives) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        let mut first_error = None;
        for alternative in alternatives {
            match check(alternative, value.clone(), path, strict, &mut Vec::new()) {
                Ok(ok) => {
                    value = ok;
                    first_error = None;
                    break;
                }
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        if first_error.is_some() {
            let allowed: Vec<String> = alternatives
                .iter()
                .filter_map(|a| a.get("const").or_else(|| a.get("enum")))
                .map(|v| v.to_string())
                .collect();
            return Err(InvalidArguments(if allowed.is_empty() {
                format!("{}: {} does not match any allowed form", at(path), show(&value))
            } else {
                format!("{}: {} is not one of {}", at(path), show(&value), allowed.join(", "))
            }));
        }
    }

    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| matches_type(&value, t)) {
            match types.iter().find_map(|t| coerce(&value, t)) {
                Some(coerced) => value = coerced,
                None => {
                    return Err(InvalidArguments(format!(
                        "{}: expected {}, got {} {}",
                        at(path),
                        types.join(" or "),
                        type_name(&value),
                        show(&value)
                    )));
                }
            }
        }
        // An integral float such as 10.0 for an integer argument: make it an integer.
        if types.contains(&"integer")
            && let Some(f) = value.as_f64().filter(|_| !value.is_i64() && !value.is_u64())
        {
            value = Value::from(f as i64);
        }
    }

    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(&value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(InvalidArguments(format!("{}: {} is not one of {}", at(path), show(&value), list.join(", "))));
    }
    if let Some(constant) = schema.get("const")
        && constant != &value
    {
        return Err(InvalidArguments(format!("{}: expected {constant}, got {}", at(path), show(&value))));
    }

    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(InvalidArguments(format!("{}: {n} is less than the minimum {min}", at(path))));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(InvalidArguments(format!("{}: {n} is more than the maximum {max}", at(path))));
        }
    }

    match value {
        Value::Object(object) => check_object(schema, object, path, strict, ignored).map(Value::Object),
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                return Err(InvalidArguments(format!(
                    "{}: needs at least {min} item(s), got {}",
                    at(path),
                    items.len()
                )));
            }
            let Some(item_schema) = schema.get("items") else { return Ok(Value::Array(items)) };
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| check(item_schema, item, &format!("{path}[{i}]"), strict, ignored))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        other => Ok(other),
    }
}

fn check_object(
    schema: &Map<String, Value>,
    mut object: Map<String, Value>,
    path: &str,
    strict: bool,
    ignored: &mut Vec<String>,
) -> Result<Map<String, Value>, InvalidArguments> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if object.get(key).is_none_or(Value::is_null) {
                return Err(InvalidArguments(format!("`{}`: missing required argument", join(key))));
            }
        }
    }
    // Optional arguments sent as null mean "not given".
    object.retain(|_, v| !v.is_null());
    let closed = schema.get("properties").is_some();
    let unknown: Vec<String> = object.keys().filter(|k| closed && !properties.contains_key(*k)).cloned().collect();
    if !unknown.is_empty() {
        if strict {
            let known: Vec<&String> = properties.keys().collect();
            return Err(InvalidArguments(format!(
                "unknown argument(s) {} at {}; allowed: {}",
                unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
                at(path),
                known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            )));
        }
        for key in unknown {
            object.remove(&key);
            ignored.push(join(&key));
        }
    }
    let mut out = Map::new();
    for (key, value) in object {
        let checked = match properties.get(&key) {
            Some(sub) => check(sub, value, &join(&key), strict, ignored)?,
            None => value,
        };
        out.insert(key, checked);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only the schema is used")]
    struct Args {
        /// The file.
        file_path: String,
        /// First line.
        offset: Option<u32>,
        flag: Option<bool>,
        edits: Option<Vec<Item>>,
        mode: Option<Mode>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only the schema is used")]
    struct Item {
        old_string: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Content,
        Count,
    }

    fn validate(args: Value, strict: bool) -> Result<Value, InvalidArguments> {
        validate_arguments(&schema_for::<Args>(), args, strict).map(|v| v.value)
    }

    #[test]
    fn schema_is_plain() {
        let schema = schema_for::<Args>();
        expect_test::expect![[r#"{"properties":{"edits":{"items":{"properties":{"old_string":{"type":"string"}},"required":["old_string"],"type":"object"},"type":"array"},"file_path":{"description":"The file.","type":"string"},"flag":{"type":"boolean"},"mode":{"enum":["content","count"],"type":"string"},"offset":{"description":"First line.","minimum":0,"type":"integer"}},"required":["file_path"],"type":"object"}"#]]
            .assert_eq(&schema.to_string());
    }

    #[test]
    fn errors_are_precise() {
        let cases = [
            json!({}),
            json!({"file_path": 3}),
            json!({"file_path": "a", "offset": "ten"}),
            json!({"file_path": "a", "offset": -1}),
            json!({"file_path": "a", "edits": [{"old_string": "x"}, {}]}),
            json!({"file_path": "a", "mode": "lines"}),
            json!({"file_path": "a", "bogus": 1}),
        ];
        let messages: Vec<String> =
            cases.into_iter().map(|c| validate(c, true).err().map(|e| e.0).unwrap_or_default()).collect();
        expect_test::expect![[r#"
            `file_path`: missing required argument
            `file_path`: expected string, got integer 3
            `offset`: expected integer, got string "ten"
            `offset`: -1 is less than the minimum 0
            `edits[1].old_string`: missing required argument
            `mode`: "lines" is not one of "content", "count"
            unknown argument(s) `bogus` at arguments; allowed: `edits`, `file_path`, `flag`, `mode`, `offset`"#]]
        .assert_eq(&messages.join("\n"));
    }

    #[test]
    fn coercions_and_lenience() {
        let value = validate(
            json!({"file_path": "a", "offset": "10", "flag": "true", "edits": "[{\"old_string\":\"x\"}]", "extra": 1, "mode": null}),
            false,
        );
        assert_eq!(value, Ok(json!({"file_path": "a", "offset": 10, "flag": true, "edits": [{"old_string": "x"}]})));
        assert_eq!(
            validate(json!({"file_path": "a", "offset": 5.0}), true),
            Ok(json!({"file_path": "a", "offset": 5}))
        );
        assert!(validate(json!({"file_path": "a", "offset": 5.5}), true).is_err());
    }
}
