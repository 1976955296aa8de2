//! The editor's prompt to trust a folder: when the workspace's own settings were ignored
//! because the folder is not trusted, the first prompt of the process asks the person, through
//! the editor's permission request, whether to trust it. Trusting adds the folder to the
//! person's list (as `tandem trust` does); its provider settings apply from that turn on.

use tandem_protocol::{
    ContentBlock, PermissionOption, PermissionOptionKind, PermissionOutcome, RequestPermissionParams, SessionUpdate,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};

use crate::env::Env;

/// The id of the trust question's tool call card.
pub const TRUST_CARD: &str = "tandem-trust-folder";
const CARD: &str = TRUST_CARD;

/// Asks once per process, before the first turn of `session_id`, when settings were ignored.
/// Whether the person trusted the folder (its settings apply from this turn on).
pub(crate) async fn ask_once(env: &Env, session_id: &str) -> bool {
    if env.config.untrusted_settings.is_empty() || env.trust_asked.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return false;
    }
    let root = env.workspace.root().to_path_buf();
    let title = format!("Trust the settings of {}?", root.display());
    let text = format!(
        "This folder is not trusted, so these settings from its own configuration were ignored: {}.\n\nTrust it only if you trust the repository: its settings can start programs and change what runs without asking. (Same as `tandem trust` in the folder.)",
        env.config.untrusted_settings.join(", ")
    );
    let content = vec![ToolCallContent::Content { content: ContentBlock::text(text) }];
    let card = ToolCall {
        tool_call_id: CARD.to_owned(),
        title: title.clone(),
        kind: ToolKind::Other,
        status: ToolCallStatus::Pending,
        content: content.clone(),
        locations: Vec::new(),
        raw_input: None,
        tool_name: None,
    };
    env.client.update(session_id, SessionUpdate::ToolCall(card)).await;
    let params = RequestPermissionParams {
        session_id: session_id.to_owned(),
        tool_call: ToolCallUpdate {
            tool_call_id: CARD.to_owned(),
            title: Some(title),
            kind: Some(ToolKind::Other),
            status: Some(ToolCallStatus::Pending),
            content: Some(content),
            ..Default::default()
        },
        options: vec![
            PermissionOption {
                option_id: "allow_always".into(),
                name: "Trust this folder".into(),
                kind: PermissionOptionKind::AllowAlways,
            },
            PermissionOption {
                option_id: "reject_once".into(),
                name: "Not now".into(),
                kind: PermissionOptionKind::RejectOnce,
            },
        ],
        diagnostics: None,
    };
    let trusted = matches!(
        env.client.request_permission(params).await,
        Ok(result) if matches!(&result.outcome, PermissionOutcome::Selected { option_id, .. } if option_id == "allow_always")
    );
    let (status, said) = if trusted {
        match tandem_tool_api::trust::user_config_dir().map(|dir| tandem_tool_api::trust::grant_in(&dir, &root)) {
            Some(Ok(list)) => (
                ToolCallStatus::Completed,
                format!("Trusted {} (kept in {}). Its settings apply from this request on.", root.display(), list.display()),
            ),
            Some(Err(err)) => (ToolCallStatus::Failed, format!("Could not record the trust: {err}. Run `tandem trust` in the folder.")),
            None => (ToolCallStatus::Failed, "Neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep the list. Set TANDEM_TRUST_WORKSPACE=1 instead.".to_owned()),
        }
    } else {
        (ToolCallStatus::Failed, "Not trusted: the folder's privilege-raising settings stay ignored.".to_owned())
    };
    let done = ToolCallUpdate {
        tool_call_id: CARD.to_owned(),
        status: Some(status),
        content: Some(vec![ToolCallContent::Content { content: ContentBlock::text(said) }]),
        ..Default::default()
    };
    env.client.update(session_id, SessionUpdate::ToolCallUpdate(done)).await;
    trusted && status == ToolCallStatus::Completed
}
