//! The read-only sandbox launcher, `tandem-sandbox --read-only -- PROGRAM ARGS…` (also
//! `tandem sandbox`, hidden): restricts itself with Landlock, then
//! runs the program, which inherits the restriction with all its children. Read-only: the whole
//! file system readable, writes only to `/dev/null` and the like, no TCP bind or connect.
//! `probe` tells whether this kernel can enforce that.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, RulesetStatus, path_beneath_rules,
};

/// The oldest interface that can enforce both halves (files and TCP).
const NEEDED: ABI = ABI::V4;
/// Devices a read-only command may still write to.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

fn restrict_read_only(level: CompatLevel) -> Result<RestrictionStatus, RulesetError> {
    let abi = ABI::V7;
    Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(NEEDED))?
        .handle_access(AccessNet::from_all(NEEDED))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, AccessFs::from_file(abi)))?
        .restrict_self()
}

/// Whether this kernel can enforce the read-only sandbox (files and TCP); the reason if not.
pub fn probe() -> Result<(), String> {
    // A ruleset created with hard requirements, never applied: it only asks the kernel.
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(NEEDED))
        .and_then(|r| r.handle_access(AccessNet::from_all(NEEDED)))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|err| format!("Landlock with file and network rules (ABI 4, Linux 6.7+) is not available: {err}"))
}

/// Restricts this process and runs `argv`; returns only on failure.
pub fn run(read_only: bool, argv: &[OsString]) -> ExitCode {
    let Some((program, args)) = argv.split_first() else {
        eprintln!("tandem sandbox: no program to run");
        return ExitCode::from(2);
    };
    if !read_only {
        eprintln!("tandem sandbox: only --read-only is supported");
        return ExitCode::from(2);
    }
    match restrict_read_only(CompatLevel::HardRequirement) {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
        Ok(_) => {
            eprintln!("tandem sandbox: the kernel did not enforce the sandbox; not running the command");
            return ExitCode::from(126);
        }
        Err(err) => {
            eprintln!("tandem sandbox: cannot set up the sandbox: {err}; not running the command");
            return ExitCode::from(126);
        }
    }
    let err = std::process::Command::new(program).args(args).exec();
    eprintln!("tandem sandbox: cannot run {}: {err}", program.to_string_lossy());
    ExitCode::from(127)
}
