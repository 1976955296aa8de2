//! `tandem-sandbox (--read-only | --workspace-write ROOT [--network]) -- PROGRAM ARGS…`: the
//! sandbox launcher on its own, a small binary so that starting a sandboxed command costs little
//! more than starting it.

#[path = "../sandbox.rs"]
#[expect(dead_code, reason = "the kernel probe is the main binary's")]
mod sandbox;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match sandbox::parse(&mut args) {
        Ok(policy) => sandbox::run(&policy, &args.collect::<Vec<_>>()),
        Err(usage) => {
            eprintln!("{usage}");
            ExitCode::from(2)
        }
    }
}
