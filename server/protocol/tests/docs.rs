//! `docs/protocol.md` documents the whole protocol: every method constant of
//! `tandem_protocol::methods` has a section, every type of the checked-in JSON Schema is named,
//! and every JSON example parses.

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// The values of the `pub const` strings in `pub mod methods { … }` of the crate's source: read
/// from the source so that a constant added there is checked without being listed here.
fn method_constants() -> Vec<String> {
    let source = read("src/lib.rs");
    let start = source.find("pub mod methods {").unwrap_or_else(|| panic!("no `pub mod methods` in src/lib.rs"));
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap_or(body.len())];
    body.lines()
        .filter(|line| line.trim_start().starts_with("pub const"))
        .filter_map(|line| line.split('"').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn every_method_has_a_section_in_docs_protocol_md() {
    let docs = read("../../docs/protocol.md");
    let methods = method_constants();
    assert!(methods.len() >= 12, "too few method constants found: {methods:?}");
    // The constants are what the code uses: the ones found must be the crate's.
    assert!(methods.contains(&tandem_protocol::methods::TOOLS_CALL.to_owned()), "{methods:?}");
    let headings: Vec<&str> = docs.lines().filter(|l| l.starts_with('#')).collect();
    let missing: Vec<&String> =
        methods.iter().filter(|m| !headings.iter().any(|h| h.contains(&format!("`{m}`")))).collect();
    assert!(missing.is_empty(), "methods without a heading in docs/protocol.md: {missing:?}");
    // And each has a JSON example that names it.
    let examples = json_examples(&docs);
    let unshown: Vec<&String> =
        methods.iter().filter(|m| !examples.iter().any(|e| e["method"] == m.as_str())).collect();
    assert!(unshown.is_empty(), "methods without a JSON example in docs/protocol.md: {unshown:?}");
}

#[test]
fn every_schema_type_is_named_in_docs_protocol_md() {
    let docs = read("../../docs/protocol.md");
    let schema: serde_json::Value = serde_json::from_str(&read("schema/protocol.schema.json"))
        .unwrap_or_else(|err| panic!("the schema is not JSON: {err}"));
    let types: Vec<&String> = schema["$defs"].as_object().map(|defs| defs.keys().collect()).unwrap_or_default();
    assert!(types.len() >= 40, "too few types in the schema: {types:?}");
    let missing: Vec<&&String> = types.iter().filter(|t| !docs.contains(&format!("`{t}`"))).collect();
    assert!(missing.is_empty(), "schema types not named in docs/protocol.md: {missing:?}");
}

#[test]
fn every_json_example_in_docs_protocol_md_parses() {
    let docs = read("../../docs/protocol.md");
    let count = json_examples(&docs).len();
    let blocks = docs.matches("```json").count();
    assert_eq!(count, blocks, "some ```json blocks of docs/protocol.md are not valid JSON (see the panic above)");
    assert!(count > 20, "{count} examples");
}

/// Every ```json block of `docs`, parsed (a block that does not parse fails the test).
fn json_examples(docs: &str) -> Vec<serde_json::Value> {
    docs.split("```json\n")
        .skip(1)
        .map(|rest| {
            let block = &rest[..rest.find("```").unwrap_or(rest.len())];
            serde_json::from_str(block).unwrap_or_else(|err| panic!("invalid JSON example ({err}):\n{block}"))
        })
        .collect()
}
