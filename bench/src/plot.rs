//! `--plot FILE.svg`: a report's curves as line charts in one SVG file.
//!
//! A command that has curves maps its report to [`Chart`]s (named series of
//! (x, y) points, axis labels) in [`Report::charts`](crate::output::Report::charts);
//! [`draw`] is the one place that knows plotters. Each chart is a panel,
//! the panels stacked top to bottom, each with its legend on its right (a
//! legend inside the plot would hide curves when there are dozens).
//!
//! Text is written as SVG `<text>` elements, laid out by plotters' own
//! estimate of its width: no font file and no system library is read.

use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The width of the SVG in pixels: the plot, then the legend.
const WIDTH: u32 = 1100;
/// The legend's width in pixels, on the right of each panel.
const LEGEND_WIDTH: u32 = 330;
/// The height of a panel with few series, in pixels.
const MIN_PANEL_HEIGHT: u32 = 460;
/// One legend line's height in pixels.
const LEGEND_ROW: u32 = 16;
/// The legend's first line, from the panel's top, in pixels.
const LEGEND_TOP: u32 = 40;

/// One panel: a title, its axes and its curves.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Above the panel.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The curves, in the legend's order.
    pub series: Vec<Series>,
}

/// An axis: its label and how its values are spaced and printed.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The quantity and its unit: `p50 (ns per item)`.
    pub label: String,
    /// Logarithmic when its positive values span at least a decade (or a
    /// factor of eight on a [`binary`](Axis::binary) axis: sizes,
    /// latencies, error rates), linear otherwise; on a logarithmic
    /// axis the points at zero or below are not drawn, and its label says
    /// so when there were any.
    pub log: bool,
    /// The values are bytes, printed as `16KiB`.
    pub bytes: bool,
    /// Logarithmic in powers of two (sizes, bits per item), not of ten.
    pub binary: bool,
    /// The values are whole numbers (threads): ticks on whole numbers only.
    pub whole: bool,
}

/// One curve: its name in the legend and its points, in drawing order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// In the legend.
    pub name: String,
    /// (x, y); points with a coordinate that is not finite are skipped.
    pub points: Vec<(f64, f64)>,
    /// What the curve is, which sets how it is drawn.
    pub kind: Kind,
}

/// What a curve is, which sets its colour and stroke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A measured or computed curve: solid, the palette's next colour.
    Measured,
    /// A companion of the series before it (its ideal, the paper's figures
    /// beside ours, the other query on the same filter): dashed, in that
    /// series' colour.
    Reference,
    /// A limit shown beside the curves (the memory's own speed): dashed,
    /// black or grey, the same in every panel.
    Limit,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            bytes: false,
            binary: false,
            whole: false,
        }
    }

    /// A logarithmic axis where the values allow it (see [`Axis::log`]).
    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            log: true,
            ..Axis::linear(label)
        }
    }

    /// The same axis with its values printed as byte sizes, in powers of
    /// two.
    pub fn bytes(self) -> Axis {
        Axis {
            bytes: true,
            binary: true,
            ..self
        }
    }

    /// The same axis, logarithmic in powers of two.
    pub fn binary(self) -> Axis {
        Axis {
            binary: true,
            ..self
        }
    }

    /// The same axis with ticks on whole numbers only.
    pub fn whole(self) -> Axis {
        Axis {
            whole: true,
            ..self
        }
    }

    /// How many ticks to ask plotters for along `span`: at most one per
    /// whole number on a [`whole`](Axis::whole) axis, plotters' default
    /// otherwise.
    fn ticks(&self, span: &Span) -> usize {
        const DEFAULT: usize = 10;
        if self.whole && !span.log {
            ((span.hi.floor() - span.lo.ceil()) as usize + 1).clamp(1, DEFAULT)
        } else {
            DEFAULT
        }
    }

    /// How a tick's value is printed.
    fn tick(&self, v: f64) -> String {
        let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
        match units
            .iter()
            .find(|&&(unit, _)| self.bytes && v >= unit as f64)
        {
            Some(&(unit, name)) => format!("{}{name}", number(v / unit as f64)),
            None if self.bytes => format!("{}B", number(v)),
            None => number(v),
        }
    }
}

