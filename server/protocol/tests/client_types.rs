//! The editors' protocol types are generated from the checked-in JSON Schema
//! (`server/protocol/schema/protocol.schema.json`), never written by hand, so they cannot drift
//! from what the server sends: TypeScript for the VS Code extension
//! (`editors/vscode/src/protocol.generated.ts`) and LuaLS annotations for the Neovim plugin
//! (`editors/nvim/lua/tandem/types.lua`). This test is the generator: it fails when a checked-in
//! file differs from what the schema gives, and rewrites them with `UPDATE_EXPECT=1` (the same
//! switch that regenerates the schema itself).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

const REGENERATE: &str = "UPDATE_EXPECT=1 cargo test -p tandem-protocol";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema() -> Value {
    let path = repo_root().join("server/protocol/schema/protocol.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn defs(schema: &Value) -> &Map<String, Value> {
    schema.get("$defs").and_then(Value::as_object).unwrap_or_else(|| panic!("the schema has no $defs"))
}

fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"))
}

fn description(schema: &Value) -> Option<&str> {
    schema.get("description").and_then(Value::as_str)
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The `type` keyword as a list ("string", ["string", "null"]).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The schema's types, each as `each` writes it, joined by `sep`; `none` when it states none.
fn each_type(schema: &Value, (none, sep): (&str, &str), each: impl Fn(&str) -> String) -> String {
    let ts = types(schema);
    if ts.is_empty() {
        return none.to_owned();
    }
    ts.into_iter().map(each).collect::<Vec<_>>().join(sep)
}

fn variants(schema: &Value) -> Option<&Vec<Value>> {
    schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array)
}

/// Compares `text` with the checked-in file at `relative`, or writes it with UPDATE_EXPECT=1.
fn check(relative: &str, text: &str) {
    let path = repo_root().join(relative);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let on_disk =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{relative}: {e}; generate it with `{REGENERATE}`"));
    if on_disk != text {
        let first = on_disk.lines().zip(text.lines()).position(|(a, b)| a != b).map_or_else(
            || "(one is a prefix of the other)".to_owned(),
            |i| {
                format!(
                    "line {}:\n  checked in: {}\n  generated:  {}",
                    i + 1,
                    on_disk.lines().nth(i).unwrap_or_default(),
                    text.lines().nth(i).unwrap_or_default()
                )
            },
        );
        panic!(
            "{relative} is out of date with the protocol schema; regenerate it with `{REGENERATE}`.\nFirst difference at {first}"
        );
    }
}

// ---- TypeScript ----

fn ts_doc(out: &mut String, indent: &str, text: Option<&str>) {
    if let Some(text) = text {
        let lines: Vec<&str> = text.lines().collect();
        if let [line] = lines.as_slice() {
            let _ = writeln!(out, "{indent}/** {} */", line.replace("*/", "*\\/"));
        } else {
            let _ = writeln!(out, "{indent}/**");
            for line in lines {
                let _ = writeln!(out, "{indent} * {}", line.replace("*/", "*\\/"));
            }
            let _ = writeln!(out, "{indent} */");
        }
    }
}

fn ts_type(schema: &Value, indent: &str) -> String {
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    let own_object = schema.get("properties").is_some();
    if let Some(name) = ref_name(schema) {
        return if own_object { format!("{name} & {}", ts_object(schema, indent)) } else { name.to_owned() };
    }
    if let Some(variants) = variants(schema) {
        let parts: Vec<String> = variants
            .iter()
            .map(|v| {
                let t = ts_type(v, indent);
                if t.contains(" & ") || (variants.len() > 1 && t.contains(" | ") && !t.starts_with('{')) {
                    format!("({t})")
                } else {
                    t
                }
            })
            .collect();
        return parts.join(" | ");
    }
    each_type(schema, ("unknown", " | "), |t| match t {
        "string" => "string".to_owned(),
        "integer" | "number" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => {
            let item = schema.get("items").map_or_else(|| "unknown".to_owned(), |i| ts_type(i, indent));
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        "object" if own_object => ts_object(schema, indent),
        "object" => match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => "Record<string, never>".to_owned(),
            Some(Value::Object(_)) => {
                format!("Record<string, {}>", ts_type(&schema["additionalProperties"], indent))
            }
            _ => "Record<string, unknown>".to_owned(),
        },
        other => panic!("unsupported JSON Schema type {other:?}"),
    })
}

fn ts_object(schema: &Value, indent: &str) -> String {
    let required = required(schema);
    let inner = format!("{indent}  ");
    let mut out = String::from("{\n");
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        ts_doc(&mut out, &inner, description(property));
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        let _ = writeln!(out, "{inner}{name}{optional}: {};", ts_type(property, &inner));
    }
    out.push_str(indent);
    out.push('}');
    out
}

