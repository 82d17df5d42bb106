//! Newline-delimited input as raw bytes, from a file or standard input
//! (`-`), with a progress bar once reading has taken a second.
//!
//! A line is the bytes up to a `\n` (not included); a last line without
//! one is a line too. Nothing else is stripped (a `\r` before the `\n`
//! stays part of the line) and no encoding is required: the filters hash
//! the raw bytes, so invalid UTF-8 is an ordinary key.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::output::Output;

/// Lines between two looks at the clock (a look costs a system call).
const CHECK_EVERY: u64 = 1 << 14;

/// How long reading runs before the progress bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A source of lines.
pub struct Input<'a> {
    reader: Box<dyn BufRead + 'a>,
    /// The name given: a path, or `-`.
    name: String,
    /// The file's length in bytes (none for standard input).
    total: Option<u64>,
    /// Bytes read so far.
    bytes: u64,
    /// Lines read so far.
    lines: u64,
    /// The current line, its `\n` stripped.
    line: Vec<u8>,
    output: Output,
    start: Instant,
    bar: Option<ProgressBar>,
}

impl<'a> Input<'a> {
    /// `name` opened for reading: a file, or standard input for `-`.
    pub fn open(name: &str, output: &Output) -> Result<Input<'static>, String> {
        Input::open_with(name, output, || Box::new(std::io::stdin().lock()))
    }

    /// [`Input::open`] with `stdin` standing for standard input (the tests
    /// give it a buffer).
    pub fn open_with(
        name: &str,
        output: &Output,
        stdin: impl FnOnce() -> Box<dyn BufRead + 'a>,
    ) -> Result<Input<'a>, String> {
        if name == "-" {
            return Ok(Input::new(stdin(), "-", None, output));
        }
        let file = File::open(name).map_err(|e| format!("cannot open `{name}`: {e}"))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read `{name}`: {e}"))?;
        if meta.is_dir() {
            return Err(format!("cannot read `{name}`: it is a directory"));
        }
        let total = meta.is_file().then_some(meta.len());
        let reader = Box::new(BufReader::with_capacity(1 << 16, file));
        Ok(Input::new(reader, name, total, output))
    }

    fn new(
        reader: Box<dyn BufRead + 'a>,
        name: &str,
        total: Option<u64>,
        output: &Output,
    ) -> Input<'a> {
        Input {
            reader,
            name: name.to_owned(),
            total,
            bytes: 0,
            lines: 0,
            line: Vec::new(),
            output: output.clone(),
            start: Instant::now(),
            bar: None,
        }
    }

    /// The name the input was opened by (`-` for standard input).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next line without its `\n`, or `None` at the end; an error names
    /// the input and the line that could not be read.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, String> {
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .map_err(|e| format!("cannot read `{}` after line {}: {e}", self.name, self.lines))?;
        if n == 0 {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
            return Ok(None);
        }
        self.bytes += n as u64;
        self.lines += 1;
        if self.lines.is_multiple_of(CHECK_EVERY) {
            self.show_progress();
        }
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        }
        Ok(Some(&self.line))
    }

    /// Starts the bar once reading has taken [`QUIET_FOR`], then moves it.
    fn show_progress(&mut self) {
        if self.bar.is_none() && self.start.elapsed() >= QUIET_FOR {
            self.bar = Some(self.output.byte_progress(self.total));
        }
        if let Some(bar) = &self.bar {
            bar.set_position(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::QUIET;
    use std::io::Cursor;

    fn all(input: &mut Input<'_>) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        while let Some(line) = input.next_line().unwrap() {
            lines.push(line.to_vec());
        }
        lines
    }

    /// Lines are the bytes between `\n`s, invalid UTF-8 and `\r` kept; a
    /// last line without `\n` counts, an empty line too.
    #[test]
    fn lines_are_raw_bytes() {
        let data = b"a\n\xff\xfe\r\n\nlast".to_vec();
        let mut input = Input::open_with("-", &QUIET, || Box::new(Cursor::new(data))).unwrap();
        assert_eq!(
            all(&mut input),
            [
                b"a".to_vec(),
                b"\xff\xfe\r".to_vec(),
                vec![],
                b"last".to_vec()
            ]
        );
        assert_eq!((input.lines, input.name()), (4, "-"));
    }

    /// A file reads as standard input does; a missing file or a directory
    /// is an error naming it.
    #[test]
    fn files_and_errors() {
        let path = std::env::temp_dir().join(format!("sb-input-{}.txt", std::process::id()));
        std::fs::write(&path, b"x\ny\n").unwrap();
        let name = path.to_string_lossy().into_owned();
        let mut input = Input::open(&name, &QUIET).unwrap();
        assert_eq!(all(&mut input), [b"x".to_vec(), b"y".to_vec()]);
        std::fs::remove_file(&path).unwrap();
        let missing = Input::open(&name, &QUIET).err().unwrap();
        assert!(
            missing.contains("cannot open") && missing.contains(&name),
            "{missing}"
        );
        let dir = std::env::temp_dir().to_string_lossy().into_owned();
        let err = Input::open(&dir, &QUIET).err().unwrap();
        assert!(err.contains("directory"), "{err}");
    }
}
