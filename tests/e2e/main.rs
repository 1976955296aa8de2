//! End-to-end tests: the real `tandem` binary over stdio, driven by a real LSP client that
//! plays the editor (tests/support). Real files in temporary directories.

#[path = "../support/mod.rs"]
mod support;

mod acp;
mod agent;
mod bad_input;
mod cancel;
mod checkpoints;
mod cli;
mod clone;
mod commands;
mod crash;
mod docs;
mod foresight;
mod guidance;
mod headless;
mod images;
mod integrity;
mod lsp_files;
mod lsp_order;
mod lsp_protocol;
mod lsp_proxy;
mod mcp;
mod nvim;
mod policy;
mod project;
mod repo_map;
mod repo_programs;
mod restore_safety;
mod run_cmd;
mod session_tools;
mod shell;
mod telemetry;
mod tmux;
mod trust;
mod vscode;
mod warm;
mod web;
mod worktree_review;
