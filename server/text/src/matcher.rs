//! Where an edit's `old_string` is in a text: exact, then a chain of fuzzy strategies.
