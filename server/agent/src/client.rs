//! The front door as the agent sees it.

use async_trait::async_trait;
use tandem_protocol::{AskUserParams, AskUserResult, RequestPermissionParams, RequestPermissionResult, SessionUpdate};

/// Why the client could not answer a request of the agent. The message says it to the model
/// and the person; the agent treats the request as unanswered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The client does not implement the method.
    #[error("the client does not implement {0}")]
    NotImplemented(String),
    /// The request reached the client and failed there.
    #[error("{method} failed: {message}")]
    Failed {
        /// The method.
        method: String,
        /// What the client said.
        message: String,
    },
    /// Nobody can answer here (no terminal, a question the client cannot show).
    #[error("{0}")]
    Unavailable(String),
    /// The client's answer does not say what was decided.
    #[error("{0}")]
    InvalidAnswer(String),
}

/// Where a session's updates go and who answers its permission requests.
#[async_trait]
pub trait SessionClient: Send + Sync {
    /// Sends one update (in order: the agent awaits each before the next).
    async fn update(&self, session_id: &str, update: SessionUpdate);
    /// Asks the person. `Err` when the client cannot ask (no such method, disconnected); the
    /// agent then treats the request as rejected and says why.
    async fn request_permission(&self, params: RequestPermissionParams)
    -> Result<RequestPermissionResult, ClientError>;
    /// Asks the person questions. `Err` when the client cannot (the tool then says so).
    async fn ask_user(&self, params: AskUserParams) -> Result<AskUserResult, ClientError> {
        let _ = params;
        Err(ClientError::Unavailable("this client cannot ask questions".to_owned()))
    }
}
