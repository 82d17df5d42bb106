//! Builds streambloom filters as DataFusion aggregates over a real
//! multi-file dataset (the `href` targets of the Rust toolchain's HTML
//! docs, split into CSV files), with 1 to N partitions, and prints beside
//! an exact `GROUP BY` / `COUNT(DISTINCT)`: the filters' false-positive
//! and over-count rates against the predicted ones, the state's size
//! against the exact result's, whether the merged filters equal the
//! single-partition ones, and the time per partition count.
//!
//! ```text
//! cargo run --release -- [--pages N (default: all)] [--files N (8)] [--partitions N (cores)] [--repeat N (7)]
//! ```
#![forbid(unsafe_code)]

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::execution::FunctionRegistry;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext, col, lit};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use streambloom::W32;
use streambloom::analysis::spectral::layout_error;
use streambloom::format::Encode;
use streambloom_datafusion::{Bloom, Config, Counts, dataset, register};

struct Args {
    pages: usize,
    files: usize,
    partitions: usize,
    repeat: usize,
}

fn args() -> Result<Args> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut a = Args {
        pages: usize::MAX,
        files: 8,
        partitions: cores,
        repeat: 7,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&v| v > 0)
            .ok_or_else(|| DataFusionError::Plan(format!("{flag} needs a positive number")))?;
        match flag.as_str() {
            "--pages" => a.pages = value,
            "--files" => a.files = value,
            "--partitions" => a.partitions = value,
            "--repeat" => a.repeat = value,
            _ => return Err(DataFusionError::Plan(format!("unknown option {flag}"))),
        }
    }
    Ok(a)
}

/// The toolchain's HTML docs.
fn docs() -> Result<PathBuf> {
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()?;
    let root =
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("share/doc/rust/html");
    if root.is_dir() {
        Ok(root)
    } else {
        Err(DataFusionError::Plan(format!(
            "no HTML docs at {}: `rustup component add rust-docs`",
            root.display()
        )))
    }
}

async fn context(dir: &str, partitions: usize, config: &Config) -> Result<SessionContext> {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    ctx.register_csv("hrefs", dir, CsvReadOptions::new().file_extension(".csv"))
        .await?;
    register(&ctx, config);
    Ok(ctx)
}

/// The single row of a query, column by column.
async fn row(ctx: &SessionContext, sql: &str) -> Result<Vec<ScalarValue>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .ok_or_else(|| DataFusionError::Execution(format!("no row from {sql}")))?;
    (0..batch.num_columns())
        .map(|c| ScalarValue::try_from_array(batch.column(c), 0))
        .collect()
}

fn int(v: &ScalarValue) -> u64 {
    match v {
        ScalarValue::Int64(Some(x)) => *x as u64,
        ScalarValue::UInt64(Some(x)) => *x,
        _ => 0,
    }
}

fn float(v: &ScalarValue) -> f64 {
    match v {
        ScalarValue::Float64(Some(x)) => *x,
        _ => f64::NAN,
    }
}

fn bytes(v: &ScalarValue) -> Vec<u8> {
    match v {
        ScalarValue::Binary(Some(b)) => b.clone(),
        _ => Vec::new(),
    }
}

const AGGREGATE: &str = "SELECT bloom_agg(href), spectral_agg(href), stable_agg(href) FROM hrefs";

