//! streambloom filters as mergeable aggregate state in DataFusion.
//!
//! A query over many partitions (threads here; machines under Ballista or
//! any engine that moves aggregate state as bytes) builds one filter: each
//! partition's accumulator builds a filter over its rows, its partial
//! state travels as the library's byte format (`streambloom::format`:
//! versioned, checked, the portable XXH3 hash, so states built on
//! different machines agree), and the final aggregation merges the
//! states with the library's own rules (`streambloom::Merge`). States with
//! other parameters, hashes or seeds are refused with a query error, not a
//! panic.
//!
//! Aggregates (each returns the filter as `Binary`, its byte format):
//!
//! - `bloom_agg(key)`: a [`Classic`] filter (merge: OR, exact);
//! - `spectral_agg(key)`: a [`Spectral`] filter, Minimum Selection (merge:
//!   counters add, exact) — `spectral_mi_agg(key)` for Minimal Increase
//!   (merge: counters add; never under the true count);
//! - `stable_agg(key)`: a [`StableBloom`] (merge: cell-wise max).
//!
//! Unions of filter values already built (kept in a table, one a day,
//! say), merged with the same rules: `bloom_union(filter)`,
//! `spectral_union(filter)`, `spectral_mi_union(filter)`,
//! `stable_union(filter)`. A value of other parameters or another seed is
//! a query error.
//!
//! Scalars over a filter value: `bloom_contains(filter, key)`,
//! `stable_contains(filter, key)`, `spectral_estimate(filter, key)` and
//! `spectral_at_least(filter, key, t)` (either Spectral policy's value; a
//! null `t` answers null, `t <= 0` true).
#![forbid(unsafe_code)]

pub mod dataset;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, StringArray, UInt32Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, ColumnarValue, ScalarUDF, Signature, SimpleAggregateUDF,
    TypeSignature, Volatility, create_udf,
};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use streambloom::format::Encode;
use streambloom::hash::PortableHasher;
use streambloom::spectral::{Blocked, MinimalIncrease, MinimumSelection, SpectralParams};
use streambloom::stable::{Eviction, StableParams};
use streambloom::{Classic, ClassicParams, Layout, Merge, Spectral, StableBloom, W4, W32};

/// The Classic filter of `bloom_agg`.
pub type Bloom = Classic<Vec<streambloom::Block>, PortableHasher>;
/// The Spectral filter of `spectral_agg`.
pub type Counts = Spectral<MinimumSelection, Blocked<W32>, PortableHasher>;
/// The Spectral filter of `spectral_mi_agg`.
pub type CountsMi = Spectral<MinimalIncrease, Blocked<W32>, PortableHasher>;
/// The Stable filter of `stable_agg`.
pub type Recent = StableBloom<W4, Vec<streambloom::Block>, PortableHasher>;

/// What every machine running the query must agree on: the filters'
/// parameters and the hash seed. Two engines registered with different
/// configurations build states that refuse to merge.
#[derive(Clone, Debug)]
pub struct Config {
    /// `bloom_agg`'s filter.
    pub bloom: ClassicParams,
    /// `spectral_agg`'s and `spectral_mi_agg`'s filters (counters, `k`).
    pub spectral: (usize, u32),
    /// `stable_agg`'s filter.
    pub stable: StableParams,
    /// The portable hash's seed.
    pub seed: u64,
}

impl Config {
    /// Filters planned for about `n` distinct keys: a Bloom filter at 1 %
    /// false positives, Spectral counters at 8 per key (`k = 4`), a Stable
    /// filter of 4-bit cells at the same memory as the Bloom filter.
    pub fn for_keys(n: u64, seed: u64) -> Result<Config> {
        let bloom = ClassicParams::plan_with_layout(n.max(1), 0.01, Layout::TwoBlocks)
            .map_err(lib_error)?;
        let stable = StableParams {
            cells: (bloom.cells / 4).max(128),
            bits_per_cell: 3,
            k: 3,
            p: 10,
            eviction: Eviction::Random,
            layout: Layout::OneBlock,
        };
        Ok(Config {
            bloom,
            spectral: ((n as usize).saturating_mul(8).max(64), 4),
            stable,
            seed,
        })
    }

