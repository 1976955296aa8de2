//! The editor as the agent and the tools see it over LSP: session updates and questions
//! ([`LspSessionClient`]), edits and saves ([`LspEditor`]), and the language servers' progress.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ls_types::{self as lsp, OneOf, Uri};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tandem_agent::{ClientError, SessionClient};
use tandem_lsp_proxy::{ProgressEvent, ProgressKind};
use tandem_protocol::{
    AskUserParams, AskUserResult, DocumentSaveParams, DocumentSaveResult, RequestPermissionParams,
    RequestPermissionResult, SessionNotification, SessionUpdate, methods,
};
use tandem_text::{Position, PositionEncoding};
use tandem_tools::{DocumentEdit, EditorClient, EditorError};

use crate::rpc::{Connection, RpcError};

/// How long the editor gets to answer `workspace/applyEdit` or `tandem/document/save`.
const EDITOR_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the editor gets to create a progress token.
const PROGRESS_CREATE_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends a request of typed params and reads its typed result.
async fn call<R: DeserializeOwned>(conn: &Connection, method: &str, params: impl Serialize) -> Result<R, RpcError> {
    let params = serde_json::to_value(params).map_err(|err| RpcError::internal(format!("{method}: {err}")))?;
    let value = conn.request(method, params).await?;
    serde_json::from_value(value).map_err(|err| RpcError::internal(format!("the answer to {method}: {err}")))
}

/// Sends a notification of typed params.
fn notify(conn: &Connection, method: &str, params: impl Serialize) {
    match serde_json::to_value(params) {
        Ok(params) => conn.notify(method, params),
        Err(err) => tracing::error!("{method} could not be encoded: {err}"),
    }
}

/// Sessions as the editor sees them: notifications and permission requests.
pub struct LspSessionClient {
    conn: Arc<Connection>,
}

impl LspSessionClient {
    pub fn new(conn: Arc<Connection>) -> Self {
        Self { conn }
    }
}

fn unless_missing(method: &str, err: RpcError) -> ClientError {
    if err.code == RpcError::METHOD_NOT_FOUND {
        ClientError::NotImplemented(method.to_owned())
    } else {
        ClientError::Failed { method: method.to_owned(), message: err.message }
    }
}

#[async_trait]
impl SessionClient for LspSessionClient {
    /// Queued at once: an update leaves before anything the session queues after it.
    async fn update(&self, session_id: &str, update: SessionUpdate) {
        let notification = SessionNotification { session_id: session_id.to_owned(), update };
        notify(&self.conn, methods::SESSION_UPDATE, notification);
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> Result<RequestPermissionResult, ClientError> {
        let method = methods::SESSION_REQUEST_PERMISSION;
        call(&self.conn, method, params).await.map_err(|err| unless_missing(method, err))
    }

    async fn ask_user(&self, params: AskUserParams) -> Result<AskUserResult, ClientError> {
        let method = methods::SESSION_ASK_USER;
        call(&self.conn, method, params).await.map_err(|err| unless_missing(method, err))
    }
}

/// The editor as tools see it: `workspace/applyEdit` and `tandem/document/save`.
pub struct LspEditor {
    conn: Arc<Connection>,
    uris: Arc<Mutex<HashMap<PathBuf, Uri>>>,
    encoding: PositionEncoding,
    document_changes: bool,
}

fn lsp_position(p: Position) -> lsp::Position {
    lsp::Position { line: p.line, character: p.character }
}

impl LspEditor {
    pub fn new(
        conn: Arc<Connection>,
        uris: Arc<Mutex<HashMap<PathBuf, Uri>>>,
        encoding: PositionEncoding,
        document_changes: bool,
    ) -> Self {
        Self { conn, uris, encoding, document_changes }
    }

    fn uri(&self, path: &Path) -> Result<Uri, EditorError> {
        if let Some(uri) = self.uris.lock().get(path) {
            return Ok(uri.clone());
        }
        Uri::from_file_path(path).ok_or_else(|| EditorError::NotOpen(path.to_owned()))
    }

