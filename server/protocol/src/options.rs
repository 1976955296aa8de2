//! A session's settings the person can change: the mode and the model, as ACP's session config
//! options (`select` kind), listed by `tandem/session/configOptions` and changed by
//! `tandem/session/setConfigOption`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One setting of a session, with its choices (ACP's `SessionConfigOption`, `select` kind).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOption {
    /// Always `select`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `mode` or `model`.
    pub id: String,
    /// Its name for people.
    pub name: String,
    /// What it changes.
    pub description: String,
    /// `mode` or `model` (ACP's categories, which clients use to place the control).
    pub category: String,
    /// The choice in force.
    pub current_value: String,
    /// The choices.
    pub options: Vec<ConfigChoice>,
}

/// A choice of a [`ConfigOption`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigChoice {
    /// What to send as `value`.
    pub value: String,
    /// Its name for people.
    pub name: String,
    /// More about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `tandem/session/configOptions` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOptionsParams {
    /// Session.
    pub session_id: String,
}

/// `tandem/session/setConfigOption` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetConfigOptionParams {
    /// Session.
    pub session_id: String,
    /// `mode` or `model`.
    pub config_id: String,
    /// One of the option's choices (a model the provider does not list is accepted too: some
    /// providers list only part of what they serve).
    pub value: String,
}

/// `tandem/session/configOptions` and `tandem/session/setConfigOption` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOptionsResult {
    /// The session's settings, the mode first.
    pub config_options: Vec<ConfigOption>,
    /// Why the provider's model list could not be read (the model choices are then only the
    /// configured model and the session's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models_error: Option<String>,
}
