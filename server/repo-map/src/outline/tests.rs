use super::*;

/// `keyword name` of each definition, nested ones after a `>` per level.
fn defs(file: &str, text: &str) -> Vec<String> {
    let lang = Lang::of(file).unwrap_or_else(|| panic!("no language for {file}"));
    let outline = outline(lang, text);
    outline
        .defs
        .iter()
        .map(|d| {
            let mut depth = 0;
            let mut parent = d.parent;
            while let Some(p) = parent {
                depth += 1;
                parent = outline.defs.get(p as usize).and_then(|d| d.parent);
            }
            format!("{}{} {}", ">".repeat(depth), d.keyword, d.name)
        })
        .collect()
}

fn refs(file: &str, text: &str) -> Vec<String> {
    let lang = Lang::of(file).unwrap_or_else(|| panic!("no language for {file}"));
    outline(lang, text).refs.into_iter().map(|(name, _)| name).collect()
}

#[test]
fn rust() {
    let text = "//! Docs.\npub struct Ast { kind: Kind }\npub enum Kind { A }\npub trait Walk { fn walk(&self); }\nimpl Walk for Ast {\n    fn walk(&self) { helper(self.kind) }\n}\npub const MAX: usize = 3;\nstatic NAME: &str = \"x\";\npub type Res<T> = Result<T, Error>;\nmacro_rules! m { () => {} }\nmod inner { pub fn deep() {} }\nfn helper(k: Kind) -> Ast { Ast::new(k) }\n";
    assert_eq!(
        defs("lib.rs", text),
        [
            "struct Ast",
            "enum Kind",
            "trait Walk",
            ">fn walk",
            "impl Ast",
            ">fn walk",
            "const MAX",
            "static NAME",
            "type Res",
            "macro_rules m",
            "mod inner",
            ">fn deep",
            "fn helper"
        ]
    );
    let refs = refs("lib.rs", text);
    for name in ["Kind", "helper", "Ast", "new", "Walk", "kind", "Result", "Error"] {
        assert!(refs.contains(&name.to_owned()), "{name} in {refs:?}");
    }
    let methods = outline(Lang::Rust, text).defs.iter().filter(|d| d.kind == Kind::Method).count();
    assert_eq!(methods, 2);
}

#[test]
fn python() {
    let text = "\"\"\"Module.\"\"\"\nMAX_SIZE = 3\nclass Runner(Base):\n    def run(self):\n        helper()\n\n@decorated\ndef helper():\n    return Runner()\n";
    assert_eq!(defs("tool.py", text), ["const MAX_SIZE", "class Runner", ">def run", "def helper"]);
    let outline = outline(Lang::Python, text);
    assert_eq!(outline.defs[2].kind, Kind::Method);
    assert_eq!(outline.defs[2].signature, "    def run(self):");
    assert!(refs("tool.py", text).contains(&"Base".to_owned()));
}

#[test]
fn javascript() {
    let text = "/** Client. */\nexport class Client {\n  send(req) { return encode(req); }\n}\nexport function encode(x) {}\nconst handler = (e) => e;\nexport const VERSION = 1;\n";
    assert_eq!(
        defs("index.js", text),
        ["class Client", ">method send", "function encode", "function handler", "const VERSION"]
    );
}

#[test]
fn typescript_and_tsx() {
    let text = "export interface Options { debug: boolean }\nexport type Id = string;\nexport enum Mode { A }\nexport class Client {\n  send(o: Options): Id { return ''; }\n}\nexport function make(): Client { return new Client(); }\nnamespace Util { export const X = 1; }\n";
    let want = [
        "interface Options",
        "type Id",
        "enum Mode",
        "class Client",
        ">method send",
        "function make",
        "namespace Util",
        ">const X",
    ];
    assert_eq!(defs("index.ts", text), want);
    let tsx =
        "export function App(props: Props) { return <div>{props.name}</div>; }\ninterface Props { name: string }\n";
    assert_eq!(defs("app.tsx", tsx), ["function App", "interface Props"]);
    assert!(refs("index.ts", text).contains(&"Options".to_owned()));
}

