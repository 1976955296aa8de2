//! Fixture-driven tests of the file tools through the registry, with snapshot expectations.
//! A fixture is a set of files (`//- path` headers); a check runs one call and shows the result
//! and every file that the call changed. `UPDATE_EXPECT=1` refreshes the expectations.

use std::collections::BTreeMap;
use std::path::Path;

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use tandem_tool_api::testing::{Harness, render};

fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in ignore::WalkBuilder::new(root).hidden(false).git_ignore(false).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path()).display().to_string();
            // Tandem's own state (the commit journal's directory) is not part of the change.
            if rel.starts_with(".tandem/") {
                continue;
            }
            files.insert(rel, std::fs::read(entry.path()).unwrap_or_default());
        }
    }
    files
}

fn show_bytes(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\r', "<CR>").replace('\u{feff}', "<BOM>")
}

/// Runs the call and renders the result plus every file it created, changed or removed.
fn check_files(h: &Harness, name: &str, args: Value, expect: Expect) {
    let before = snapshot(h.root());
    let result = h.call(name, args);
    let after = snapshot(h.root());
    let mut out = render(&result, h.root());
    for (path, bytes) in &after {
        if before.get(path) != Some(bytes) {
            out.push_str(&format!("--- {path}\n{}", show_bytes(bytes)));
            if !bytes.ends_with(b"\n") {
                out.push_str("<NOEOL>\n");
            }
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        out.push_str(&format!("--- {path} (deleted)\n"));
    }
    expect.assert_eq(&out);
}

fn check(fixture: &str, name: &str, args: Value, expect: Expect) {
    check_files(&Harness::new(fixture, crate::all()), name, args, expect);
}

#[test]
fn read_numbers_lines_and_windows() {
    let fixture = "
        //- src/a.rs
        fn a() {}
        fn b() {}
        fn c() {}
    ";
    check(
        fixture,
        "read",
        json!({"file_path": "src/a.rs", "offset": 2, "limit": 1}),
        expect![[r#"
            title: Read src/a.rs (lines 2-2 of 4)
                 2	fn b() {}

            (limit reached: showing lines 2-2 of 4; continue with offset=3)
            meta: cutLines=0 endLine=2 path="src/a.rs" source="disk" startLine=2 totalLines=4 truncated=true
        "#]],
    );
    check(
        fixture,
        "read",
        json!({"file_path": "src/b.rs"}),
        expect![[r#"
            error: `src/b.rs` does not exist; use `list` or `glob` to find the right path
            meta: notFound=true
        "#]],
    );
    check(
        fixture,
        "cat",
        json!({"file_path": "src"}),
        expect![[r#"
            error: `src` is a directory, not a file; use `list` to see what it holds
        "#]],
    );
    check(
        "//- empty.txt\n<NOEOL>",
        "read",
        json!({"file_path": "empty.txt"}),
        expect![[r#"
            title: Read empty.txt (empty)
            (the file is empty)
            meta: path="empty.txt" source="disk" totalLines=0
        "#]],
    );
}

#[test]
fn write_keeps_crlf_and_bom_and_reports_no_change() {
    let fixture = "
        //- win.txt
        \u{feff}one<CR>
        two<CR>
    ";
    check(
        fixture,
        "write",
        json!({"file_path": "win.txt", "content": "uno\ndos\n"}),
        expect![[r#"
            title: Wrote win.txt
            Wrote `win.txt` (2 lines, was 3; CRLF line endings kept). Changed region:
                 1	uno
                 2	dos
            meta: additions=2 changed=true created=false deletions=3 diff="--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,2 @@\n-one\r\n-two\r\n-\n+uno\r\n+dos\r\n" hunks=1 lines=2 path="win.txt" via="disk"
            --- win.txt
            <BOM>uno<CR>
            dos<CR>
        "#]],
    );
    check(
        fixture,
        "write",
        json!({"file_path": "win.txt", "content": "one\ntwo\n"}),
        expect![[r#"
            title: Wrote win.txt
            Wrote `win.txt` (2 lines, was 3; CRLF line endings kept). Changed region:
                 1	one
                 2	two
            meta: additions=0 changed=true created=false deletions=1 diff="--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,2 @@\n one\r\n two\r\n-\n" hunks=1 lines=2 path="win.txt" via="disk"
            --- win.txt
            <BOM>one<CR>
            two<CR>
        "#]],
    );
    check(
        "",
        "write_file",
        json!({"file_path": "new/dir/file.md", "content": "# Title"}),
        expect![[r#"
            title: Created new/dir/file.md
            Created `new/dir/file.md` (1 lines).
            meta: additions=1 changed=true created=true deletions=0 diff="--- a/new/dir/file.md\n+++ b/new/dir/file.md\n@@ -0,0 +1 @@\n+# Title\n\\ No newline at end of file\n" hunks=1 lines=1 path="new/dir/file.md" via="disk"
            --- new/dir/file.md
            # Title<NOEOL>
        "#]],
    );
}

#[test]
fn edit_exact_ambiguous_and_not_found() {
    let fixture = "
        //- lib.rs
        fn one() {
            let x = 1;
        }

        fn two() {
            let x = 1;
        }
    ";
    check(
        fixture,
        "edit",
        json!({"file_path": "lib.rs", "old_string": "fn two() {\n    let x = 1;", "new_string": "fn two() {\n    let x = 2;"}),
        expect![[r#"
            title: Edited lib.rs
            Edited `lib.rs`: 1 replacement(s), first at line 5.
                 2	    let x = 1;
                 3	}
                 4	
                 5	fn two() {
                 6	    let x = 2;
                 7	}
                 8
            meta: additions=1 deletions=1 diff="--- a/lib.rs\n+++ b/lib.rs\n@@ -3,6 +3,6 @@\n }\n \n fn two() {\n-    let x = 1;\n+    let x = 2;\n }\n \n" firstLine=5 hunks=1 path="lib.rs" replacements=1 similarity=1.0 strategy="exact" via="disk"
            --- lib.rs
            fn one() {
                let x = 1;
            }

            fn two() {
                let x = 2;
            }

        "#]],
    );
    check(
        fixture,
        "edit_file",
        json!({"file_path": "lib.rs", "old_string": "    let x = 1;", "new_string": "    let x = 3;"}),
        expect![[r#"
            error: old_string occurs 2 times in `lib.rs` (starting at lines 2, 6); include more surrounding lines to pick one, or set replace_all to change every exact occurrence
            meta: ambiguous=true occurrences=2 strategy="exact"
        "#]],
    );
    check(
        fixture,
        "edit",
        json!({"file_path": "lib.rs", "old_string": "fn two() {\n  let x = 1;\n}", "new_string": "fn two() {}"}),
        expect![[r#"
            title: Edited lib.rs
            Edited `lib.rs`: 1 replacement(s), first at line 5 (matched indentation-flexible).
                 2	    let x = 1;
                 3	}
                 4	
                 5	fn two() {}
                 6
            meta: additions=1 deletions=3 diff="--- a/lib.rs\n+++ b/lib.rs\n@@ -2,7 +2,5 @@\n     let x = 1;\n }\n \n-fn two() {\n-    let x = 1;\n-}\n+fn two() {}\n \n" firstLine=5 hunks=1 path="lib.rs" replacements=1 similarity=1.0 strategy="indentation-flexible" via="disk"
            --- lib.rs
            fn one() {
                let x = 1;
            }

            fn two() {}

        "#]],
    );
    check(
        fixture,
        "edit",
        json!({"file_path": "lib.rs", "old_string": "", "new_string": "x"}),
        expect![[r#"
            error: old_string is empty but `lib.rs` is not; give the text to replace, or use `write` to replace the whole file
        "#]],
    );
    check(
        "",
        "edit",
        json!({"file_path": "fresh.txt", "old_string": "", "new_string": "hello\n"}),
        expect![[r#"
            title: Created fresh.txt
            Created `fresh.txt` (1 lines).
            meta: created=true path="fresh.txt" strategy="create"
            --- fresh.txt
            hello
        "#]],
    );
}

#[test]
fn edit_forgives_formatting_never_content() {
    let fixture = "
        //- Cargo.toml
        [package]
        name = \"demo\"
        version = \"0.4.32\"
        edition = \"2021\"
        license = \"MIT\"
    ";
    // The line the edit changes is misremembered (`versions`): refused, nothing written.
    check(
        fixture,
        "edit",
        json!({"file_path": "Cargo.toml",
            "old_string": "[package]\nname = \"demo\"\nversions = \"0.4.32\"\nedition = \"2021\"\nlicense = \"MIT\"\n",
            "new_string": "[package]\nname = \"demo\"\nversions = \"0.4.33\"\nedition = \"2021\"\nlicense = \"MIT\"\n"}),
        expect![[r#"
            error: old_string does not match `Cargo.toml`: the closest block is lines 1-5 (found block-anchor), and these lines differ from old_string where the edit changes them:
              line 3: the file has `version = "0.4.32"`; old_string has `versions = "0.4.32"`
            Nothing was written. The file's lines 1-5:
                 1	[package]
                 2	name = "demo"
                 3	version = "0.4.32"
                 4	edition = "2021"
                 5	license = "MIT"
            Copy old_string exactly from the file (read it again if unsure) and retry.
            meta: closestLine=1 differences=[{"file":"version = \"0.4.32\"","line":3,"old_string":"versions = \"0.4.32\""}] notFound=true strategy="block-anchor"
        "#]],
    );
    // The misremembered line is one the edit keeps: applied, the file's text kept there.
    check(
        fixture,
        "edit",
        json!({"file_path": "Cargo.toml",
            "old_string": "[package]\nname = \"demo\"\nversions = \"0.4.32\"\nedition = \"2021\"\nlicense = \"MIT\"\n",
            "new_string": "[package]\nname = \"demo\"\nversions = \"0.4.32\"\nedition = \"2024\"\nlicense = \"MIT\"\n"}),
        expect![[r#"
            title: Edited Cargo.toml
            Edited `Cargo.toml`: 1 replacement(s), first at line 1 (matched block-anchor). 1 line group(s) of old_string differ from the file on lines the edit keeps; the file's text was kept there (metadata.forgiven).
                 1	[package]
                 2	name = "demo"
                 3	version = "0.4.32"
                 4	edition = "2024"
                 5	license = "MIT"
                 6
            meta: additions=1 deletions=1 diff="--- a/Cargo.toml\n+++ b/Cargo.toml\n@@ -1,6 +1,6 @@\n [package]\n name = \"demo\"\n version = \"0.4.32\"\n-edition = \"2021\"\n+edition = \"2024\"\n license = \"MIT\"\n \n" firstLine=1 forgiven=[{"file":"version = \"0.4.32\"","line":3,"old_string":"versions = \"0.4.32\""}] hunks=1 path="Cargo.toml" replacements=1 similarity=0.99 strategy="block-anchor" via="disk"
            --- Cargo.toml
            [package]
            name = "demo"
            version = "0.4.32"
            edition = "2024"
            license = "MIT"

        "#]],
    );
}

#[test]
fn edit_takes_new_string_in_the_frame_it_is_written_in_and_refuses_what_is_applied() {
    let fixture = "
        //- a.py
        def f(x):
            if x:
                return 1
            return 0
    ";
    // old_string 2 columns off, new_string in the file's indentation: kept as written.
    check(
        fixture,
        "edit",
        json!({"file_path": "a.py", "old_string": "  if x:\n      return 1\n", "new_string": "    if x:\n        return 2\n"}),
        expect![[r#"
            title: Edited a.py
            Edited `a.py`: 1 replacement(s), first at line 2 (matched indentation-flexible).
                 1	def f(x):
                 2	    if x:
                 3	        return 2
                 4	    return 0
                 5
            meta: additions=1 deletions=1 diff="--- a/a.py\n+++ b/a.py\n@@ -1,5 +1,5 @@\n def f(x):\n     if x:\n-        return 1\n+        return 2\n     return 0\n \n" firstLine=2 hunks=1 path="a.py" replacements=1 similarity=1.0 strategy="indentation-flexible" via="disk"
            --- a.py
            def f(x):
                if x:
                    return 2
                return 0

        "#]],
    );
    // new_string in neither frame: refused, with the three indentations.
    check(
        fixture,
        "edit",
        json!({"file_path": "a.py", "old_string": "  if x:\n      return 1\n", "new_string": "   if x:\n       return 2\n"}),
        expect![[r#"
            error: old_string matches lines starting at 2 of `a.py` (indentation-flexible), but with other indentation, and new_string's indentation fits neither: old_string is indented by 2 space(s), the file by 4 space(s), new_string by 3 space(s). Nothing was written. Write new_string with the same indentation as old_string, or copy both exactly from the file (read it again)
            meta: closestLine=2 indentation={"file":"    ","new_string":"   ","old_string":"  "} strategy="indentation-flexible"
        "#]],
    );
    // Already applied: refused, nothing written.
    let applied = "
        //- a.py
        def f(x):
            if x:
                print(x)
                return 1
    ";
    check(
        applied,
        "edit",
        json!({"file_path": "a.py", "old_string": "    if x:\n", "new_string": "    if x:\n        print(x)\n"}),
        expect![[r#"
            error: already applied: `a.py` already contains new_string at line 2, so nothing was written; read the file to check, and if the change is meant to be made again, give old_string with more surrounding lines
            meta: alreadyApplied=true line=2 unchanged=true
        "#]],
    );
}

#[test]
fn edit_in_crlf_file_matches_lf_old_string() {
    check(
        "//- a.txt\nalpha<CR>\nbeta<CR>\ngamma<CR>\n",
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha\nbeta", "new_string": "ALPHA\nBETA\nextra"}),
        expect![[r#"
            title: Edited a.txt
            Edited `a.txt`: 1 replacement(s), first at line 1.
                 1	ALPHA
                 2	BETA
                 3	extra
                 4	gamma
            meta: additions=3 deletions=2 diff="--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n-alpha\r\n-beta\r\n+ALPHA\r\n+BETA\r\n+extra\r\n gamma\r\n" firstLine=1 hunks=1 path="a.txt" replacements=1 similarity=1.0 strategy="exact" via="disk"
            --- a.txt
            ALPHA<CR>
            BETA<CR>
            extra<CR>
            gamma<CR>
        "#]],
    );
}

#[test]
fn append_delete_list() {
    check(
        "//- log.txt\nfirst<NOEOL>\n",
        "append",
        json!({"file_path": "log.txt", "content": "second\n"}),
        expect![[r#"
            title: Appended to log.txt
            Appended to `log.txt` (added a newline first: the file did not end with one):
                 1	first
                 2	second
            meta: additions=2 bytes=8 created=false deletions=1 diff="--- a/log.txt\n+++ b/log.txt\n@@ -1 +1,2 @@\n-first\n\\ No newline at end of file\n+first\n+second\n" hunks=1 path="log.txt" via="disk"
            --- log.txt
            first
            second
        "#]],
    );
    let fixture = "
        //- .gitignore
        build/
        //- build/out.bin
        x
        //- src/main.rs
        fn main() {}
        //- src/util/mod.rs
        //- .git/config
        [core]
    ";
    check(
        fixture,
        "list",
        json!({}),
        expect![[r#"
            title: Listed . (2 entries)
            .gitignore
            src/
            meta: count=2 path="." truncated=false
        "#]],
    );
    check(
        fixture,
        "ls",
        json!({"recursive": true, "pattern": "*.rs"}),
        expect![[r#"
            title: Listed . (2 entries)
            src/main.rs
            src/util/mod.rs
            meta: count=2 path="." truncated=false
        "#]],
    );
    check(
        fixture,
        "delete",
        json!({"file_path": "src/util/mod.rs"}),
        expect![[r#"
            title: Deleted src/util/mod.rs
            Deleted `src/util/mod.rs`.
            meta: kind="file" path="src/util/mod.rs"
            --- src/util/mod.rs (deleted)
        "#]],
    );
    check(
        fixture,
        "delete",
        json!({"file_path": ".git/config"}),
        expect![[r#"
            error: `.git/config` is inside `.git`; tandem never changes a repository's internals (use git commands through bash)
        "#]],
    );
    check(
        fixture,
        "delete",
        json!({"file_path": "src"}),
        expect![[r#"
            error: `src` is a directory with 2 entries; delete what it holds first (only empty directories are deleted)
        "#]],
    );
}

#[test]
fn session_must_read_before_overwriting() {
    let mut h = Harness::new("//- a.txt\nold\n", crate::all());
    h.ctx.session_id = Some("s".into());
    check_files(
        &h,
        "write",
        json!({"file_path": "a.txt", "content": "new\n"}),
        expect![[r#"
            error: `a.txt` already exists and you have not read it in this session; read it first so nothing is overwritten unseen (or use `edit` for a targeted change)
        "#]],
    );
    assert!(h.call("read", json!({"file_path": "a.txt"})).error.is_none());
    std::fs::write(h.root().join("a.txt"), "changed\n").ok();
    check_files(
        &h,
        "append",
        json!({"file_path": "a.txt", "content": "more"}),
        expect![[r#"
            error: `a.txt` changed since you last read it (on disk); read it again and redo the change on the current content
            meta: stale=true
        "#]],
    );
}

#[test]
fn multiedit_is_ordered_and_all_or_nothing() {
    let fixture = "
        //- a.rs
        fn old_name() {}
        fn caller() { old_name(); }
        //- b.rs
        use crate::old_name;
    ";
    check(
        fixture,
        "multiedit",
        json!({"edits": [
            {"file_path": "a.rs", "old_string": "fn old_name() {}", "new_string": "fn new_name() {}"},
            {"file_path": "a.rs", "old_string": "old_name();", "new_string": "new_name();"},
            {"file_path": "b.rs", "old_string": "use crate::old_name;", "new_string": "use crate::new_name;"},
            {"file_path": "c.rs", "old_string": "", "new_string": "// new file\n"}
        ]}),
        expect![[r#"
            title: Applied 4 edit(s) to 3 file(s)
            `a.rs`:
            edit 1 of 4: 1 replacement(s) at line 1
                 1	fn new_name() {}
                 2	fn caller() { old_name(); }
            edit 2 of 4: 1 replacement(s) at line 2
                 1	fn new_name() {}
                 2	fn caller() { new_name(); }
            `b.rs`:
            edit 3 of 4: 1 replacement(s) at line 1
                 1	use crate::new_name;
                 2
            `c.rs`:
            edit 4 of 4: creates the file
            meta: diffs={"a.rs":{"additions":2,"deletions":2,"diff":"--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n-fn old_name() {}\n-fn caller() { old_name(); }\n+fn new_name() {}\n+fn caller() { new_name(); }\n","hunks":1},"b.rs":{"additions":1,"deletions":1,"diff":"--- a/b.rs\n+++ b/b.rs\n@@ -1,2 +1,2 @@\n-use crate::old_name;\n+use crate::new_name;\n \n","hunks":1},"c.rs":{"additions":1,"deletions":0,"diff":"--- a/c.rs\n+++ b/c.rs\n@@ -0,0 +1 @@\n+// new file\n","hunks":1}} edits=[{"edit":1,"file":"a.rs","line":1,"similarity":1.0,"strategy":"exact"},{"edit":2,"file":"a.rs","line":2,"similarity":1.0,"strategy":"exact"},{"edit":3,"file":"b.rs","line":1,"similarity":1.0,"strategy":"exact"},{"edit":4,"strategy":"create"}] files=["a.rs","b.rs","c.rs"]
            --- a.rs
            fn new_name() {}
            fn caller() { new_name(); }
            --- b.rs
            use crate::new_name;

            --- c.rs
            // new file
        "#]],
    );
    // The third edit cannot be placed: nothing at all is written.
    check(
        fixture,
        "multiedit",
        json!({"file_path": "a.rs", "edits": [
            {"old_string": "fn old_name() {}", "new_string": "fn new_name() {}"},
            {"file_path": "b.rs", "old_string": "use crate::old_name;", "new_string": "use crate::new_name;"},
            {"old_string": "fn old_name() {}", "new_string": "fn other() {}"}
        ]}),
        expect![[r#"
            error: edit 3 of 3 failed: old_string was not found in `a.rs`, exactly or with any tolerated difference. The closest text is lines 1-1 (73% similar):
                 1	fn new_name() {}
            Differences (- your old_string, + the file):
            --- old_string
            +++ a.rs
            @@ -1 +1 @@
            -fn old_name() {}
            +fn new_name() {}
            Read the file again if unsure, then retry with old_string copied exactly from it (without line-number prefixes). No file was changed.
            meta: closestLine=1 failedEdit=3 notFound=true similarity=0.73
        "#]],
    );
}

#[test]
fn apply_patch_unified_multi_file() {
    let fixture = "
        //- src/lib.rs
        pub fn one() -> u32 {
            1
        }
        //- old_name.txt
        moving
        //- gone.txt
        bye
        //- win.txt
        a<CR>
        b<CR>
    ";
    let patch = "diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 pub fn one() -> u32 {
-    1
+    2
 }
diff --git a/old_name.txt b/new_name.txt
similarity index 100%
rename from old_name.txt
rename to new_name.txt
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/fresh.txt b/fresh.txt
new file mode 100644
--- /dev/null
+++ b/fresh.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/win.txt
+++ b/win.txt
@@ -1,2 +1,2 @@
 a
-b
+B
";
    check(
        fixture,
        "apply_patch",
        json!({"patch": patch}),
        expect![[r#"
            title: Applied a patch to 5 file(s)
            update src/lib.rs: hunk 1 exact at line 1
            rename old_name.txt → new_name.txt
            delete gone.txt: hunk 1 exact at line 1
            create fresh.txt: hunk 1 exact at line 1
            update win.txt: hunk 1 exact at line 1
            meta: diffs={"fresh.txt":{"additions":2,"deletions":0,"diff":"--- a/fresh.txt\n+++ b/fresh.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n","hunks":1},"gone.txt":{"additions":0,"deletions":1,"diff":"--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +0,0 @@\n-bye\n","hunks":1},"new_name.txt":{"additions":0,"deletions":0,"diff":"","hunks":0},"src/lib.rs":{"additions":1,"deletions":1,"diff":"--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn one() -> u32 {\n-    1\n+    2\n }\n","hunks":1},"win.txt":{"additions":1,"deletions":1,"diff":"--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n \n","hunks":1}} files=[{"action":"update","hunks":[{"hunk":1,"line":1,"offset":0,"strategy":"exact"}],"path":"src/lib.rs","to":null},{"action":"rename","hunks":[],"path":"old_name.txt","to":"new_name.txt"},{"action":"delete","hunks":[{"hunk":1,"line":1,"offset":0,"strategy":"exact"}],"path":"gone.txt","to":null},{"action":"create","hunks":[{"hunk":1,"line":1,"offset":0,"strategy":"exact"}],"path":"fresh.txt","to":null},{"action":"update","hunks":[{"hunk":1,"line":1,"offset":0,"strategy":"exact"}],"path":"win.txt","to":null}] format="unified" strip=1
            --- fresh.txt
            hello
            world
            --- new_name.txt
            moving
            --- src/lib.rs
            pub fn one() -> u32 {
                2
            }
            --- win.txt
            a<CR>
            B<CR>

            --- gone.txt (deleted)
            --- old_name.txt (deleted)
        "#]],
    );
}

#[test]
fn apply_patch_begin_patch_and_all_or_nothing() {
    let fixture = "
        //- app.py
        def greet(name):
            return 'hi ' + name

        def main():
            greet('x')
    ";
    let patch = "*** Begin Patch
*** Update File: app.py
@@ def greet(name):
-    return 'hi ' + name
+    return f'hello {name}'
*** Add File: docs/notes.md
+# Notes
*** End Patch
";
    check(
        fixture,
        "apply_patch",
        json!({"patch": patch}),
        expect![[r#"
        title: Applied a patch to 2 file(s)
        update app.py: hunk 1 context at line 2
        create docs/notes.md: hunk 1 exact at line 1
        meta: diffs={"app.py":{"additions":1,"deletions":1,"diff":"--- a/app.py\n+++ b/app.py\n@@ -1,5 +1,5 @@\n def greet(name):\n-    return 'hi ' + name\n+    return f'hello {name}'\n \n def main():\n     greet('x')\n","hunks":1},"docs/notes.md":{"additions":1,"deletions":0,"diff":"--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -0,0 +1 @@\n+# Notes\n","hunks":1}} files=[{"action":"update","hunks":[{"hunk":1,"line":2,"offset":0,"strategy":"context"}],"path":"app.py","to":null},{"action":"create","hunks":[{"hunk":1,"line":1,"offset":0,"strategy":"exact"}],"path":"docs/notes.md","to":null}] format="begin-patch" strip=0
        --- app.py
        def greet(name):
            return f'hello {name}'

        def main():
            greet('x')

        --- docs/notes.md
        # Notes
    "#]],
    );
    // The second file's hunk does not match: the first file is left untouched too.
    let failing = "*** Begin Patch
*** Update File: app.py
@@
-    greet('x')
+    greet('y')
*** Update File: app.py.missing
@@
-nothing
+something
*** End Patch
";
    check(
        fixture,
        "apply_patch",
        json!({"patch": failing}),
        expect![[r#"
        error: file 2 of 2 (`app.py.missing`): `app.py.missing` does not exist; a patch can only change files that exist (or create new ones). No file was changed.
        meta: failedFile=2
    "#]],
    );
    let bad_hunk =
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'bye ' + name\n+    return name\n";
    check(
        fixture,
        "apply_patch",
        json!({"patch": bad_hunk}),
        expect![[r#"
        error: file 1 of 1 (`app.py`): hunk 1 of `app.py` does not match at line 1, nor anywhere else in the file; the closest text is at line 1 (1 of 2 lines match; line 2 is `    return 'hi ' + name` where the patch has `    return 'bye ' + name`); read the file again and regenerate the patch against its current content. No file was changed.
        meta: failedFile=1
    "#]],
    );
}

/// An editor that serves whole-file reads and writes (as an ACP client does): `buffers` are its
/// unsaved texts; `changed_after` makes a buffer change after that many reads (someone typing);
/// writes are recorded, not put on disk.
#[derive(Default)]
struct FileServingEditor {
    buffers: std::sync::Mutex<BTreeMap<std::path::PathBuf, String>>,
    reads: std::sync::atomic::AtomicUsize,
    changed_after: Option<usize>,
    writes: std::sync::Mutex<Vec<(std::path::PathBuf, String)>>,
}

#[async_trait::async_trait]
impl tandem_tool_api::EditorClient for FileServingEditor {
    fn position_encoding(&self) -> tandem_text::PositionEncoding {
        tandem_text::PositionEncoding::Utf16
    }
    async fn apply_edit(&self, _edit: tandem_tool_api::DocumentEdit) -> Result<bool, tandem_tool_api::EditorError> {
        Err(tandem_tool_api::EditorError::Unsupported("not used: nothing is in the buffer cache".into()))
    }
    async fn save(&self, _path: &Path) -> Result<bool, tandem_tool_api::EditorError> {
        Ok(false)
    }
    fn reads_files(&self) -> bool {
        true
    }
    async fn read_file(&self, _session: Option<&str>, path: &Path) -> Result<String, tandem_tool_api::EditorError> {
        let n = self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let buffers = self.buffers.lock().map_err(|e| tandem_tool_api::EditorError::Unsupported(e.to_string()))?;
        let text = match buffers.get(path) {
            Some(text) => text.clone(),
            None => {
                std::fs::read_to_string(path).map_err(|e| tandem_tool_api::EditorError::Unsupported(e.to_string()))?
            }
        };
        Ok(if self.changed_after.is_some_and(|after| n >= after) { format!("{text}typed meanwhile\n") } else { text })
    }
    fn writes_files(&self) -> bool {
        true
    }
    async fn write_file(
        &self,
        _session: Option<&str>,
        path: &Path,
        text: &str,
    ) -> Result<(), tandem_tool_api::EditorError> {
        self.writes
            .lock()
            .map_err(|e| tandem_tool_api::EditorError::Unsupported(e.to_string()))?
            .push((path.to_path_buf(), text.to_owned()));
        Ok(())
    }
}

fn with_editor(fixture: &str, editor: FileServingEditor) -> (Harness, std::sync::Arc<FileServingEditor>) {
    let mut h = Harness::new(fixture, crate::all());
    let editor = std::sync::Arc::new(editor);
    h.ctx.editor = Some(std::sync::Arc::clone(&editor) as std::sync::Arc<dyn tandem_tool_api::EditorClient>);
    (h, editor)
}

#[test]
fn an_editor_that_serves_files_is_read_and_written_through_and_its_unsaved_text_wins() {
    let (h, editor) = with_editor("//- a.txt\none\ntwo\n", FileServingEditor::default());
    let path = h.root().join("a.txt");
    editor.buffers.lock().unwrap_or_else(|e| e.into_inner()).insert(path.clone(), "one\ntwo\nthree (unsaved)\n".into());
    let read = h.call("read", json!({ "file_path": "a.txt" }));
    assert!(read.output.contains("three (unsaved)") && read.metadata["source"] == "editor", "{read:?}");
    let edited = h.call("edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "ONE" }));
    assert_eq!(edited.error, None);
    assert_eq!(edited.metadata["via"], "editor");
    let writes = editor.writes.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(writes, [(path.clone(), "ONE\ntwo\nthree (unsaved)\n".to_owned())]);
    // The editor writes the disk, not us.
    assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), "one\ntwo\n");
}

#[test]
fn a_buffer_that_changed_since_it_was_read_is_not_overwritten_through_the_editor() {
    // The edit reads once to stage its change; the second read (right before writing) differs.
    let (h, editor) =
        with_editor("//- a.txt\none\n", FileServingEditor { changed_after: Some(1), ..Default::default() });
    let result = h.call("edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "ONE" }));
    let error = result.error.unwrap_or_default();
    assert!(error.contains("changed since it was last read") && error.contains("nothing was written"), "{error}");
    assert!(editor.writes.lock().unwrap_or_else(|e| e.into_inner()).is_empty());
}

#[test]
fn a_file_with_a_byte_order_mark_keeps_it_when_written_through_the_editor() {
    let (h, editor) = with_editor("//- a.txt\n\u{feff}one\n", FileServingEditor::default());
    let result = h.call("edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "ONE" }));
    assert_eq!(result.error, None);
    let writes = editor.writes.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(writes.first().map(|(_, text)| text.as_str()), Some("\u{feff}ONE\n"));
}

/// Every commit records what it wrote: for each file, the hash of the bytes it replaced and of
/// the bytes it left (BOM and CRLF included, as a snapshot holds them), `None` for none.
#[test]
fn the_write_log_holds_the_hashes_of_the_bytes_replaced_and_left() {
    use tandem_text::ContentHash;
    let fixture = "
        //- gone.txt
        bye
        //- old_name.txt
        moving
        //- win.txt
        \u{feff}one<CR>
        two<CR>
    ";
    let mut h = Harness::new(fixture, crate::all());
    let log = std::sync::Arc::new(tandem_tool_api::WriteLog::default());
    h.ctx.writes = Some(std::sync::Arc::clone(&log));
    std::os::unix::fs::symlink("gone.txt", h.root().join("link")).unwrap_or_else(|e| panic!("{e}"));
    let hash = |path: &str| std::fs::read(h.root().join(path)).ok().map(|bytes| ContentHash::of(&bytes));
    let (win, old, gone) = (hash("win.txt"), hash("old_name.txt"), hash("gone.txt"));
    let patch = "diff --git a/old_name.txt b/new_name.txt
similarity index 100%
rename from old_name.txt
rename to new_name.txt
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";
    for (name, args) in [
        ("write", json!({"file_path": "win.txt", "content": "uno\ndos\n"})),
        ("write", json!({"file_path": "new.txt", "content": "fresh\n"})),
        ("apply_patch", json!({"patch": patch})),
        ("delete", json!({"file_path": "link"})),
    ] {
        assert_eq!(h.call(name, args).error, None, "{name}");
    }
    let at = |path: &str| h.root().join(path);
    let written = |path: &str, before, after| tandem_tool_api::Written { path: at(path), before, after };
    assert_eq!(
        log.take(),
        [
            written("win.txt", win, hash("win.txt")),
            written("new.txt", None, hash("new.txt")),
            written("new_name.txt", None, hash("new_name.txt")),
            written("old_name.txt", old, None),
            written("gone.txt", gone, None),
            written("link", Some(ContentHash::of(b"gone.txt")), None),
        ]
    );
    assert_eq!(hash("new_name.txt"), old);
}

/// A restore neither reads nor writes through a file that is now a link, or under one.
#[test]
fn a_restore_leaves_links_alone_and_names_them() {
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(outside.path().join("secret.txt"), "OUTSIDE\n").unwrap_or_else(|e| panic!("{e}"));
    let h = Harness::new("//- plain.txt\nnow\n", crate::all());
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), h.root().join("link.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(outside.path(), h.root().join("dir")).unwrap_or_else(|e| panic!("{e}"));
    let files = ["plain.txt", "link.txt", "dir/secret.txt"]
        .map(|p| crate::RestoreFile { path: h.root().join(p), content: Some(b"then\n".to_vec()) });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let output =
        runtime.block_on(crate::restore_files(&h.ctx, files.into())).unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(output.metadata["linked"], json!(["link.txt", "dir/secret.txt"]), "{}", output.output);
    assert!(!output.output.contains("OUTSIDE"), "{}", output.output);
    assert_eq!(std::fs::read_to_string(h.root().join("plain.txt")).unwrap_or_default(), "then\n");
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.txt")).unwrap_or_default(), "OUTSIDE\n");
}

/// An image of each format `read` returns as an image: its description as text, the bytes as
/// an `image` attachment; a file named like an image that is not one is read as any other file.
#[test]
fn read_returns_png_jpeg_gif_and_webp_as_images() {
    use base64::Engine as _;
    let h = Harness::new("//- notes.txt\nx\n", crate::all());
    let picture = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(6, 4, image::Rgb([200, 10, 10])));
    for (name, format, mime) in [
        ("a.png", image::ImageFormat::Png, "image/png"),
        ("b.JPG", image::ImageFormat::Jpeg, "image/jpeg"),
        ("c.gif", image::ImageFormat::Gif, "image/gif"),
        ("d.webp", image::ImageFormat::WebP, "image/webp"),
    ] {
        let mut bytes = Vec::new();
        assert!(picture.write_to(&mut std::io::Cursor::new(&mut bytes), format).is_ok(), "{name}");
        std::fs::write(h.root().join(name), &bytes).ok();
        let result = h.call("read", json!({ "file_path": name }));
        assert_eq!(result.error, None, "{name}");
        assert!(result.output.contains("6×4 px"), "{name}: {}", result.output);
        assert_eq!(result.metadata["mimeType"], mime);
        assert_eq!(result.attachments.len(), 1, "{name}");
        assert_eq!(result.attachments[0]["type"], "image");
        assert_eq!(result.attachments[0]["mimeType"], mime);
        let data = result.attachments[0]["data"].as_str().unwrap_or_default();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(data).ok(), Some(bytes), "{name}");
    }
    std::fs::write(h.root().join("fake.png"), "not an image\n").ok();
    let result = h.call("read", json!({ "file_path": "fake.png" }));
    assert!(result.output.contains("not an image") && result.attachments.is_empty(), "{}", result.output);
    // A cut-short image is refused as binary, with its type.
    std::fs::write(h.root().join("cut.png"), b"\x89PNG\r\n\x1a\n\0\0\0\0").ok();
    let result = h.call("read", json!({ "file_path": "cut.png" }));
    assert!(result.error.as_deref().is_some_and(|e| e.contains("binary file (PNG image")), "{:?}", result.error);
}

/// A file with a byte-order mark edited twice in a session: the first edit's stamp is of the
/// text the session now knows (as a read's is), so the second edit is not refused as stale.
#[test]
fn a_bom_file_edited_twice_in_a_session_is_not_stale() {
    let mut h = Harness::new("//- a.txt\n\u{feff}one\ntwo\n", crate::all());
    h.ctx.session_id = Some("s".into());
    assert!(h.call("read", json!({"file_path": "a.txt"})).error.is_none());
    let first = h.call("edit", json!({"file_path": "a.txt", "old_string": "one", "new_string": "ONE"}));
    assert!(first.error.is_none(), "{:?}", first.error);
    let second = h.call("edit", json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}));
    assert!(second.error.is_none(), "{:?}", second.error);
    let bytes = std::fs::read(h.root().join("a.txt")).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&bytes), "\u{feff}ONE\nTWO\n");
}
