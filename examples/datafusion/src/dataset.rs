//! The example's real multi-file dataset: every `href` target in the HTML
//! documentation that ships with the Rust toolchain
//! (`$(rustc --print sysroot)/share/doc`, the `rust-docs` component),
//! split round-robin into CSV files of one column, `href`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The `href="…"` targets of one HTML page, in order.
pub fn hrefs(html: &str) -> impl Iterator<Item = &str> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
}

/// The HTML files under `root`, sorted (so the dataset is the same on
/// every run), at most `max`.
pub fn html_files(root: &Path, max: usize) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<_> = fs::read_dir(&dir)?.collect::<io::Result<_>>()?;
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            if e.file_type()?.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "html") {
                out.push(path);
            }
        }
    }
    out.sort();
    out.truncate(max);
    Ok(out)
}

/// Writes the hrefs of `pages` round-robin into `files` CSV files in
/// `dir` (a header line `href`, then one quoted value a line); returns how
/// many rows it wrote.
pub fn write_csv(pages: &[PathBuf], dir: &Path, files: usize) -> io::Result<u64> {
    fs::create_dir_all(dir)?;
    let mut outs = (0..files.max(1))
        .map(|i| {
            let mut w = BufWriter::new(fs::File::create(dir.join(format!("part-{i:03}.csv")))?);
            writeln!(w, "href")?;
            Ok(w)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let files = outs.len() as u64;
    let mut rows = 0u64;
    for page in pages {
        let html = match fs::read_to_string(page) {
            Ok(h) => h,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => continue,
            Err(e) => return Err(e),
        };
        for href in hrefs(&html) {
            let w = &mut outs[(rows % files) as usize];
            writeln!(w, "\"{}\"", href.replace('"', "\"\""))?;
            rows += 1;
        }
    }
    for mut w in outs {
        w.flush()?;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_href() {
        let html = r#"<a href="a.html">x</a><link href="b.css"><a  href="">e</a>"#;
        assert_eq!(hrefs(html).collect::<Vec<_>>(), ["a.html", "b.css", ""]);
    }
}
