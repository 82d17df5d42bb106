//! The streambloom benchmark driver.
#![forbid(unsafe_code)]

fn main() {}
