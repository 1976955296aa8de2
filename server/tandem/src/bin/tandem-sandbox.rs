//! `tandem-sandbox --read-only -- PROGRAM ARGS…`: the read-only sandbox launcher on its own, a
//! small binary so that starting a sandboxed command costs little more than starting it.

#[path = "../sandbox.rs"]
#[expect(dead_code, reason = "the kernel probe is the main binary's")]
mod sandbox;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let mut read_only = false;
    for arg in args.by_ref() {
        match arg.to_str() {
            Some("--read-only") => read_only = true,
            Some("--") => break,
            _ => {
                eprintln!("usage: tandem-sandbox --read-only -- PROGRAM [ARGS…]");
                return ExitCode::from(2);
            }
        }
    }
    let argv: Vec<_> = args.collect();
    sandbox::run(read_only, &argv)
}