impl Series {
    /// A solid curve.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            kind: Kind::Measured,
        }
    }

    /// The same points as another kind of curve.
    pub fn with_kind(self, kind: Kind) -> Series {
        Series { kind, ..self }
    }

    /// The points that can be drawn.
    fn finite(&self) -> impl Iterator<Item = (f64, f64)> + Clone + '_ {
        self.points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }
}

/// Series from `(name, x, y)` points: one per name, in the order the names
/// first appear, each point in its series in the order given.
pub fn group(points: impl IntoIterator<Item = (String, f64, f64)>) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for (name, x, y) in points {
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(Series::new(name, vec![(x, y)])),
        }
    }
    series
}

/// Draws `charts` into the SVG file `path`, one panel each; charts with no
/// point to draw are left out. An error when none is left or the file
/// cannot be written.
pub fn draw(path: &Path, charts: &[Chart]) -> Result<(), String> {
    let charts: Vec<&Chart> = charts
        .iter()
        .filter(|c| c.series.iter().any(|s| s.finite().next().is_some()))
        .collect();
    if charts.is_empty() {
        return Err(format!(
            "--plot {}: this run has no curve to draw",
            path.display()
        ));
    }
    let heights: Vec<u32> = charts.iter().map(|c| panel_height(c)).collect();
    let root = SVGBackend::new(path, (WIDTH, heights.iter().sum())).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("--plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut rest = root.clone();
    for (chart, height) in charts.iter().zip(heights) {
        let (panel, below) = rest.split_vertically(height);
        draw_panel(&panel, chart).map_err(|e| fail(&e))?;
        rest = below;
    }
    root.present().map_err(|e| fail(&e))
}

/// A panel's height: enough for its legend.
fn panel_height(chart: &Chart) -> u32 {
    let rows = u32::try_from(chart.series.len()).unwrap_or(u32::MAX);
    rows.saturating_mul(LEGEND_ROW)
        .saturating_add(2 * LEGEND_TOP)
        .max(MIN_PANEL_HEIGHT)
}

/// The drawing area of one panel.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// What drawing on an SVG area may fail with.
type DrawError = DrawingAreaErrorKind<std::io::Error>;

/// The span of one axis's values, and whether it is drawn logarithmic.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Span {
    lo: f64,
    hi: f64,
    log: bool,
    /// The logarithm's base, whose powers are the main ticks.
    base: f64,
}

impl Span {
    /// The span of `values` on `axis`, padded so no point sits on the
    /// frame; a logarithmic span holds at least two powers of its base,
    /// where plotters puts its main ticks (its start is moved down to one
    /// if need be).
    fn of(axis: &Axis, values: impl Iterator<Item = f64> + Clone) -> Span {
        let bounds = |values: &mut dyn Iterator<Item = f64>| {
            values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
        };
        let (lo, hi) = bounds(&mut values.clone().filter(|&v| v > 0.0));
        // A decade, or three doublings on a binary axis.
        let (base, wide): (f64, f64) = if axis.binary {
            (2.0, 8.0)
        } else {
            (10.0, 10.0)
        };
        if axis.log && lo.is_finite() && hi >= wide * lo {
            let (lo, hi) = (lo / 1.2, hi * 1.2);
            let powers = hi.log(base).floor() - lo.log(base).ceil() + 1.0;
            Span {
                // Just below the power, so rounding keeps its tick in.
                lo: if powers >= 2.0 {
                    lo
                } else {
                    base.powf(lo.log(base).floor()) * 0.999
                },
                hi,
                log: true,
                base,
            }
        } else {
            let (lo, hi) = bounds(&mut values.into_iter());
            let pad = if hi > lo { (hi - lo) / 20.0 } else { 1.0 };
            Span {
                lo: lo - pad,
                hi: hi + pad,
                log: false,
                base: 10.0,
            }
        }
    }

    /// A tick's label: on a logarithmic span only the powers of the base
    /// and, in base ten, their doubles and fives are labelled (plotters
    /// puts a tick at every multiple, and their labels would overlap).
    fn tick(&self, axis: &Axis, v: f64) -> String {
        if !self.log || v <= 0.0 {
            return axis.tick(v);
        }
        let mantissa = v / self.base.powf((v.log(self.base) + 1e-9).floor());
        let labelled: &[f64] = if self.base == 10.0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        if labelled.iter().any(|m| (mantissa - m).abs() < 1e-6) {
            axis.tick(v)
        } else {
            String::new()
        }
    }

