//! The one error type of the public API: every constructor and every
//! operation that can be handed bad input returns it instead of panicking.

use core::fmt;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is out of its domain; `reason` says which rule it broke.
    Parameter {
        /// The parameter's name as in the constructor's docs (`"k"`, `"p"`, ...).
        name: &'static str,
        /// The rule, e.g. `"must be at least 1"`.
        reason: &'static str,
    },
    /// Borrowed storage holds the wrong number of blocks.
    StorageLength {
        /// Blocks the parameters call for.
        expected: usize,
        /// Blocks the storage holds.
        found: usize,
    },
    /// The allocator could not provide a filter's memory (owned storage
    /// only): the machine lacks `bytes` bytes, or the allocator refused
    /// them. Sizes past `isize::MAX` bytes never reach the allocator: they
    /// are a [`Error::Parameter`] error.
    Allocation {
        /// The bytes asked for.
        bytes: usize,
    },
    /// The kernel implementation asked for (`set_isa`) is not compiled for
    /// this target or this CPU does not run it ([`crate::Isa::is_available`]).
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
}

impl Error {
    pub(crate) const fn param(name: &'static str, reason: &'static str) -> Error {
        Error::Parameter { name, reason }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parameter { name, reason } => write!(f, "parameter `{name}` {reason}"),
            Error::StorageLength { expected, found } => {
                write!(
                    f,
                    "storage holds {found} blocks, the filter needs {expected}"
                )
            }
            Error::Allocation { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the filter")
            }
            Error::Unsupported { isa } => {
                write!(f, "the {isa} kernels are not available on this CPU")
            }
            Error::Incompatible { what } => write!(f, "filters differ in {what}"),
        }
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
