//! The front door as the agent sees it.

use async_trait::async_trait;
use tandem_protocol::{AskUserParams, AskUserResult, RequestPermissionParams, RequestPermissionResult, SessionUpdate};

/// Where a session's updates go and who answers its permission requests.
#[async_trait]
pub trait SessionClient: Send + Sync {
    /// Sends one update (in order: the agent awaits each before the next).
    async fn update(&self, session_id: &str, update: SessionUpdate);
    /// Asks the person. `Err` when the client cannot ask (no such method, disconnected); the
    /// agent then treats the request as rejected and says why.
    async fn request_permission(&self, params: RequestPermissionParams) -> Result<RequestPermissionResult, String>;
    /// Asks the person questions. `Err` when the client cannot (the tool then says so).
    async fn ask_user(&self, params: AskUserParams) -> Result<AskUserResult, String> {
        let _ = params;
        Err("this client cannot ask questions".to_owned())
    }
}
