//! Memory sizes on the command line and in reports: `16K`, `1MiB`, `64M`.

use streambloom::Block;

/// A size in bytes: a number with an optional B, K/KiB, M/MiB or G/GiB
/// suffix (any case), a positive multiple of a cache line (64 bytes).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => {
            return Err(format!(
                "size `{s}`: unknown unit `{unit}` (use B, K, M or G, binary units)"
            ))
        }
    };
    let bytes = n
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or(format!("size `{s}` is not a number of bytes"))?;
    if bytes == 0 || !bytes.is_multiple_of(Block::BYTES) {
        return Err(format!(
            "size `{s}` must be a positive multiple of 64 bytes"
        ));
    }
    Ok(bytes)
}

/// `16KiB`, `1MiB`, `192B`: the largest binary unit that divides `bytes`.
pub fn size_name(bytes: usize) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("16K"), Ok(16 << 10));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("128"), Ok(128));
        assert!(parse_size("100").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("1T").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert_eq!(size_name(16 << 10), "16KiB");
        assert_eq!(size_name(64 << 20), "64MiB");
        assert_eq!(size_name(192), "192B");
    }
}
