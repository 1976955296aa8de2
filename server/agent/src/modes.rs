//! The permission modes as shown to people.

use tandem_protocol::{ModeId, ModeInfo, SessionModes};

/// Every mode with its name and description.
pub fn mode_infos() -> Vec<ModeInfo> {
    ModeId::ALL
        .into_iter()
        .map(|id| {
            let (name, description) = match id {
                ModeId::Default => ("Default", "Ask before every edit and every command that is not read-only"),
                ModeId::AutoEdit => ("Auto-edit", "Edits apply without asking; commands still ask"),
                ModeId::Plan => ("Plan", "Read-only: edits and commands are blocked while the agent plans"),
                ModeId::Yolo => ("Yolo", "Nothing asks (destructive commands are still refused)"),
            };
            ModeInfo { id, name: name.to_owned(), description: description.to_owned() }
        })
        .collect()
}

/// The modes of a session whose current mode is `current`.
pub fn modes_of(current: ModeId) -> SessionModes {
    SessionModes { current, available: mode_infos() }
}
