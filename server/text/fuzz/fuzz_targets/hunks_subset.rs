//! `hunks::diff(old, new)` then `apply_subset` with the input split at `0xFF` bytes into old,
//! new (decoded lossily) and a mask whose bits pick the accepted hunks. All ids give `new`, none
//! gives `old`, ids are `h1`, `h2`, … in order, and an id that is no hunk is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_text::hunks;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let old = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let new = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let mask = parts.next().unwrap_or_default();
    let bit = |i: usize| mask.get(i / 8 % mask.len().max(1)).is_some_and(|b| b >> (i % 8) & 1 == 1);

    let diff = hunks::diff("f", &old, &new);
    assert_eq!(diff.is_empty(), old == new, "hunks exactly when the texts differ");
    assert_eq!(diff.unified.is_empty(), diff.hunks.is_empty());
    let _ = hunks::stats(&diff);
    let ids: Vec<&str> = diff.hunks.iter().map(|h| h.id.as_str()).collect();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(*id, format!("h{}", i + 1), "ids in order");
    }

    assert_eq!(hunks::apply_subset(&old, &new, &ids).as_deref(), Ok(&*new), "all hunks give new");
    assert_eq!(hunks::apply_subset(&old, &new, &[]).as_deref(), Ok(&*old), "no hunk gives old");
    let chosen: Vec<&str> = ids.iter().enumerate().filter(|(i, _)| bit(*i)).map(|(_, id)| *id).collect();
    let partial = hunks::apply_subset(&old, &new, &chosen);
    assert!(partial.is_ok(), "subset {chosen:?}: {partial:?}");
    // Duplicates are harmless.
    let twice: Vec<&str> = chosen.iter().chain(&chosen).copied().collect();
    assert_eq!(hunks::apply_subset(&old, &new, &twice), partial, "duplicate ids");
    let unknown = format!("h{}", ids.len() + 1);
    assert!(hunks::apply_subset(&old, &new, &[unknown.as_str()]).is_err(), "{unknown} is no hunk");
});
