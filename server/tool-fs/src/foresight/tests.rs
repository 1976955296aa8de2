use std::path::{Path, PathBuf};

use tandem_protocol::{PreviewSeverity, PreviewStatus};
use tandem_text::Position;
use tandem_tool_api::approval::StagedFile;
use tandem_tool_api::intel::{Diagnostic, PreviewReport, PreviewedFile, Severity, TextRange};

use super::{accepted_note, build, delta};

fn diag(line: u32, severity: Severity, message: &str) -> Diagnostic {
    Diagnostic {
        range: TextRange { start: Position { line, character: 4 }, end: Position { line, character: 9 } },
        severity,
        message: message.to_owned(),
        code: None,
        source: Some("Pyright".to_owned()),
    }
}

fn staged(path: &str, old: &str, new: &str) -> StagedFile {
    StagedFile {
        path: PathBuf::from(path),
        display: path.trim_start_matches("/ws/").to_owned(),
        moved_to: None,
        old_text: Some(old.to_owned()),
        new_text: Some(new.to_owned()),
        hunks: tandem_text::hunks::diff(path, old, new).hunks,
    }
}

/// What a change from `old` to `new` introduces and resolves, with diagnostics `before` and
/// `after` it.
fn delta_of<'a>(
    old: &str,
    new: &str,
    before: &'a [Diagnostic],
    after: &'a [Diagnostic],
) -> (Vec<&'a Diagnostic>, Vec<&'a Diagnostic>) {
    delta(before, after, &tandem_text::hunks::diff("/ws/a.py", old, new).hunks)
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn an_unchanged_error_that_moves_with_the_change_is_neither_new_nor_resolved() {
    let old = lines(20);
    // Two lines inserted at the top: the old error on line 15 (0-based 14) is now on 16.
    let new = format!("new a\nnew b\n{old}");
    let before = [diag(14, Severity::Error, "x is undefined")];
    let after = [diag(16, Severity::Error, "x is undefined"), diag(0, Severity::Error, "y is undefined")];
    let (introduced, resolved) = delta_of(&old, &new, &before, &after);
    let introduced: Vec<&str> = introduced.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(introduced, ["y is undefined"]);
    assert!(resolved.is_empty());
}

#[test]
fn the_same_message_twice_counts_the_one_at_a_new_place_as_new() {
    let old = lines(20);
    let new = old.replace("line 3\n", "line three\n");
    let before = [diag(15, Severity::Error, "x is undefined")];
    // The old one stays at line 16; the change adds the same message on line 3.
    let after = [diag(2, Severity::Error, "x is undefined"), diag(15, Severity::Error, "x is undefined")];
    let (introduced, resolved) = delta_of(&old, &new, &before, &after);
    assert_eq!(introduced.len(), 1);
    assert_eq!(introduced[0].range.start.line, 2);
    assert!(resolved.is_empty());
}

#[test]
fn hints_and_information_are_left_out_and_fixed_errors_are_resolved() {
    let old = lines(5);
    let new = old.replace("line 2\n", "line two\n");
    let before = [diag(1, Severity::Error, "bad"), diag(3, Severity::Hint, "unused")];
    let after = [diag(3, Severity::Information, "note")];
    let (introduced, resolved) = delta_of(&old, &new, &before, &after);
    assert!(introduced.is_empty());
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].message, "bad");
}

fn ready(path: &str, changed: bool, before: Vec<Diagnostic>, after: Vec<Diagnostic>) -> PreviewedFile {
    PreviewedFile {
        path: PathBuf::from(path),
        changed,
        report: PreviewReport::Ready { server: "pyright".to_owned(), before, after },
    }
}

fn display(path: &Path) -> String {
    path.strip_prefix("/ws").map(|p| p.display().to_string()).unwrap_or_default()
}

#[test]
fn the_preview_places_new_errors_in_their_hunks_and_says_what_changes() {
    let old = lines(30);
    let new = old.replace("line 2\n", "line two\n").replace("line 28\n", "line twenty-eight\n");
    let mut file = staged("/ws/a.py", &old, &new);
    // Review-wide ids, as the commit path numbers them.
    file.hunks[0].id = "h4".to_owned();
    file.hunks[1].id = "h5".to_owned();
    let previewed = [
        ready(
            "/ws/a.py",
            true,
            vec![diag(10, Severity::Error, "old problem")],
            vec![diag(27, Severity::Error, "\"str\" is not assignable to \"int\"")],
        ),
        // A caller elsewhere breaks; a third file is unchanged and left out.
        ready("/ws/b.py", false, Vec::new(), vec![diag(4, Severity::Warning, "deprecated")]),
        ready("/ws/c.py", false, vec![diag(1, Severity::Error, "same")], vec![diag(1, Severity::Error, "same")]),
    ];
    let preview = build(&previewed, &[file], display).unwrap_or_else(|| panic!("no preview"));
    assert_eq!(preview.status, PreviewStatus::Ready);
    assert_eq!(preview.files.len(), 2, "{preview:#?}");
    let a = &preview.files[0];
    assert_eq!((a.introduced.len(), a.resolved.len()), (1, 1));
    assert_eq!(a.introduced[0].hunk.as_deref(), Some("h5"));
    assert_eq!(a.introduced[0].line, 28);
    assert_eq!(a.resolved[0].hunk, None, "line 11 is outside both hunks");
    assert!(!preview.files[1].changed);
    assert_eq!(preview.files[1].introduced[0].severity, PreviewSeverity::Warning);
    assert_eq!(
        preview.summary,
        "introduces 1 error: a.py:28: \"str\" is not assignable to \"int\" / 1 warning / resolves 1 (preview of the whole change, every hunk applied)"
    );
    let note = accepted_note(&preview, false, display).unwrap_or_default();
    assert!(
        note.contains(
            "introduces 2 problems: a.py:28: \"str\" is not assignable to \"int\" (error); b.py:5: deprecated (warning)"
        ),
        "{note}"
    );
    assert!(!note.contains("whole change"), "{note}");
    // Only some hunks accepted: the model learns the preview was of the whole change.
    let partial = accepted_note(&preview, true, display).unwrap_or_default();
    assert!(partial.contains("The preview was of the whole change and only some hunks were applied"), "{partial}");
}

#[test]
fn not_ready_is_never_reported_as_no_problems() {
    let old = lines(3);
    let file = staged("/ws/a.py", &old, &old.replace("line 1", "line one"));
    let previewed = [PreviewedFile {
        path: PathBuf::from("/ws/a.py"),
        changed: true,
        report: PreviewReport::NotReady {
            server: "pyright".to_owned(),
            reason: "no diagnostics within 1.5 s".to_owned(),
        },
    }];
    let preview = build(&previewed, &[file], display).unwrap_or_else(|| panic!("no preview"));
    assert_eq!(preview.status, PreviewStatus::NotReady);
    assert_eq!(
        preview.summary,
        "diagnostics not ready, so nothing is known about errors; not ready: a.py (pyright: no diagnostics within 1.5 s)"
    );
    assert_eq!(accepted_note(&preview, false, display), None);
}

#[test]
fn nothing_previewed_is_no_preview_and_a_clean_change_says_so() {
    assert_eq!(build(&[], &[], display), None);
    let old = lines(3);
    let file = staged("/ws/a.py", &old, &old.replace("line 1", "line one"));
    let preview = build(&[ready("/ws/a.py", true, Vec::new(), Vec::new())], &[file], display);
    assert_eq!(preview.map(|p| p.summary).as_deref(), Some("no new errors or warnings"));
}
