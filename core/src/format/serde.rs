//! `Serialize` and `Deserialize` (feature `serde`) for every owned filter
//! with a [`PortableHash`] hasher: a filter is its byte-format encoding
//! ([`crate::format`]), as serde bytes, so every serde format carries the
//! same checked, versioned bytes as [`Encode::to_bytes`] and reading goes
//! through the same checks as `from_bytes`.
//!
//! ```
//! use streambloom::hash::PortableHasher;
//! use streambloom::{Classic, ClassicParams};
//! let mut f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
//! f.insert("a");
//! let json = serde_json::to_string(&f).unwrap();
//! let g: Classic<_, PortableHasher> = serde_json::from_str(&json).unwrap();
//! assert_eq!(f, g);
//! assert!(serde_json::from_str::<Classic<_, PortableHasher>>("[1, 2, 3]").is_err());
//! # Ok::<(), streambloom::Error>(())
//! ```

use super::Encode;
use crate::hash::PortableHash;
use crate::importance::ImportanceBloom;
use crate::spectral::{Blocked, Counter, Policy, Spectral};
use crate::store::DefaultStorage;
use crate::{Classic, ReservoirBloom, StableBloom, TimingBloom, Width};
use alloc::vec::Vec;
use core::fmt;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;

/// Reads serde bytes, or a sequence of `u8` (formats without bytes).
struct Bytes;

impl<'de> Visitor<'de> for Bytes {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a streambloom filter's bytes")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element()? {
            v.push(b);
        }
        Ok(v)
    }
}

/// Both impls for a filter type: serialize its encoding, deserialize
/// through its `from_bytes`.
macro_rules! via_bytes {
    ($([$($g:tt)*] $ty:ty;)*) => {$(
        impl<$($g)*> serde::Serialize for $ty {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                s.serialize_bytes(&self.to_bytes())
            }
        }

        impl<'de, $($g)*> serde::Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let bytes = d.deserialize_bytes(Bytes)?;
                <$ty>::from_bytes(&bytes).map_err(de::Error::custom)
            }
        }
    )*};
}

via_bytes! {
    [H: PortableHash] Classic<DefaultStorage, H>;
    [W: Width, H: PortableHash] StableBloom<W, DefaultStorage, H>;
    [W: Width, H: PortableHash] ImportanceBloom<W, DefaultStorage, H>;
    [H: PortableHash] ReservoirBloom<DefaultStorage, H>;
    [P: Policy, W: Counter, H: PortableHash] Spectral<P, Blocked<W>, H>;
    [W: Width, H: PortableHash] TimingBloom<W, DefaultStorage, H>;
    [H: PortableHash] crate::Apbf<DefaultStorage, H>;
}

#[cfg(test)]
mod tests {
    use crate::hash::PortableHasher;
    use crate::spectral::{Blocked, RecurringMinimum, SpectralParams};
    use crate::timing::TimingParams;
    use crate::{Spectral, TimingBloom, W16, W32};

    #[test]
    fn filters_round_trip_through_json() {
        let rm = SpectralParams::new(1536, 3).with_policy(RecurringMinimum::new().with_trapping());
        let mut s =
            Spectral::<RecurringMinimum, Blocked<W32>, _>::with_hasher(rm, PortableHasher::new(5))
                .unwrap();
        s.insert_n("x", 4);
        let json = serde_json::to_string(&s).unwrap();
        let back: Spectral<RecurringMinimum, Blocked<W32>, PortableHasher> =
            serde_json::from_str(&json).unwrap();
        assert_eq!(back.estimate("x"), 4);
        let mut t = TimingBloom::<W16, _, _>::with_hasher(
            TimingParams::new(1024, 3, 50, 2, 1, 8),
            PortableHasher::new(5),
        )
        .unwrap();
        t.insert("y");
        let back: TimingBloom<W16, _, PortableHasher> =
            serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        let e =
            serde_json::from_str::<TimingBloom<W16, _, PortableHasher>>("[83, 66]").unwrap_err();
        assert!(std::format!("{e}").contains("too short"), "{e}");
    }
}
