//! Previews of staged changes: each file's current text, then its staged text, handed to the
//! servers that serve it as new document versions, with the same freshness waits as after an
//! edit, all under one deadline; the other documents whose published diagnostics the change
//! alters come along. Files that reference what the change touches are opened in the servers
//! for the preview (see [`related`]), so that a caller the change breaks shows even when nobody
//! has it open. Ending a preview puts the servers back on the files' current text and closes
//! what it opened.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::lsp_types::{self as lsp, Url};
use tandem_text::{ContentHash, Rope};
use tandem_tool_api::intel::{Diagnostic, PreviewFile, PreviewReport, PreviewedFile, TextRange};
use tokio::time::Instant;

use super::{LspProxy, diagnostic, from_server, lock};
use serde_json::json;
use tandem_tool_api::binaries::Program;

use crate::catalog::{DiagnosticsMode, ServerSpec};
use crate::server::{Published, Server, ServerError, raw};

mod related;

/// How long a preview waits for the servers unless configured.
pub(super) const DEFAULT_WAIT: Duration = Duration::from_millis(1500);
/// How many referencing files a preview opens unless configured.
pub(super) const DEFAULT_FILES: usize = 20;
/// Quiet spell after the changed files' diagnostics, for other documents' to follow.
const OTHERS_QUIET: Duration = Duration::from_millis(150);
/// The same when the preview opened referencing files: their analysis follows the changed
/// files', and a loaded machine is slower.
const RELATED_QUIET: Duration = Duration::from_millis(400);

/// A document a preview handed staged text to.
pub(super) struct Previewed {
    server: Arc<Server>,
    /// The server had it open before the preview (else the preview opened it).
    was_open: bool,
    /// What the server had published for the other documents whose diagnostics the preview
    /// changed (kept with the group's first file).
    others: Vec<(Url, Option<Published>)>,
    /// The referencing files the preview opened in the server (kept with the group's first
    /// file), closed when it ends.
    opened: Vec<PathBuf>,
}

/// The files of one server, and how to reach it.
struct Group<'a> {
    spec: ServerSpec,
    program: Program,
    root: PathBuf,
    files: Vec<&'a PreviewFile>,
}

/// One changed file's document, as sent.
struct Sent {
    uri: Url,
    version: i32,
    rope: Rope,
}

impl LspProxy {
    /// [`tandem_tool_api::CodeIntel::preview`].
    pub(super) async fn preview_files(&self, files: &[PreviewFile]) -> Vec<PreviewedFile> {
        if self.preview_wait.is_zero() {
            return Vec::new();
        }
        let deadline = Instant::now() + self.preview_wait;
        let groups = self.groups(files);
        let previews = groups.into_iter().map(|group| self.preview_group(group, deadline));
        futures_util::future::join_all(previews).await.into_iter().flatten().collect()
    }