fn typescript(schema: &Value) -> String {
    let mut out = String::from(
        "// Generated from server/protocol/schema/protocol.schema.json by server/protocol/tests/client_types.rs.\n\
         // Do not edit: regenerate with `UPDATE_EXPECT=1 cargo test -p tandem-protocol`.\n",
    );
    for (name, def) in defs(schema) {
        out.push('\n');
        ts_doc(&mut out, "", description(def));
        match variants(def) {
            Some(variants) if def.get("properties").is_none() && ref_name(def).is_none() => {
                let _ = writeln!(out, "export type {name} =");
                for variant in variants {
                    ts_doc(&mut out, "  ", description(variant));
                    let t = ts_type(variant, "  ");
                    let t = if t.contains(" & ") { format!("({t})") } else { t };
                    let _ = writeln!(out, "  | {t}");
                }
                let last = out.pop();
                debug_assert_eq!(last, Some('\n'));
                out.push_str(";\n");
            }
            _ => {
                let _ = writeln!(out, "export type {name} = {};", ts_type(def, ""));
            }
        }
    }
    out
}

// ---- Lua (LuaLS annotations) ----

fn lua_type(schema: &Value) -> String {
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join("|");
    }
    if let Some(name) = ref_name(schema) {
        return format!("tandem.{name}");
    }
    if let Some(variants) = variants(schema) {
        return variants.iter().map(lua_type).collect::<Vec<_>>().join("|");
    }
    each_type(schema, ("any", "|"), |t| match t {
        "string" => "string".to_owned(),
        "integer" => "integer".to_owned(),
        "number" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "nil".to_owned(),
        "array" => {
            let item = schema.get("items").map_or_else(|| "any".to_owned(), lua_type);
            if item.contains('|') { format!("({item})[]") } else { format!("{item}[]") }
        }
        "object" => match schema.get("properties").and_then(Value::as_object) {
            Some(properties) => {
                let required = required(schema);
                let fields: Vec<String> = properties
                    .iter()
                    .map(|(name, p)| {
                        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
                        format!("{name}{optional}: {}", lua_type(p))
                    })
                    .collect();
                format!("{{ {} }}", fields.join(", "))
            }
            None => "table<string, any>".to_owned(),
        },
        other => panic!("unsupported JSON Schema type {other:?}"),
    })
}

fn lua_comment(out: &mut String, text: Option<&str>) {
    for line in text.unwrap_or_default().lines() {
        let _ = writeln!(out, "--- {line}");
    }
}

/// `---@class` with `---@field` lines for an object schema (its properties).
fn lua_class(out: &mut String, class: &str, parent: Option<String>, schema: &Value) {
    lua_comment(out, description(schema));
    match parent {
        Some(parent) => {
            let _ = writeln!(out, "---@class {class}: {parent}");
        }
        None => {
            let _ = writeln!(out, "---@class {class}");
        }
    }
    let required = required(schema);
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        let doc = description(property).map(|d| format!(" {}", d.replace('\n', " "))).unwrap_or_default();
        let _ = writeln!(out, "---@field {name}{optional} {}{doc}", lua_type(property));
    }
}

/// The discriminating `const` of a oneOf variant (`type = "text"` gives `text`).
fn variant_tag(variant: &Value) -> Option<String> {
    let properties = variant.get("properties")?.as_object()?;
    properties.values().find_map(|p| p.get("const").and_then(Value::as_str)).map(|tag| tag.replace(['-', '/'], "_"))
}

fn lua(schema: &Value) -> String {
    let defs = defs(schema);
    let mut out = String::from(
        "-- Generated from server/protocol/schema/protocol.schema.json by server/protocol/tests/client_types.rs.\n\
         -- Do not edit: regenerate with `UPDATE_EXPECT=1 cargo test -p tandem-protocol`.\n\
         -- Type annotations for lua-language-server only: nothing here runs.\n---@meta\n",
    );
    for (name, def) in defs {
        out.push('\n');
        let class = format!("tandem.{name}");
        let object_variants = variants(def).filter(|vs| vs.iter().all(|v| v.get("properties").is_some()));
        if let Some(variants) = object_variants {
            let mut members = Vec::new();
            for (i, variant) in variants.iter().enumerate() {
                let member = format!("{class}.{}", variant_tag(variant).unwrap_or_else(|| (i + 1).to_string()));
                lua_class(&mut out, &member, ref_name(variant).map(|r| format!("tandem.{r}")), variant);
                out.push('\n');
                members.push(member);
            }
            lua_comment(&mut out, description(def));
            let _ = writeln!(out, "---@alias {class} {}", members.join("|"));
        } else if def.get("properties").is_some() {
            lua_class(&mut out, &class, None, def);
        } else {
            lua_comment(&mut out, description(def));
            let _ = writeln!(out, "---@alias {class} {}", lua_type(def));
        }
    }
    out.push_str("\nreturn {}\n");
    out
}

#[test]
fn vscode_protocol_types_match_the_schema() {
    check("editors/vscode/src/protocol.generated.ts", &typescript(&schema()));
}

#[test]
fn neovim_protocol_annotations_match_the_schema() {
    check("editors/nvim/lua/tandem/types.lua", &lua(&schema()));
}
