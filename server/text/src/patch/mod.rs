//! Patches: unified diffs (`git diff`, `diff -u`) and the `*** Begin Patch` format, parsed and
//! applied to text. Pure: no IO; the caller reads and writes files.