    fn hasher(&self) -> PortableHasher {
        PortableHasher::new(self.seed)
    }

    /// An empty `bloom_agg` filter.
    pub fn bloom(&self) -> Result<Bloom> {
        Classic::with_hasher(self.bloom, self.hasher()).map_err(lib_error)
    }

    /// An empty `spectral_agg` filter.
    pub fn counts(&self) -> Result<Counts> {
        let (m, k) = self.spectral;
        Spectral::with_hasher(SpectralParams::new(m, k), self.hasher()).map_err(lib_error)
    }

    /// An empty `spectral_mi_agg` filter.
    pub fn counts_mi(&self) -> Result<CountsMi> {
        let (m, k) = self.spectral;
        Spectral::with_hasher(SpectralParams::new(m, k), self.hasher()).map_err(lib_error)
    }

    /// An empty `stable_agg` filter.
    pub fn recent(&self) -> Result<Recent> {
        StableBloom::with_hasher(self.stable, self.hasher()).map_err(lib_error)
    }
}

/// A library error as a query error.
fn lib_error(e: streambloom::Error) -> DataFusionError {
    DataFusionError::Execution(format!("streambloom: {e}"))
}

/// The string keys of an argument column (any string type), nulls
/// skipped.
fn keys(array: &ArrayRef) -> Result<StringArray> {
    let utf8 = cast(array, &DataType::Utf8)?;
    Ok(utf8.as_string::<i32>().clone())
}

/// A filter an accumulator builds: how it takes a key, and how it is
/// read back from a partial state.
trait Aggregated: Encode + Merge + Send + Sync + std::fmt::Debug + 'static {
    fn add(&mut self, key: &str);
    fn read(bytes: &[u8]) -> streambloom::Result<Self>
    where
        Self: Sized;
}

/// `Aggregated` for a filter type whose `$add` method takes a key.
macro_rules! aggregated {
    ($($filter:ty => $add:ident),* $(,)?) => {$(
        impl Aggregated for $filter {
            fn add(&mut self, key: &str) {
                self.$add(key);
            }
            fn read(bytes: &[u8]) -> streambloom::Result<Self> {
                <$filter>::from_bytes(bytes)
            }
        }
    )*};
}

aggregated!(Bloom => insert, Counts => insert, CountsMi => insert, Recent => observe);

/// The accumulator of every aggregate: one filter, its state its bytes.
#[derive(Debug)]
struct FilterAccumulator<F> {
    filter: F,
}

impl<F: Aggregated> Accumulator for FilterAccumulator<F> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let keys = keys(&values[0])?;
        for key in keys.iter().flatten() {
            self.filter.add(key);
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.filter.to_bytes())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.filter.encoded_len()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states: &BinaryArray = states[0].as_binary();
        for bytes in states.iter().flatten() {
            let other = F::read(bytes).map_err(lib_error)?;
            self.filter.merge(&other).map_err(lib_error)?;
        }
        Ok(())
    }
}

/// The accumulator of the unions: its input rows are filter values, each
/// merged in as a partial state is.
#[derive(Debug)]
struct UnionAccumulator<F>(FilterAccumulator<F>);

impl<F: Aggregated> Accumulator for UnionAccumulator<F> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.0.merge_batch(values)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.0.evaluate()
    }

    fn size(&self) -> usize {
        self.0.size()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.0.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.0.merge_batch(states)
    }
}

