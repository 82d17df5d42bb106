//! The aggregates over several partitions give the filter one partition
//! builds (cell for cell, where the merge is exact), their states survive
//! Arrow IPC (what a distributed executor ships) exactly, and bad filter
//! bytes are a query error, not a panic.

use datafusion::arrow::array::{Array, AsArray, BinaryArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{Result, ScalarValue};
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use streambloom_datafusion::{Bloom, Config, Counts, Recent, register};

/// Four CSV files of keys `k0..k{n}`, key `i` repeated `i % 5 + 1` times.
fn dataset(name: &str, n: usize) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("streambloom-df-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<_> = (0..4)
        .map(|i| {
            let mut f = std::fs::File::create(dir.join(format!("part-{i}.csv"))).unwrap();
            writeln!(f, "href").unwrap();
            f
        })
        .collect();
    let mut row = 0;
    for i in 0..n {
        for _ in 0..i % 5 + 1 {
            writeln!(files[row % 4], "k{i}").unwrap();
            row += 1;
        }
    }
    dir
}

async fn states(dir: &Path, partitions: usize, config: &Config) -> Result<Vec<Vec<u8>>> {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    ctx.register_csv("hrefs", dir.to_str().unwrap(), CsvReadOptions::new())
        .await?;
    register(&ctx, config);
    let batches = ctx
        .sql("SELECT bloom_agg(href), spectral_agg(href), stable_agg(href), spectral_mi_agg(href) FROM hrefs")
        .await?
        .collect()
        .await?;
    let b = &batches[0];
    Ok((0..b.num_columns())
        .map(|c| b.column(c).as_binary::<i32>().value(0).to_vec())
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_filters_equal_the_single_partition_ones() -> Result<()> {
    let dir = dataset("merge", 3000);
    let config = Config::for_keys(3000, 11)?;
    let one = states(&dir, 1, &config).await?;
    for partitions in [2, 4] {
        let many = states(&dir, partitions, &config).await?;
        assert_eq!(many[0], one[0], "bloom_agg with {partitions} partitions");
        assert_eq!(many[1], one[1], "spectral_agg with {partitions} partitions");
        // Stable's cell-wise max is not the one-partition filter (each
        // partition evicted on its own): its state must load. Minimal
        // Increase's sum is not exact either: it never under-counts.
        assert!(Recent::from_bytes(&many[2]).is_ok());
        let (mi, counts) = (
            streambloom_datafusion::CountsMi::from_bytes(&many[3]).unwrap(),
            Counts::from_bytes(&one[1]).unwrap(),
        );
        for i in 0..3000u32 {
            let key = format!("k{i}");
            let times = i % 5 + 1;
            assert!(mi.estimate(&key) >= times, "{key} under-counted");
            assert!(counts.estimate(&key) >= times);
        }
    }
    let bloom = Bloom::from_bytes(&one[0]).unwrap();
    assert!((0..3000).all(|i| bloom.contains(&format!("k{i}"))));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::test]
async fn states_round_trip_through_arrow_ipc() -> Result<()> {
    let dir = dataset("ipc", 500);
    let config = Config::for_keys(500, 12)?;
    let states = states(&dir, 2, &config).await?;
    let schema = Arc::new(Schema::new(vec![Field::new(
        "state",
        DataType::Binary,
        false,
    )]));
    let column = BinaryArray::from_iter_values(states.iter());
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(column)])?;
    let mut wire = Vec::new();
    {
        let mut w = StreamWriter::try_new(&mut wire, &schema)?;
        w.write(&batch)?;
        w.finish()?;
    }
    let read: Vec<RecordBatch> =
        StreamReader::try_new(wire.as_slice(), None)?.collect::<std::result::Result<_, _>>()?;
    let back = read[0].column(0).as_binary::<i32>();
    assert_eq!(back.len(), states.len());
    for (i, s) in states.iter().enumerate() {
        assert_eq!(back.value(i), s.as_slice());
    }
    assert_eq!(
        Bloom::from_bytes(back.value(0)).unwrap(),
        Bloom::from_bytes(&states[0]).unwrap()
    );
    assert_eq!(
        Counts::from_bytes(back.value(1)).unwrap(),
        Counts::from_bytes(&states[1]).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::test]
async fn bad_filter_bytes_are_a_query_error() -> Result<()> {
    let ctx = SessionContext::new();
    register(&ctx, &Config::for_keys(100, 1)?);
    let err = ctx
        .sql("SELECT bloom_contains(X'53424C4D00', 'a')")
        .await?
        .collect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("malformed filter bytes"), "{err}");
    // A filter of another configuration answers through its own bytes:
    // the parameters travel with the state.
    let other = Config::for_keys(10, 2)?.bloom()?;
    let hex: String = {
        let mut f = other;
        f.insert("x");
        streambloom::format::Encode::to_bytes(&f)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect()
    };
    let rows = ctx
        .sql(&format!("SELECT bloom_contains(X'{hex}', 'x')"))
        .await?
        .collect()
        .await?;
    assert_eq!(
        ScalarValue::try_from_array(rows[0].column(0), 0)?,
        ScalarValue::Boolean(Some(true))
    );
    Ok(())
}

#[tokio::test]
async fn partitions_build_partial_states_that_are_merged() -> Result<()> {
    let dir = dataset("plan", 100);
    let config = Config::for_keys(100, 13)?;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    ctx.register_csv("hrefs", dir.to_str().unwrap(), CsvReadOptions::new())
        .await?;
    register(&ctx, &config);
    let plan = ctx
        .sql("EXPLAIN SELECT bloom_agg(href) FROM hrefs")
        .await?
        .collect()
        .await?;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
    // Four files over four partitions: a partial aggregate per partition,
    // then the final one merging their states.
    assert!(text.contains("mode=Partial"), "{text}");
    assert!(text.contains("mode=Final"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::test]
async fn unions_of_stored_filters_and_their_refusals() -> Result<()> {
    let dir = dataset("union", 1000);
    let config = Config::for_keys(1000, 14)?;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    ctx.register_csv("hrefs", dir.to_str().unwrap(), CsvReadOptions::new())
        .await?;
    register(&ctx, &config);
    // One filter per key class, kept as a table, then their union: the
    // filter of all the keys.
    ctx.sql(
        "CREATE TABLE daily AS SELECT LENGTH(href) AS day, bloom_agg(href) AS b, \
         spectral_agg(href) AS s, spectral_mi_agg(href) AS mi FROM hrefs GROUP BY LENGTH(href)",
    )
    .await?
    .collect()
    .await?;
    let union = ctx
        .sql("SELECT bloom_union(b), spectral_union(s), spectral_mi_union(mi) FROM daily")
        .await?
        .collect()
        .await?;
    let all = states(&dir, 1, &config).await?;
    let u = &union[0];
    assert_eq!(u.column(0).as_binary::<i32>().value(0), all[0].as_slice());
    assert_eq!(u.column(1).as_binary::<i32>().value(0), all[1].as_slice());
    // Either Spectral policy's value answers the scalar functions.
    let rows = ctx
        .sql(
            "WITH m AS (SELECT spectral_mi_union(mi) AS f FROM daily) \
             SELECT spectral_estimate(m.f, 'k9'), spectral_at_least(m.f, 'k9', 5), \
             spectral_at_least(m.f, 'k9', NULL) FROM m",
        )
        .await?
        .collect()
        .await?;
    assert!(ScalarValue::try_from_array(rows[0].column(0), 0)? >= ScalarValue::UInt32(Some(5)));
    assert_eq!(
        ScalarValue::try_from_array(rows[0].column(1), 0)?,
        ScalarValue::Boolean(Some(true))
    );
    assert_eq!(
        ScalarValue::try_from_array(rows[0].column(2), 0)?,
        ScalarValue::Boolean(None)
    );
    // A filter of other parameters, or another seed, is a query error.
    for other in [Config::for_keys(10, 14)?, Config::for_keys(1000, 15)?] {
        let mut f = other.bloom()?;
        f.insert("x");
        let hex: String = streambloom::format::Encode::to_bytes(&f)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        ctx.sql(&format!("INSERT INTO daily (day, b) VALUES (0, X'{hex}')"))
            .await?
            .collect()
            .await?;
        let err = ctx
            .sql("SELECT bloom_union(b) FROM daily")
            .await?
            .collect()
            .await
            .unwrap_err();
        assert!(err.to_string().contains("streambloom"), "{err}");
        ctx.sql("DELETE FROM daily WHERE day = 0")
            .await?
            .collect()
            .await?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