#[tokio::main]
async fn main() -> Result<()> {
    let a = args()?;
    let pages = dataset::html_files(&docs()?, a.pages)?;
    let dir = std::env::temp_dir().join("streambloom-datafusion-hrefs");
    let _ = std::fs::remove_dir_all(&dir);
    let rows = dataset::write_csv(&pages, &dir, a.files)?;
    let dir_s = dir.to_string_lossy().into_owned();
    println!(
        "dataset: {rows} hrefs from {} HTML pages of the Rust docs, in {} CSV files",
        pages.len(),
        a.files
    );

    // The exact answers, and the filters planned for the distinct count.
    let exact_ctx = context(&dir_s, a.partitions, &Config::for_keys(1, 0)?).await?;
    let exact = row(
        &exact_ctx,
        "SELECT COUNT(*), COUNT(DISTINCT href), \
         (SELECT SUM(LENGTH(href) + 8) FROM (SELECT DISTINCT href FROM hrefs)) FROM hrefs",
    )
    .await?;
    let (n_rows, distinct, exact_bytes) = (int(&exact[0]), int(&exact[1]), int(&exact[2]));
    let config = Config::for_keys(distinct, 0x5EED)?;
    println!(
        "exact: {n_rows} rows, {distinct} distinct; GROUP BY result about {exact_bytes} bytes (each href and an 8-byte count)"
    );

    // Time per partition count, interleaved over `repeat` rounds.
    let mut times = vec![Vec::new(); a.partitions];
    let mut states: Vec<Vec<ScalarValue>> = vec![Vec::new(); a.partitions];
    let contexts = {
        let mut v = Vec::new();
        for p in 1..=a.partitions {
            v.push(context(&dir_s, p, &config).await?);
        }
        v
    };
    for _ in 0..a.repeat {
        for (p, ctx) in contexts.iter().enumerate() {
            let t = Instant::now();
            states[p] = row(ctx, AGGREGATE).await?;
            times[p].push(t.elapsed().as_secs_f64());
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let base = median(&mut times[0]);
    println!(
        "\n| partitions | median s (of {}) | speed-up | bloom and spectral states equal the 1-partition ones |",
        a.repeat
    );
    println!("|---|---|---|---|");
    for p in 0..a.partitions {
        let t = median(&mut times[p]);
        let same = bytes(&states[p][0]) == bytes(&states[0][0])
            && bytes(&states[p][1]) == bytes(&states[0][1]);
        println!(
            "| {} | {t:.3} | {:.2}× | {} |",
            p + 1,
            base / t,
            if same { "yes" } else { "NO" }
        );
    }

    // Accuracy, through the scalar functions, on the last context. The
    // filters built above are passed to the queries as literals, as a
    // user passes a filter shipped from elsewhere: one value, decoded once
    // (joined to every row instead, a large filter would be copied into
    // every row of the join's output).
    let ctx = contexts.last().expect("at least one partition");
    let (bloom_bytes, counts_bytes) = (bytes(&states[0][0]), bytes(&states[0][1]));
    let probes: Vec<String> = (0..100_000).map(|i| format!("absent/{i}.html")).collect();
    let probes = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("key", DataType::Utf8, false)])),
        vec![Arc::new(StringArray::from(probes))],
    )?;
    ctx.register_batch("probes", probes)?;
    let hits = ctx.table("probes").await?.select(vec![
        ctx.udf("bloom_contains")?
            .call(vec![lit(bloom_bytes.clone()), col("key")])
            .alias("hit"),
    ])?;
    ctx.register_table("hits", hits.into_view())?;
    let fp = row(
        ctx,
        "SELECT AVG(CASE WHEN hit THEN 1.0 ELSE 0.0 END) FROM hits",
    )
    .await?;
    let truth = ctx
        .sql("SELECT href, COUNT(*) AS n FROM hrefs GROUP BY href")
        .await?;
    let estimates = truth.select(vec![
        col("n"),
        ctx.udf("spectral_estimate")?
            .call(vec![lit(counts_bytes.clone()), col("href")])
            .alias("estimate"),
        ctx.udf("spectral_at_least")?
            .call(vec![lit(counts_bytes.clone()), col("href"), col("n")])
            .alias("at_least"),
    ])?;
    ctx.register_table("estimates", estimates.into_view())?;
    let over = row(
        ctx,
        "SELECT AVG(CASE WHEN estimate > n THEN 1.0 ELSE 0.0 END), \
                SUM(CASE WHEN estimate < n THEN 1 ELSE 0 END), \
                AVG(CASE WHEN at_least THEN 1.0 ELSE 0.0 END) \
         FROM estimates",
    )
    .await?;
    let bloom =
        Bloom::from_bytes(&bloom_bytes).map_err(|e| DataFusionError::External(Box::new(e)))?;
    let counts =
        Counts::from_bytes(&counts_bytes).map_err(|e| DataFusionError::External(Box::new(e)))?;
    let blocks = counts.blocks().len();
    let predicted_over = layout_error::<W32>(counts.params().layout, distinct, blocks, counts.k());
    let probes_n = 100_000f64;
    let fp_rate = float(&fp[0]);
    println!(
        "\n| filter | measured | predicted | 95 % band of the measurement | state bytes | exact result bytes |"
    );
    println!("|---|---|---|---|---|---|");
    let band = |p: f64, n: f64| 1.96 * (p * (1.0 - p) / n).sqrt();
    let pb = bloom.predicted_fpr(distinct);
    println!(
        "| bloom_agg: false positives of {probes_n} absent keys | {fp_rate:.4} | {pb:.4} | ±{:.4} | {} | {exact_bytes} |",
        band(pb, probes_n),
        bloom.encoded_len()
    );
    println!(
        "| spectral_agg: share of distinct keys over-counted | {:.4} | {predicted_over:.4} | ±{:.4} | {} | {exact_bytes} |",
        float(&over[0]),
        band(predicted_over, distinct as f64),
        counts.encoded_len()
    );
    println!(
        "\nspectral_agg under-counted {} keys (Minimum Selection never does); spectral_at_least(filter, key, true count) held for {:.4} of them",
        int(&over[1]),
        float(&over[2])
    );
    let recent = bytes(&states[0][2]).len();
    println!("stable_agg state: {recent} bytes");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
