//! A tool result sent as JSON: the moving conversion gives exactly what serializing it gives.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tandem_protocol::ToolResult;

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop::collection::vec(".{0,6}", 0..3).prop_map(|v| json!(v)),
    ]
}

proptest! {
    #[test]
    fn a_result_moved_into_json_is_the_result_serialized(
        title in ".{0,20}",
        output in "(?s).{0,200}",
        metadata in prop::collection::btree_map("[a-zA-Z]{1,8}", value(), 0..6),
        error in proptest::option::of(".{0,30}"),
        attachments in prop::collection::vec(value(), 0..3),
    ) {
        let result = ToolResult { title, output, metadata: metadata.into_iter().collect::<Map<String, Value>>(), error, attachments };
        let serialized = serde_json::to_value(&result).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(Value::from(result), serialized);
    }
}
