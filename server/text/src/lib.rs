//! Tandem's text layer: the buffer cache of editor documents, position encodings, file formats
//! (BOM, line endings, binary detection), content hashes and atomic disk writes.
//!
//! Architecture invariant: no async and no IO except the explicit disk reads and writes in
//! [`disk`]. Everything else is pure so it can be unit-tested, fuzzed and benchmarked.

mod cache;
pub mod disk;
mod encoding;
mod error;
mod format;
mod hash;
pub mod hunks;
mod lines;
pub mod matcher;
pub mod memory;
pub mod patch;
pub mod rebase;
mod typography;

pub use cache::{BufferCache, ContentChange, EditorDocument};
pub use encoding::{Position, PositionEncoding, char_to_position, minimal_change, position_to_char};
pub use error::TextError;
pub use format::{Decoded, FileFormat, LineEnding, clip, decode, describe_binary, image_media_type};
pub use hash::{ContentHash, Hashing};
pub use lines::Lines;
pub use ropey::Rope;
