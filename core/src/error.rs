//! The one error type of the public API: every constructor and every
//! operation that can be handed bad input returns it instead of panicking.
//! Each error names the parameter, the value given and what is allowed.

use core::fmt;

/// What went wrong.
///
/// ```
/// use streambloom::classic::{Classic, ClassicParams};
/// use streambloom::{Error, Value};
/// let e = Classic::new(ClassicParams::new(1024, 0), 7).unwrap_err();
/// assert_eq!(e, Error::Parameter { name: "k", given: Value::Int(0), allowed: "at least 1" });
/// assert_eq!(e.to_string(), "parameter `k` is 0: must be at least 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is out of its domain.
    Parameter {
        /// The parameter's name as in the constructor's docs (`"k"`, `"p"`, ...).
        name: &'static str,
        /// The value given.
        given: Value,
        /// What the parameter allows, e.g. `"at least 1"`.
        allowed: &'static str,
    },
    /// A slice has the wrong length: borrowed storage (in blocks) or a
    /// batch's output (in items).
    Length {
        /// Which slice (`"storage"`, `"duplicates"`, ...).
        name: &'static str,
        /// The length the operation needs.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// The allocator could not provide a filter's memory (owned storage, or
    /// a `store::HugePages` map): the machine lacks `bytes` bytes, or the
    /// allocator (or the kernel) refused them. Sizes past `isize::MAX` bytes never reach the allocator: they
    /// are a [`Error::Parameter`] error.
    Allocation {
        /// The bytes asked for.
        bytes: usize,
    },
    /// The kernel implementation asked for (`set_isa`) is not compiled for
    /// this target or this CPU does not run it ([`crate::Isa::is_available`]).
    /// The message lists the implementations this CPU does run.
    Unsupported {
        /// The implementation's name ([`crate::Isa::name`]).
        isa: &'static str,
    },
    /// Two filters cannot be combined (union, join, merge): their
    /// parameters, widths or seeds differ. `what` names the difference.
    Incompatible {
        /// The first difference found, e.g. `"seeds"`.
        what: &'static str,
    },
    /// Bytes given to a filter's `from_bytes` or `view_bytes` are not an
    /// encoding of that filter ([`crate::format`]); the reason says why.
    Malformed(crate::format::Malformed),
}

/// A parameter's value as given, in an [`Error::Parameter`].
///
/// ```
/// use streambloom::Value;
/// assert_eq!(Value::from(3u32), Value::Int(3));
/// assert_eq!(Value::from(0.5).to_string(), "0.5");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer parameter.
    Int(u128),
    /// A real parameter (a rate, a fraction).
    Real(f64),
}

impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(u128::from(v))
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(u128::from(v))
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Value {
        // `usize` is at most 64 bits on every Rust target.
        Value::Int(v as u128)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Real(v) => write!(f, "{v}"),
        }
    }
}

impl Error {
    /// A [`Error::Parameter`] error.
    pub(crate) fn param(
        name: &'static str,
        given: impl Into<Value>,
        allowed: &'static str,
    ) -> Error {
        Error::Parameter {
            name,
            given: given.into(),
            allowed,
        }
    }

    /// An [`Error::Length`] error unless `found == expected`.
    pub(crate) fn check_len(name: &'static str, expected: usize, found: usize) -> Result<()> {
        if expected == found {
            Ok(())
        } else {
            Err(Error::Length {
                name,
                expected,
                found,
            })
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parameter {
                name,
                given,
                allowed,
            } => write!(f, "parameter `{name}` is {given}: must be {allowed}"),
            Error::Length {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}` holds {found} elements, the operation needs {expected}"
            ),
            Error::Allocation { bytes } => {
                write!(
                    f,
                    "could not allocate {bytes} bytes for the filter's cells (ask for fewer cells or a smaller memory budget)"
                )
            }
            Error::Unsupported { isa } => {
                write!(
                    f,
                    "the {isa} kernels are not available on this CPU; it runs"
                )?;
                for (i, available) in crate::Isa::available().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{sep}{}", available.name())?;
                }
                Ok(())
            }
            Error::Incompatible { what } => write!(f, "filters differ in {what}"),
            Error::Malformed(why) => write!(f, "malformed filter bytes: {why}"),
        }
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