    /// Whether `v` can be drawn on this span (not at or below zero on a
    /// logarithmic one).
    fn holds(&self, v: f64) -> bool {
        !self.log || v > 0.0
    }

    /// The label of `axis` drawn on this span, saying when some of the
    /// values in `values` could not be drawn.
    fn label(&self, axis: &Axis, mut values: impl Iterator<Item = f64>) -> String {
        if values.any(|v| !self.holds(v)) {
            format!("{} (log scale: values ≤ 0 not drawn)", axis.label)
        } else {
            axis.label.clone()
        }
    }
}

/// One chart: its plot on the left, its legend on the right.
fn draw_panel(area: &Area<'_>, chart: &Chart) -> Result<(), DrawError> {
    let (plot, legend) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
    let points = || chart.series.iter().flat_map(Series::finite);
    let x = Span::of(&chart.x, points().map(|p| p.0));
    let y = Span::of(&chart.y, points().map(|p| p.1));
    let (xs, ys) = (x.lo..x.hi, y.lo..y.hi);
    let (xl, yl) = (
        xs.clone().log_scale().base(x.base),
        ys.clone().log_scale().base(y.base),
    );
    match (x.log, y.log) {
        (false, false) => draw_curves(&plot, chart, (xs, x), (ys, y))?,
        (true, false) => draw_curves(&plot, chart, (xl, x), (ys, y))?,
        (false, true) => draw_curves(&plot, chart, (xs, x), (yl, y))?,
        (true, true) => draw_curves(&plot, chart, (xl, x), (yl, y))?,
    }
    draw_legend(&legend, chart)
}

/// The curves' colours: ten that stay apart on white (Tableau's), then
/// plotters' palette.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The limits' colours, in turn.
const LIMIT_COLOURS: [RGBColor; 2] = [BLACK, RGBColor(0xa0, 0xa0, 0xa0)];

/// The colour of each series, by its [`Kind`].
fn colours(chart: &Chart) -> Vec<RGBAColor> {
    let (mut measured, mut limits) = (0, 0);
    let mut out: Vec<RGBAColor> = Vec::with_capacity(chart.series.len());
    for s in &chart.series {
        let colour = match (s.kind, out.last()) {
            (Kind::Reference, Some(&before)) => before,
            (Kind::Limit, _) => {
                limits += 1;
                LIMIT_COLOURS[(limits - 1) % LIMIT_COLOURS.len()].to_rgba()
            }
            (Kind::Measured | Kind::Reference, _) => {
                measured += 1;
                PALETTE
                    .get(measured - 1)
                    .map_or_else(|| Palette99::pick(measured).to_rgba(), |c| c.to_rgba())
            }
        };
        out.push(colour);
    }
    out
}

/// The frame, ticks, axis labels and curves of `chart` on axes `x` and `y`
/// (linear or logarithmic ranges of f64).
fn draw_curves<X, Y>(
    plot: &Area<'_>,
    chart: &Chart,
    (x, x_span): (X, Span),
    (y, y_span): (Y, Span),
) -> Result<(), DrawError>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut c = ChartBuilder::on(plot)
        .caption(&chart.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(x, y)?;
    let points = || chart.series.iter().flat_map(Series::finite);
    c.configure_mesh()
        .x_desc(x_span.label(&chart.x, points().map(|p| p.0)))
        .y_desc(y_span.label(&chart.y, points().map(|p| p.1)))
        .x_labels(chart.x.ticks(&x_span))
        .y_labels(chart.y.ticks(&y_span))
        .x_label_formatter(&|v| x_span.tick(&chart.x, *v))
        .y_label_formatter(&|v| y_span.tick(&chart.y, *v))
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(WHITE)
        .draw()?;
    for (s, colour) in chart.series.iter().zip(colours(chart)) {
        let style = colour.stroke_width(2);
        let drawn = s
            .finite()
            .filter(|&(a, b)| x_span.holds(a) && y_span.holds(b));
        if s.kind != Kind::Measured {
            c.draw_series(DashedLineSeries::new(drawn.clone(), 8, 5, style))?;
        } else {
            c.draw_series(LineSeries::new(drawn.clone(), style))?;
        }
        c.draw_series(drawn.map(|p| Circle::new(p, 3, colour.filled())))?;
    }
    Ok(())
}

