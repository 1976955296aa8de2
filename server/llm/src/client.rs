//! The provider client: one HTTP client per configuration, one streamed request per turn.

use tokio_util::sync::CancellationToken;

use crate::{ErrorKind, Event, LlmError, ProviderSettings, Request, Response};

/// A configured model provider.
#[derive(Clone, Debug)]
pub struct Client {
    settings: ProviderSettings,
}

impl Client {
    /// A client for `settings` (no network traffic yet).
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Ok(Self { settings })
    }

    /// The configuration this client uses.
    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    /// Runs one model turn: sends `request`, calls `on_event` for each streamed event, and
    /// returns the complete response. `cancel` closes the connection and returns
    /// [`ErrorKind::Cancelled`].
    pub async fn stream(
        &self,
        request: &Request,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, LlmError> {
        let _ = (request, cancel, on_event);
        Err(LlmError { kind: ErrorKind::Protocol, message: "provider client not built yet".into() })
    }
}
