//! Tests of the public API as a user's crate calls it (`streambloom::…`
//! paths only): the one construction pattern of every filter, the
//! `*_hash` forms fed any `u64`, and keys crafted against a known seed
//! (HashDoS).
//!
//! They live in the unit-test binary, not in integration-test binaries of
//! their own: that binary already instantiates every filter's hot loops
//! per instruction set, which an integration test compiled again (about a
//! minute of CPU in the README's test command). Not under Miri: safe code
//! through the public API, run natively.

mod construction;
mod hashdos;
mod pre_hashed;