/// The legend: a short stroke in each series' colour, then its name.
fn draw_legend(legend: &Area<'_>, chart: &Chart) -> Result<(), DrawError> {
    let row = LEGEND_ROW as i32;
    for (i, (s, colour)) in chart.series.iter().zip(colours(chart)).enumerate() {
        let y = LEGEND_TOP as i32 + i as i32 * row;
        let style = colour.stroke_width(2);
        let strokes: &[(i32, i32)] = if s.kind != Kind::Measured {
            &[(4, 12), (18, 26)]
        } else {
            &[(4, 26)]
        };
        for &(a, b) in strokes {
            legend.draw(&PathElement::new(vec![(a, y), (b, y)], style))?;
        }
        legend.draw(&Text::new(
            s.name.clone(),
            (32, y - row / 2 + 2),
            ("sans-serif", 13),
        ))?;
    }
    Ok(())
}

/// A tick's value: up to three decimals, trailing zeros dropped; very
/// large or small values in scientific notation.
fn number(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// A test's SVG file in the system's temporary directory, removed when dropped.
#[cfg(test)]
pub struct TempSvg(pub std::path::PathBuf);

#[cfg(test)]
impl TempSvg {
    /// A fresh path whose name holds `tag` and the process id.
    pub fn new(tag: &str) -> TempSvg {
        let name = format!("streambloom-bench-{tag}-{}.svg", std::process::id());
        TempSvg(std::env::temp_dir().join(name))
    }

    /// The file's text.
    pub fn read(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap()
    }
}

/// Draws `charts` into a temporary SVG (named by `tag`) and asserts that
/// the file holds every one of `texts` (titles, axis labels, series
/// names): the check each command's plot test ends with.
#[cfg(test)]
pub fn assert_draws(tag: &str, charts: &[Chart], texts: &[&str]) {
    let file = TempSvg::new(tag);
    draw(&file.0, charts).unwrap();
    let svg = file.read();
    for text in texts {
        assert!(svg.contains(text), "{tag}: {text} missing");
    }
}

/// The series names of each chart, in order: what the plot tests compare.
#[cfg(test)]
pub fn series_names(charts: &[Chart]) -> Vec<Vec<&str>> {
    charts
        .iter()
        .map(|c| c.series.iter().map(|s| s.name.as_str()).collect())
        .collect()
}

#[cfg(test)]
impl Drop for TempSvg {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        Chart {
            title: "latency by size".into(),
            x: Axis::log("filter size").bytes(),
            y: Axis::log("p50 (ns per item)"),
            series: vec![
                Series::new(
                    "stable-observe avx2",
                    vec![(16384.0, 2.0), (1048576.0, 9.5)],
                ),
                Series::new("ideal", vec![(16384.0, 1.0), (1048576.0, 1.0)])
                    .with_kind(Kind::Reference),
                Series::new("line-rmw", vec![(16384.0, f64::NAN), (1048576.0, 4.0)])
                    .with_kind(Kind::Limit),
                Series::new("line-read", vec![(16384.0, 1.0), (1048576.0, 4.0)])
                    .with_kind(Kind::Limit),
                Series::new("classic", vec![(16384.0, 1.0), (1048576.0, 4.0)]),
            ],
        }
    }

    #[test]
    fn svg_holds_names_labels_and_ticks() {
        let file = TempSvg::new("plot-unit");
        let mut second = chart();
        second.title = "second panel".into();
        second.x = Axis::linear("threads");
        draw(&file.0, &[chart(), second]).unwrap();
        let svg = file.read();
        for text in [
            "<svg",
            "latency by size",
            "second panel",
            "filter size",
            "threads",
            "p50 (ns per item)",
            "stable-observe avx2",
            "line-rmw",
            "ideal",
            "1MiB",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn nothing_to_draw_is_an_error() {
        let file = TempSvg::new("plot-empty");
        let e = draw(&file.0, &[]).unwrap_err();
        assert!(e.contains("no curve"), "{e}");
        let mut c = chart();
        c.series = vec![Series::new("nan", vec![(f64::NAN, 1.0)])];
        assert!(draw(&file.0, &[c]).is_err());
        assert!(!file.0.exists());
    }

    #[test]
    fn unwritable_file_is_an_error() {
        let path = Path::new("/nonexistent-dir-of-streambloom/plot.svg");
        let e = draw(path, &[chart()]).unwrap_err();
        assert!(
            e.contains("/nonexistent-dir-of-streambloom/plot.svg"),
            "{e}"
        );
    }

    #[test]
    fn spans_and_scales() {
        let log = Axis::log("x");
        let s = Span::of(&log, [1.0, 1000.0].into_iter());
        assert!(s.log && s.lo == 1.0 / 1.2 && s.hi == 1200.0);
        assert_eq!(Span::of(&log, [0.2, 10.0].into_iter()).lo, 0.2 / 1.2);
        assert_eq!(Span::of(&log, [2.0, 20.0].into_iter()).lo, 0.999);
        let threads = Axis::linear("threads").whole();
        assert_eq!(
            threads.ticks(&Span::of(&threads, [1.0, 2.0].into_iter())),
            2
        );
        assert_eq!(
            threads.ticks(&Span::of(&threads, [1.0, 64.0].into_iter())),
            10
        );
        assert!(!Span::of(&log, [1.0, 5.0].into_iter()).log);
        let zero = Span::of(&log, [0.0, 1.0, 1000.0].into_iter());
        assert!(zero.log && !zero.holds(0.0) && zero.holds(1.0));
        assert!(zero
            .label(&log, [0.0, 1.0].into_iter())
            .contains("not drawn"));
        assert_eq!(zero.label(&log, [1.0].into_iter()), "x");
        assert!(!Span::of(&log, [0.0, 0.0].into_iter()).log);
        let decade = Span::of(&log, [1000.0, 10_000.0].into_iter());
        let labels: Vec<String> = [1000.0, 2000.0, 3000.0, 5000.0, 10_000.0]
            .iter()
            .map(|&v| decade.tick(&log, v))
            .collect();
        assert_eq!(labels, ["1000", "2000", "", "5000", "10000"]);
        let sizes = Axis::log("size").bytes();
        let binary = Span::of(&sizes, [1024.0, 65536.0].into_iter());
        assert_eq!(binary.tick(&sizes, 3072.0), "");
        assert_eq!(binary.tick(&sizes, 4096.0), "4KiB");
        let one = Span::of(&Axis::linear("x"), [3.0].into_iter());
        assert_eq!((one.lo, one.hi, one.log), (2.0, 4.0, false));
        assert_eq!(
            Span::of(&log.clone().bytes(), [1.0, 1e6].into_iter()).base,
            2.0
        );
        assert_eq!(
            Span::of(&log.clone().binary(), [2.0, 16.0].into_iter()).base,
            2.0
        );
        assert!(!Span::of(&log.binary(), [2.0, 8.0].into_iter()).log);
    }

    #[test]
    fn groups_keep_first_seen_order() {
        let g = group([
            ("b".to_owned(), 1.0, 2.0),
            ("a".to_owned(), 1.0, 3.0),
            ("b".to_owned(), 2.0, 4.0),
        ]);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].name.as_str(), g[0].points.len()), ("b", 2));
        assert_eq!(g[1].points, vec![(1.0, 3.0)]);
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(-0.0001), "-1.0e-4");
        assert_eq!(number(12_000_000.0), "1.2e7");
        let bytes = Axis::linear("s").bytes();
        assert_eq!(bytes.tick(16384.0), "16KiB");
        assert_eq!(bytes.tick(1.5 * 1048576.0), "1.5MiB");
        assert_eq!(bytes.tick(512.0), "512B");
    }

    /// A reference takes the colour of the curve before it, limits are
    /// black then grey, and measured curves go on through the palette.
    #[test]
    fn colours_by_kind() {
        let c = colours(&chart());
        assert_eq!(c[0], c[1]);
        assert_eq!((c[2], c[3]), (BLACK.to_rgba(), LIMIT_COLOURS[1].to_rgba()));
        assert_eq!((c[0], c[4]), (PALETTE[0].to_rgba(), PALETTE[1].to_rgba()));
    }
}
