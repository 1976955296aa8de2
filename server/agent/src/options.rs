//! A session's config options (ACP's `select` kind): the mode, and the model with the choices
//! the provider lists. The provider's list is read once per process and kept; a failure is
//! reported with the options and read again next time.

use tandem_llm::ModelInfo;
use tandem_protocol::{
    ConfigChoice, ConfigOption, ModeId, SessionConfigOptionsResult, SessionSetConfigOptionParams, SessionSetModeParams,
};

use crate::agent::Agent;
use crate::config::AgentError;
use crate::modes::mode_infos;

impl Agent {
    /// The provider's models: the kept list, else read now (and kept when it could be read).
    pub async fn provider_models(&self) -> Result<Vec<ModelInfo>, String> {
        let mut kept = self.models.lock().await;
        if let Some(models) = kept.as_ref() {
            return Ok(models.clone());
        }
        let models = self.env().llm.list_models().await.map_err(|err| err.message)?;
        *kept = Some(models.clone());
        Ok(models)
    }

    /// The provider's models if they were read already (never waits for the network).
    pub fn known_models(&self) -> Vec<ModelInfo> {
        self.models.try_lock().ok().and_then(|kept| kept.clone()).unwrap_or_default()
    }

    /// `tandem/session/configOptions`: the session's mode and model, the model's choices read
    /// from the provider (`fetch`) or only those already read.
    pub async fn config_options(
        &self,
        session_id: &str,
        fetch: bool,
    ) -> Result<SessionConfigOptionsResult, AgentError> {
        let (mode, model) = (self.mode(session_id)?, self.model(session_id)?);
        let (models, models_error) = if fetch {
            match self.provider_models().await {
                Ok(models) => (models, None),
                Err(err) => (Vec::new(), Some(err)),
            }
        } else {
            (self.known_models(), None)
        };
        let config_options = options(mode, &model, &self.default_model(), &models);
        Ok(SessionConfigOptionsResult { config_options, models_error })
    }

    /// `tandem/session/setConfigOption`: changes the mode (as `setMode` does) or the model.
    pub async fn set_config_option(
        &self,
        params: SessionSetConfigOptionParams,
    ) -> Result<SessionConfigOptionsResult, AgentError> {
        let session_id = params.session_id;
        match params.config_id.as_str() {
            "mode" => {
                let mode_id = ModeId::ALL.into_iter().find(|m| m.as_str() == params.value).ok_or_else(|| {
                    let known: Vec<&str> = ModeId::ALL.iter().map(|m| m.as_str()).collect();
                    AgentError::Invalid(format!("unknown mode `{}`: use one of {}", params.value, known.join(", ")))
                })?;
                self.set_mode(SessionSetModeParams { session_id: session_id.clone(), mode_id }).await?;
            }
            "model" => self.set_model(&session_id, &params.value)?,
            other => {
                return Err(AgentError::Invalid(format!("unknown config option `{other}`: use `mode` or `model`")));
            }
        }
        self.config_options(&session_id, false).await
    }
}

/// The mode and model options. The model's choices: the configured model, the session's, then
/// the provider's list (each once, in that order).
pub fn options(mode: ModeId, model: &str, default_model: &str, listed: &[ModelInfo]) -> Vec<ConfigOption> {
    let modes = mode_infos();
    let mut models: Vec<ConfigChoice> = Vec::new();
    let mut add = |value: &str, name: Option<&str>, description: Option<&str>| {
        if !models.iter().any(|m| m.value == value) {
            models.push(ConfigChoice {
                value: value.to_owned(),
                name: name.unwrap_or(value).to_owned(),
                description: description.map(str::to_owned),
            });
        }
    };
    add(default_model, None, Some("the configured model"));
    add(model, None, None);
    for listed in listed {
        add(&listed.id, listed.name.as_deref(), None);
    }
    vec![
        ConfigOption {
            kind: "select".into(),
            id: "mode".into(),
            name: "Mode".into(),
            description: "What the agent may do without asking".into(),
            category: "mode".into(),
            current_value: mode.as_str().to_owned(),
            options: modes
                .into_iter()
                .map(|m| ConfigChoice {
                    value: m.id.as_str().to_owned(),
                    name: m.name,
                    description: Some(m.description),
                })
                .collect(),
        },
        ConfigOption {
            kind: "select".into(),
            id: "model".into(),
            name: "Model".into(),
            description: "The model of the configured provider".into(),
            category: "model".into(),
            current_value: model.to_owned(),
            options: models,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_and_current_models_come_first_and_once() {
        let listed = [
            ModelInfo { id: "gpt-4.1".into(), name: None },
            ModelInfo { id: "gpt-4o".into(), name: Some("GPT-4o".into()) },
        ];
        let options = options(ModeId::Plan, "gpt-4o", "gpt-4.1", &listed);
        assert_eq!(options[0].current_value, "plan");
        let model = &options[1];
        assert_eq!(model.current_value, "gpt-4o");
        let values: Vec<&str> = model.options.iter().map(|c| c.value.as_str()).collect();
        assert_eq!(values, ["gpt-4.1", "gpt-4o"]);
        assert_eq!(model.options[1].name, "gpt-4o", "listed after the session's model, which already named it");
    }
}
