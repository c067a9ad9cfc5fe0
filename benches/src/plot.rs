//! `throng bench --plot`: the benchmark at a glance, as SVG (the `plotters` crate).
//!
//! Left: pose time per joint (ns) against instance count, log–log, for the CPU reference on one
//! thread, on rayon, and the GPU, one line each for the first subject's one-clip and layered
//! shapes (the cheapest and the dearest program). Right: the GPU's pass times (ms) of the same
//! subject's one-clip frames against instance count: program, FK, palette, bounds, skinning.
//! A value of 0 (FK and palette are differences of two timed frames, clamped at 0) has no place
//! on a log axis and is left out.

use plotters::prelude::*;
use throng_fixtures::BenchShape;

use crate::report::{Report, Row};

/// Size of the whole image, pixels.
const SIZE: (u32, u32) = (1100, 440);

/// The report's plot as an SVG document; an error names what could not be drawn.
pub fn svg(report: &Report) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        per_joint(&left, report).map_err(|e| e.to_string())?;
        stages(&right, report).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One line of the left panel: its legend, colour, whether dashed, and its points.
struct Series {
    name: String,
    colour: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
}
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// The first subject's rows of `shape`, by instance count.
fn rows(report: &Report, shape: BenchShape) -> Vec<&Row> {
    let Some(subject) = report.rows.first().map(|r| &r.subject) else {
        return Vec::new();
    };
    let mut rows: Vec<&Row> = (report.rows.iter())
        .filter(|r| &r.subject == subject && r.shape == shape)
        .collect();
    rows.sort_by_key(|r| r.instances);
    rows
}

/// A log axis range around `values` (positive ones), at least a decade wide.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 1.0..10.0;
    }
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    lo..hi.max(lo * 10.0)
}

fn per_joint(area: &Area, report: &Report) -> Drawn {
    let shapes = [BenchShape::OneClip, BenchShape::Layered];
    let series: Vec<Series> = shapes
        .iter()
        .flat_map(|&shape| {
            let rows = rows(report, shape);
            let dashed = shape != BenchShape::OneClip;
            let line = |name: &str, colour, at: &dyn Fn(&Row) -> Option<f64>| {
                let points: Vec<(f64, f64)> = (rows.iter())
                    .filter_map(|r| Some((r.instances as f64, at(r)?)).filter(|p| p.1 > 0.0))
                    .collect();
                Series {
                    name: format!("{name}, {}", shape.label()),
                    colour,
                    dashed,
                    points,
                }
            };
            [
                line("CPU", RED, &|r| Some(r.derived.pose_ns_per_joint.cpu)),
                line("rayon", BLUE, &|r| {
                    Some(r.derived.pose_ns_per_joint.cpu_rayon)
                }),
                line("GPU", GREEN, &|r| r.derived.pose_ns_per_joint.gpu),
            ]
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    // Headroom above the lines for the six-line legend.
    draw(
        area,
        "pose time per joint (lower is better)",
        "ns per joint",
        &series,
        (8.0, SeriesLabelPosition::UpperRight),
    )
}

fn stages(area: &Area, report: &Report) -> Drawn {
    let rows = rows(report, BenchShape::OneClip);
    let stage = |name: &'static str, colour: RGBColor, at: fn(&crate::report::Stages) -> f64| {
        let points: Vec<(f64, f64)> = (rows.iter())
            .filter_map(|r| {
                let s = r.gpu.as_ref()?.stages.as_ref()?;
                Some((r.instances as f64, at(s))).filter(|p| p.1 > 0.0)
            })
            .collect();
        Series {
            name: name.to_string(),
            colour,
            dashed: false,
            points,
        }
    };
    let series = [
        stage("program", RED, |s| s.program_ms),
        stage("FK", BLUE, |s| s.fk_ms),
        stage("palette", MAGENTA, |s| s.palette_ms),
        stage("bounds", CYAN, |s| s.bounds_ms),
        stage("skinning", GREEN, |s| s.skinning_ms),
    ];
    let series: Vec<Series> = series
        .into_iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    let subject = rows.first().map_or("", |r| r.subject.as_str());
    draw(
        area,
        &format!("GPU passes, {subject} one clip (timestamps)"),
        "ms per frame",
        &series,
        (1.0, SeriesLabelPosition::UpperLeft),
    )
}

/// One log–log panel of `series`, captioned, its y range stretched by `headroom` above the
/// lines, with the legend at `position`.
fn draw(
    area: &Area,
    caption: &str,
    y_desc: &str,
    series: &[Series],
    (headroom, position): (f64, SeriesLabelPosition),
) -> Drawn {
    let points = || series.iter().flat_map(|s| &s.points);
    let x = log_range(points().map(|p| p.0));
    let y = log_range(points().map(|p| p.1));
    let y = y.start..y.end * headroom;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(x.log_scale(), y.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("instances")
        .y_desc(y_desc)
        .draw()?;
    for s in series {
        let style = ShapeStyle::from(s.colour).stroke_width(2);
        let points = s.points.iter().copied();
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))?
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))?
        };
        drawn
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        chart.draw_series(points.map(|p| Circle::new(p, 3, s.colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