    /// One edit as a workspace edit, pinned to the document's version when the client can.
    fn workspace_edit(&self, edit: DocumentEdit) -> Result<lsp::WorkspaceEdit, EditorError> {
        let uri = self.uri(&edit.path)?;
        let text_edit = lsp::TextEdit {
            range: lsp::Range { start: lsp_position(edit.start), end: lsp_position(edit.end) },
            new_text: edit.new_text,
        };
        Ok(if self.document_changes {
            lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                    text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: Some(edit.version) },
                    edits: vec![OneOf::Left(text_edit)],
                }])),
                ..Default::default()
            }
        } else {
            lsp::WorkspaceEdit { changes: Some(HashMap::from([(uri, vec![text_edit])])), ..Default::default() }
        })
    }
}

/// The editor did not answer `method` in time.
fn timeout(method: &str) -> EditorError {
    EditorError::Timeout { peer: "editor", method: method.to_owned(), seconds: EDITOR_REQUEST_TIMEOUT.as_secs() }
}

/// The editor answered `method` with an error, or went away.
fn failed(method: &str, err: RpcError) -> EditorError {
    if err.is_disconnected() {
        EditorError::StreamClosed { method: method.to_owned() }
    } else {
        EditorError::Rejected { method: method.to_owned(), message: err.message }
    }
}

#[async_trait]
impl EditorClient for LspEditor {
    fn position_encoding(&self) -> PositionEncoding {
        self.encoding
    }

    async fn apply_edit(&self, edit: DocumentEdit) -> Result<bool, EditorError> {
        const METHOD: &str = "workspace/applyEdit";
        let params = lsp::ApplyWorkspaceEditParams { label: None, edit: self.workspace_edit(edit)? };
        let request = call::<lsp::ApplyWorkspaceEditResponse>(&self.conn, METHOD, params);
        match tokio::time::timeout(EDITOR_REQUEST_TIMEOUT, request).await {
            Err(_) => Err(timeout(METHOD)),
            Ok(Err(err)) => Err(failed(METHOD, err)),
            Ok(Ok(response)) => {
                if !response.applied {
                    tracing::warn!(reason = ?response.failure_reason, "editor refused applyEdit");
                }
                Ok(response.applied)
            }
        }
    }

    async fn save(&self, path: &Path) -> Result<bool, EditorError> {
        let params = DocumentSaveParams { uri: self.uri(path)?.as_str().to_owned() };
        let request = call::<DocumentSaveResult>(&self.conn, methods::DOCUMENT_SAVE, params);
        match tokio::time::timeout(EDITOR_REQUEST_TIMEOUT, request).await {
            Err(_) => Err(timeout(methods::DOCUMENT_SAVE)),
            // An editor without the method cannot save on request: we write the file instead.
            Ok(Err(err)) if err.code == RpcError::METHOD_NOT_FOUND => Ok(false),
            Ok(Err(err)) => Err(failed(methods::DOCUMENT_SAVE, err)),
            Ok(Ok(result)) => Ok(result.saved),
        }
    }
}

/// Forwards the language servers' start-up and work (indexing, checks) to the editor as
/// work-done progress: one token per piece of work, created with
/// `window/workDoneProgress/create`.
pub async fn forward_progress(conn: Arc<Connection>, mut rx: tokio::sync::mpsc::UnboundedReceiver<ProgressEvent>) {
    use lsp::{NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress};
    let mut open: HashMap<String, Vec<NumberOrString>> = HashMap::new();
    let mut next = 0u64;
    while let Some(event) = rx.recv().await {
        let stack = open.entry(event.server.clone()).or_default();
        let (token, value) = match event.kind {
            ProgressKind::Begin { title } => {
                next += 1;
                let token = NumberOrString::String(format!("tandem/lsp/{}/{next}", event.server));
                let params = lsp::WorkDoneProgressCreateParams { token: token.clone() };
                let create = call::<()>(&conn, "window/workDoneProgress/create", params);
                if !matches!(tokio::time::timeout(PROGRESS_CREATE_TIMEOUT, create).await, Ok(Ok(()))) {
                    continue;
                }
                stack.push(token.clone());
                (token, WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin { title, ..Default::default() }))
            }
            ProgressKind::Report { message } => {
                let Some(token) = stack.last().cloned() else { continue };
                let report = lsp::WorkDoneProgressReport { message: Some(message), ..Default::default() };
                (token, WorkDoneProgress::Report(report))
            }
            ProgressKind::End => {
                let Some(token) = stack.pop() else { continue };
                (token, WorkDoneProgress::End(lsp::WorkDoneProgressEnd { message: None }))
            }
        };
        notify(&conn, "$/progress", ProgressParams { token, value: ProgressParamsValue::WorkDone(value) });
    }
}