#[test]
fn go() {
    let text = "// Package server serves.\npackage server\n\ntype Server struct{}\ntype Handler interface { Serve() }\nfunc (s *Server) Start() error { return listen() }\nfunc New() *Server { return &Server{} }\nconst Port = 80\n";
    assert_eq!(defs("server.go", text), ["type Server", "type Handler", "func Start", "func New", "const Port"]);
    assert_eq!(outline(Lang::Go, text).defs[1].kind, Kind::Interface);
}

#[test]
fn c() {
    let text = "#include <stdlib.h>\n#define BUF_MIN 16\nstruct buf {\n  char *data;\n};\ntypedef struct buf buf_t;\nenum color { RED };\nstatic int grow(struct buf *b, size_t n) {\n  return resize(b, n);\n}\nint buf_len(const struct buf *b);\n";
    assert_eq!(
        defs("buf.c", text),
        ["#define BUF_MIN", "struct buf", "type buf_t", "enum color", "function grow", "function buf_len"]
    );
}

#[test]
fn cpp() {
    let text = "namespace geo {\nclass Shape {\n public:\n  virtual double area() const;\n};\nstruct Point { int x; };\ndouble Shape::area() const { return 0; }\nusing Id = int;\n}\n";
    assert_eq!(
        defs("shape.cpp", text),
        ["namespace geo", ">class Shape", ">>method area", ">struct Point", ">method area", ">type Id"]
    );
}

#[test]
fn java() {
    let text = "package a;\npublic class Store implements Repo {\n  static final int MAX_ITEMS = 3;\n  public void save(Item i) { validate(i); }\n}\ninterface Repo { void save(Item i); }\nenum State { ON }\nrecord Pair(int a, int b) {}\n";
    assert_eq!(
        defs("Store.java", text),
        [
            "class Store",
            ">const MAX_ITEMS",
            ">method save",
            "interface Repo",
            ">method save",
            "enum State",
            "record Pair"
        ]
    );
}

#[test]
fn ruby() {
    let text = "# Billing.\nmodule Billing\n  RATE = 3\n  class Invoice < Base\n    def total\n      compute(items)\n    end\n    def self.build; end\n  end\nend\n";
    assert_eq!(
        defs("billing.rb", text),
        ["module Billing", ">const RATE", ">class Invoice", ">>def total", ">>def build"]
    );
}

#[test]
fn nothing_to_outline_is_an_empty_outline() {
    assert_eq!(outline(Lang::Rust, ""), Outline::default());
    // A file that does not parse still yields what parses.
    assert_eq!(defs("x.rs", "fn ok() {}\nfn broken( {\n").first().map(String::as_str), Some("fn ok"));
}

#[test]
fn cpp_has_the_c_preprocessor() {
    assert_eq!(
        defs("limits.cpp", "#define LIMIT 3\n#define SQUARE(x) ((x) * (x))\n"),
        ["#define LIMIT", "#define SQUARE"]
    );
}

proptest::proptest! {
    /// One pass counts what the words and the compounds of the text say, one by one.
    #[test]
    fn one_pass_counts_the_words_and_the_compounds(text in "[a-zA-ZÉé0-9_ .:/-]{0,60}") {
        let (words, idents) = text_counts(&text);
        let mut expected_words: HashMap<String, u32> = HashMap::new();
        for word in crate::words::split(&text) {
            if word.len() >= 2 && word.len() <= 40 && !word.bytes().all(|b| b.is_ascii_digit()) {
                *expected_words.entry(word.to_lowercase()).or_default() += 1;
            }
        }
        let mut expected_idents: HashMap<String, u32> = HashMap::new();
        for ident in crate::words::compounds(&text).filter(|i| i.len() <= MAX_NAME_LEN) {
            *expected_idents.entry(crate::words::joined(&ident)).or_default() += 1;
        }
        proptest::prop_assert_eq!(words, most_frequent(expected_words));
        proptest::prop_assert_eq!(idents, most_frequent(expected_idents));
    }
}