/// An aggregate named `name` over one column of `inputs` types, whose
/// accumulator `make` returns and whose state is one filter value.
fn udaf(
    name: &str,
    inputs: Vec<DataType>,
    make: impl Fn() -> Result<Box<dyn Accumulator>> + Send + Sync + 'static,
) -> AggregateUDF {
    let signature = Signature::one_of(
        inputs
            .into_iter()
            .map(|t| TypeSignature::Exact(vec![t]))
            .collect(),
        Volatility::Immutable,
    );
    let state = vec![Arc::new(Field::new(
        format!("{name}_state"),
        DataType::Binary,
        true,
    ))];
    AggregateUDF::from(SimpleAggregateUDF::new_with_signature(
        name,
        signature,
        DataType::Binary,
        Arc::new(move |_| make()),
        state,
    ))
}

/// An aggregate named `name` over one string column, building the filter
/// `make` returns.
fn aggregate<F: Aggregated>(
    name: &str,
    make: impl Fn() -> Result<F> + Send + Sync + 'static,
) -> AggregateUDF {
    let strings = vec![DataType::Utf8, DataType::Utf8View, DataType::LargeUtf8];
    udaf(name, strings, move || {
        Ok(Box::new(FilterAccumulator { filter: make()? }))
    })
}

/// The union named `name` of a column of filter values, into the filter
/// `make` returns (empty, of the configured parameters).
fn union<F: Aggregated>(
    name: &str,
    make: impl Fn() -> Result<F> + Send + Sync + 'static,
) -> AggregateUDF {
    udaf(name, vec![DataType::Binary], move || {
        Ok(Box::new(UnionAccumulator(FilterAccumulator {
            filter: make()?,
        })))
    })
}

/// A Spectral filter value of either policy, as `spectral_estimate` and
/// `spectral_at_least` read it.
#[derive(Debug)]
enum AnyCounts {
    Ms(Counts),
    Mi(CountsMi),
}

impl AnyCounts {
    fn read(bytes: &[u8]) -> streambloom::Result<Self> {
        match Counts::from_bytes(bytes) {
            Ok(f) => Ok(AnyCounts::Ms(f)),
            Err(first) => CountsMi::from_bytes(bytes)
                .map(AnyCounts::Mi)
                .map_err(|_| first),
        }
    }

    fn estimate(&self, key: &str) -> u32 {
        match self {
            AnyCounts::Ms(f) => f.estimate(key),
            AnyCounts::Mi(f) => f.estimate(key),
        }
    }

    fn at_least(&self, key: &str, t: u32) -> bool {
        match self {
            AnyCounts::Ms(f) => f.at_least(key, t),
            AnyCounts::Mi(f) => f.at_least(key, t),
        }
    }
}

/// A scalar function of a filter value and a key column (and more
/// arguments), answering each row with `answer(filter, key, row)`.
fn query<F, T>(
    args: &[ColumnarValue],
    read: impl Fn(&[u8]) -> streambloom::Result<F>,
    answer: impl Fn(&F, &str, usize) -> Option<T>,
    collect: impl Fn(Vec<Option<T>>) -> ArrayRef,
) -> Result<ColumnarValue> {
    let rows = rows(args);
    let keys = keys(&args[1].clone().into_array(rows)?)?;
    let mut out = Vec::with_capacity(rows);
    match &args[0] {
        // A filter given once (a literal, a parameter): decoded once, and
        // never repeated per row (a large filter repeated over many rows
        // would overflow a binary column's 32-bit offsets).
        ColumnarValue::Scalar(filter) => {
            let filter = match filter {
                ScalarValue::Binary(b)
                | ScalarValue::LargeBinary(b)
                | ScalarValue::BinaryView(b) => b,
                other => {
                    return Err(DataFusionError::Execution(format!(
                        "a filter is binary, not {}",
                        other.data_type()
                    )));
                }
            };
            let filter = filter
                .as_deref()
                .map(&read)
                .transpose()
                .map_err(lib_error)?;
            for row in 0..rows {
                out.push(match &filter {
                    Some(f) if !keys.is_null(row) => answer(f, keys.value(row), row),
                    _ => None,
                });
            }
        }
        ColumnarValue::Array(filters) => {
            let filters: &BinaryArray = filters.as_binary();
            // A filter column is usually one value repeated: decode each
            // run of equal values once.
            let mut cached: Option<(&[u8], F)> = None;
            for row in 0..rows {
                if filters.is_null(row) || keys.is_null(row) {
                    out.push(None);
                    continue;
                }
                let bytes = filters.value(row);
                if cached.as_ref().is_none_or(|(b, _)| *b != bytes) {
                    cached = Some((bytes, read(bytes).map_err(lib_error)?));
                }
                let (_, filter) = cached.as_ref().expect("set above");
                out.push(answer(filter, keys.value(row), row));
            }
        }
    }
    Ok(ColumnarValue::Array(collect(out)))
}

