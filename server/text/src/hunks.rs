//! Hunks of a staged change: a unified diff with stable hunk ids, and applying a subset.