    /// `files` by server; files no server serves (or one that publishes no diagnostics) are
    /// left out, at no cost.
    fn groups<'a>(&self, files: &'a [PreviewFile]) -> Vec<Group<'a>> {
        let mut groups: Vec<Group<'a>> = Vec::new();
        for file in files {
            let Ok(Some((spec, program, root))) = self.choose(&file.path) else { continue };
            if spec.diagnostics == DiagnosticsMode::None {
                continue;
            }
            match groups.iter_mut().find(|g| g.spec.name == spec.name && g.root == root) {
                Some(group) => group.files.push(file),
                None => groups.push(Group { spec, program, root, files: vec![file] }),
            }
        }
        groups
    }

    async fn preview_group(&self, group: Group<'_>, deadline: Instant) -> Vec<PreviewedFile> {
        let name = group.spec.name.clone();
        let paths: Vec<PathBuf> = group.files.iter().map(|f| f.path.clone()).collect();
        let all = |report: PreviewReport| -> Vec<PreviewedFile> {
            paths
                .iter()
                .map(|path| PreviewedFile { path: path.clone(), changed: true, report: report.clone() })
                .collect()
        };
        if group.spec.diagnostics == DiagnosticsMode::Flycheck {
            return all(PreviewReport::NotReady {
                server: name.clone(),
                reason: format!(
                    "{name} reports compiler errors only for saved files (cargo check), so unsaved text cannot be previewed"
                ),
            });
        }
        let server = match self.running_or_starting(&group, deadline).await {
            Ok(server) => server,
            Err(report) => return all(report),
        };
        for path in &paths {
            let was_open = server.is_open(path);
            lock(&self.previews).entry(path.clone()).or_insert_with(|| Previewed {
                server: Arc::clone(&server),
                was_open,
                others: Vec::new(),
                opened: Vec::new(),
            });
        }
        match self.before_and_after(&server, &group, deadline).await {
            Ok((previewed, others)) => {
                let mut previews = lock(&self.previews);
                if let Some(first) = paths.first().and_then(|path| previews.get_mut(path)) {
                    first.others = others;
                }
                drop(previews);
                previewed
            }
            Err(err) => all(PreviewReport::Failed { message: err.to_string() }),
        }
    }

    /// The group's running server; a server that is not running is started in the background
    /// (the start goes on past the deadline, for the next call), and the preview is not ready
    /// unless it comes up in time.
    async fn running_or_starting(&self, group: &Group<'_>, deadline: Instant) -> Result<Arc<Server>, PreviewReport> {
        let name = group.spec.name.clone();
        let slot = self.slot(&name, &group.root);
        let running = slot.try_lock().ok().and_then(|slot| slot.server.clone()).filter(|s| s.alive());
        if let Some(server) = running {
            return Ok(server);
        }
        let start = self.start(group.spec.clone(), group.program.clone(), group.root.clone());
        let starting = tokio::spawn(start.run(slot));
        match tokio::time::timeout_at(deadline, starting).await {
            Ok(Ok(Ok(server))) => Ok(server),
            Ok(Ok(Err(err))) => Err(PreviewReport::Failed { message: err.to_string() }),
            Ok(Err(_)) => Err(PreviewReport::Failed { message: format!("starting {name} failed") }),
            Err(_) => Err(PreviewReport::NotReady {
                server: name,
                reason: format!("still starting after {:.1} s", self.preview_wait.as_secs_f64()),
            }),
        }
    }

    /// Sends each file's current text and waits for its diagnostics, then its staged text and
    /// waits again; then collects the other documents the server published for meanwhile.
    async fn before_and_after(
        &self,
        server: &Arc<Server>,
        group: &Group<'_>,
        deadline: Instant,
    ) -> Result<(Vec<PreviewedFile>, Vec<(Url, Option<Published>)>), ServerError> {
        let (files, root) = (&group.files, &group.root);
        let name = server.spec.name.clone();
        let wait = self.preview_wait.as_secs_f64();
        let mut out = Vec::new();
        let mut ready = Vec::new();
        // The current text (nothing for a file the change creates).
        let mut sent = Vec::new();
        for file in files {
            let old = file.old_text.as_deref().map(|text| server.send_text(&file.path, Rope::from_str(text)));
            sent.push(old.transpose()?);
        }
        for (file, old) in files.iter().zip(sent) {
            let before = match old {
                None => Vec::new(),
                Some((uri, version, rope)) => {
                    match held_diagnostics(server, &file.path, &uri, version, deadline).await? {
                        Some(items) => self.convert(server, items, &rope),
                        None => {
                            out.push(not_ready(
                                file,
                                &name,
                                format!("no diagnostics for the current text within {wait:.1} s"),
                            ));
                            continue;
                        }
                    }
                }
            };
            ready.push((*file, before));
        }
        // The files that reference what changes, with their diagnostics of the current text.
        let current: Vec<&PreviewFile> = ready.iter().map(|(file, _)| *file).collect();
        let opened = self.open_related(server, &current, root, deadline).await;
        let quiet = if opened.is_empty() { OTHERS_QUIET } else { RELATED_QUIET };
        if let Some(first) = files.first()
            && let Some(previewed) = lock(&self.previews).get_mut(&first.path)
        {
            previewed.opened.clone_from(&opened);
        }
        // The staged text.
        let (seq, published) = server.published_now();
        let mut staged = Vec::new();
        for (file, before) in ready {
            let (uri, version, rope) = server.send_text(&file.path, Rope::from_str(&file.new_text))?;
            staged.push((file, before, Sent { uri, version, rope }));
        }
        let mut changed = Vec::new();
        for (file, before, sent) in staged {
            changed.push(sent.uri.clone());
            // A proposal the server analysed before (a model repeating a rejected change) comes
            // from the memo: the server may not publish again for a text it has just analysed.
            let items = match held_diagnostics(server, &file.path, &sent.uri, sent.version, deadline).await? {
                Some(items) => items,
                None => {
                    out.push(not_ready(
                        file,
                        &name,
                        format!("no diagnostics for the proposed text within {wait:.1} s"),
                    ));
                    continue;
                }
            };
            let after = self.convert(server, items, &sent.rope);
            let report = PreviewReport::Ready { server: name.clone(), before, after };
            out.push(PreviewedFile { path: file.path.clone(), changed: true, report });
        }
        let (others, records) = self.others(server, seq, &published, &changed, quiet, deadline).await;
        out.extend(others);
        Ok((out, records))
    }

    /// Other documents whose diagnostics the server published since `seq` (after a quiet spell,
    /// since they follow the changed files'), before and after; and what had been published
    /// for them before, to put back when the preview ends.
    async fn others(
        &self,
        server: &Server,
        seq: u64,
        published: &HashMap<Url, Published>,
        changed: &[Url],
        quiet: Duration,
        deadline: Instant,
    ) -> (Vec<PreviewedFile>, Vec<(Url, Option<Published>)>) {
        if server.open_paths().len() <= changed.len() {
            return (Vec::new(), Vec::new());
        }
        server.settle(quiet, deadline).await;
        let mut texts = self.texts(server.encoding);
        let mut out = Vec::new();
        let mut records = Vec::new();
        for (uri, items) in server.published_since(seq) {
            let Ok(path) = uri.to_file_path() else { continue };
            if changed.contains(&uri) {
                continue;
            }
            let mut convert = |items: Vec<lsp::Diagnostic>| -> Vec<Diagnostic> {
                items
                    .into_iter()
                    .map(|d| {
                        let range = texts.range(&path, &d.range);
                        diagnostic(d, range)
                    })
                    .collect()
            };
            let before = convert(published.get(&uri).map(|p| p.items.clone()).unwrap_or_default());
            let after = convert(items);
            let report = PreviewReport::Ready { server: server.spec.name.clone(), before, after };
            out.push(PreviewedFile { path, changed: false, report });
            records.push((uri.clone(), published.get(&uri).cloned()));
        }
        (out, records)
    }

    /// Opens in `server` the files under `root` that reference what `files` change and that it
    /// does not have open (at most `[review] preview_files`), and waits for their diagnostics
    /// of the current text, within half the time left: what the change would break in them is
    /// then what the server publishes for them after the staged text. Returns the files it
    /// opened; one whose diagnostics did not come in time is closed again (its "before" would
    /// be unknown).
    async fn open_related(
        &self,
        server: &Arc<Server>,
        files: &[&PreviewFile],
        root: &Path,
        deadline: Instant,
    ) -> Vec<PathBuf> {
        if self.preview_files == 0 {
            return Vec::new();
        }
        let now = Instant::now();
        let phase = now + deadline.saturating_duration_since(now) / 2;
        let mut skip: HashSet<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        skip.extend(server.open_paths());
        let mut related: Vec<PathBuf> = Vec::new();
        for file in files {
            let left = self.preview_files.saturating_sub(related.len());
            let (Some(old), true) = (&file.old_text, left > 0) else { continue };
            let Some(lines) = related::changed_lines(old, &file.new_text) else { continue };
            let Ok(uri) = Url::from_file_path(&file.path) else { continue };
            let mut by_references = None;
            if server.supports("textDocument/documentSymbol") {
                let params = json!({ "textDocument": { "uri": uri } });
                let wait = phase.saturating_duration_since(Instant::now());
                if let Ok(answer) = server.request::<raw::DocumentSymbol>(params, wait).await {
                    let file_lines = u32::try_from(old.lines().count()).unwrap_or(u32::MAX);
                    let positions = related::touched_symbols(&answer, lines, file_lines);
                    by_references = related::references(server, &uri, &positions, root, &skip, left, phase).await;
                }
            }
            let found = match by_references {
                Some(found) if !found.is_empty() => found,
                _ => {
                    let stem = file.path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                    related::importers(root, stem, &server.spec.extensions, &skip, left, phase)
                }
            };
            skip.extend(found.iter().cloned());
            related.extend(found);
        }
        let mut sent = Vec::new();
        for path in related {
            match server.sync(&self.cache, &path) {
                Ok((uri, version, _)) => sent.push((path, uri, version)),
                Err(err) => tracing::debug!(server = %server.spec.name, path = %path.display(), "not previewed: {err}"),
            }
        }
        let mut opened = Vec::new();
        for (path, uri, version) in sent {
            if server.wait_fresh(&path, &uri, version, phase).await.unwrap_or(false) {
                opened.push(path);
            } else {
                server.close(&path);
            }
        }
        tracing::debug!(server = %server.spec.name, files = opened.len(), "preview: referencing files opened");
        opened
    }

    /// A server's diagnostics of a text that is not (yet) the file's, over that text.
    fn convert(&self, server: &Server, items: Vec<lsp::Diagnostic>, rope: &Rope) -> Vec<Diagnostic> {
        let lines = tandem_text::Lines::new(rope.to_string());
        items
            .into_iter()
            .map(|d| {
                let range = TextRange {
                    start: from_server(Some(&lines), d.range.start, server.encoding),
                    end: from_server(Some(&lines), d.range.end, server.encoding),
                };
                diagnostic(d, range)
            })
            .collect()
    }

    /// [`tandem_tool_api::CodeIntel::end_preview`]: each previewed document goes back to the file's
    /// current text; one the preview opened is closed, unless its staged text became the file's.
    /// What the servers published for other documents during the preview stays when every file
    /// took its staged text (it is about the files as they are now); otherwise it is put back.
    pub(super) fn end_preview_files(&self, paths: &[PathBuf]) {
        let ended: Vec<(PathBuf, Previewed)> =
            paths.iter().filter_map(|path| Some((path.clone(), lock(&self.previews).remove(path)?))).collect();
        let current: Vec<Option<Rope>> =
            ended.iter().map(|(path, _)| Server::current_text(&self.cache, path).ok()).collect();
        let committed = ended.iter().zip(&current).all(|((path, previewed), rope)| {
            rope.as_ref().is_some_and(|rope| previewed.server.holds(path, ContentHash::of_rope(rope)))
        });
        for ((path, previewed), current) in ended.into_iter().zip(current) {
            let server = previewed.server;
            if !server.alive() {
                continue;
            }
            if !previewed.others.is_empty() && !committed {
                server.restore_published(previewed.others);
            }
            match current {
                Some(rope) if previewed.was_open || server.holds(&path, ContentHash::of_rope(&rope)) => {
                    if let Err(err) = server.send_text(&path, rope) {
                        tracing::debug!(server = %server.spec.name, "not restored after a preview: {err}");
                    }
                }
                // Opened by the preview and not committed, or gone: the server forgets it.
                _ => server.close(&path),
            }
            for path in &previewed.opened {
                server.close(path);
            }
        }
    }
}

/// The server's diagnostics of the text of `path` it holds (sent as `version`): what it has
/// published for that version already, else what it published for the same text when nothing
/// else it analyses was different (after a rejected change the server is still analysing the
/// restored text; a repeated proposal it may not publish for again), else those it publishes by
/// `deadline`.
async fn held_diagnostics(
    server: &Server,
    path: &Path,
    uri: &Url,
    version: i32,
    deadline: Instant,
) -> Result<Option<Vec<lsp::Diagnostic>>, ServerError> {
    if server.wait_fresh(path, uri, version, Instant::now()).await? {
        return Ok(Some(server.published(uri)));
    }
    if let Some(items) = server.remembered(path) {
        tracing::debug!(server = %server.spec.name, path = %path.display(), "preview: diagnostics remembered for this text");
        return Ok(Some(items));
    }
    Ok(server.wait_fresh(path, uri, version, deadline).await?.then(|| server.published(uri)))
}

fn not_ready(file: &PreviewFile, server: &str, reason: String) -> PreviewedFile {
    PreviewedFile {
        path: file.path.clone(),
        changed: true,
        report: PreviewReport::NotReady { server: server.to_owned(), reason },
    }
}