/// The rows of a call: any array argument's length, else one.
fn rows(args: &[ColumnarValue]) -> usize {
    args.iter()
        .find_map(|a| match a {
            ColumnarValue::Array(a) => Some(a.len()),
            ColumnarValue::Scalar(_) => None,
        })
        .unwrap_or(1)
}

fn booleans(v: Vec<Option<bool>>) -> ArrayRef {
    Arc::new(BooleanArray::from(v))
}

fn scalar(
    name: &str,
    inputs: Vec<DataType>,
    output: DataType,
    f: impl Fn(&[ColumnarValue]) -> Result<ColumnarValue> + Send + Sync + 'static,
) -> ScalarUDF {
    create_udf(name, inputs, output, Volatility::Immutable, Arc::new(f))
}

/// Registers every function with `config`'s filters on `ctx`.
pub fn register(ctx: &SessionContext, config: &Config) {
    let c = config.clone();
    ctx.register_udaf(aggregate("bloom_agg", move || c.bloom()));
    let c = config.clone();
    ctx.register_udaf(aggregate("spectral_agg", move || c.counts()));
    let c = config.clone();
    ctx.register_udaf(aggregate("spectral_mi_agg", move || c.counts_mi()));
    let c = config.clone();
    ctx.register_udaf(aggregate("stable_agg", move || c.recent()));
    let c = config.clone();
    ctx.register_udaf(union("bloom_union", move || c.bloom()));
    let c = config.clone();
    ctx.register_udaf(union("spectral_union", move || c.counts()));
    let c = config.clone();
    ctx.register_udaf(union("spectral_mi_union", move || c.counts_mi()));
    let c = config.clone();
    ctx.register_udaf(union("stable_union", move || c.recent()));
    let key = DataType::Utf8;
    ctx.register_udf(scalar(
        "bloom_contains",
        vec![DataType::Binary, key.clone()],
        DataType::Boolean,
        |args| query(args, Bloom::read, |f, k, _| Some(f.contains(k)), booleans),
    ));
    ctx.register_udf(scalar(
        "stable_contains",
        vec![DataType::Binary, key.clone()],
        DataType::Boolean,
        |args| query(args, Recent::read, |f, k, _| Some(f.contains(k)), booleans),
    ));
    ctx.register_udf(scalar(
        "spectral_estimate",
        vec![DataType::Binary, key.clone()],
        DataType::UInt32,
        |args| {
            query(
                args,
                AnyCounts::read,
                |f, k, _| Some(f.estimate(k)),
                |v| Arc::new(UInt32Array::from(v)),
            )
        },
    ));
    ctx.register_udf(scalar(
        "spectral_at_least",
        vec![DataType::Binary, key, DataType::Int64],
        DataType::Boolean,
        |args| {
            let t = args[2].clone().into_array(rows(args))?;
            let t = cast(&t, &DataType::Int64)?;
            let t = t
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .clone();
            query(
                args,
                AnyCounts::read,
                move |f, k, row| {
                    let row = row.min(t.len().saturating_sub(1));
                    if t.is_null(row) {
                        return None;
                    }
                    let t = t.value(row);
                    Some(t <= 0 || f.at_least(k, u32::try_from(t).unwrap_or(u32::MAX)))
                },
                booleans,
            )
        },
    ));
}
