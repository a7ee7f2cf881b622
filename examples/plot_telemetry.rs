//! Charts of a telemetry CSV: speed, engine rpm and gear, throttle and brake, and every
//! wheel's slip ratio against time, as one PNG.
//!
//! ```text
//! cargo run --example plot_telemetry -- [input.csv] [output.png]
//! ```
//!
//! The input is a CSV with a header line, as written by `examples/headless_drive.rs` and by
//! the demo's recorder: a `time` column (s) and any of `speed` (m/s), `rpm`, `gear`,
//! `throttle`, `brake` and `<wheel>_slip_ratio`. Defaults: `headless_drive.csv` and
//! `telemetry.png`. The font is bundled (`assets/fonts/FiraSans-Regular.ttf`), so no system
//! font library is needed.

use std::error::Error;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

/// A CSV as columns.
struct Table {
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
}

impl Table {
    fn read(path: &str) -> Result<Self, Box<dyn Error>> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let mut lines = text.lines();
        let names: Vec<String> = lines
            .next()
            .ok_or(format!("{path}: empty file"))?
            .split(',')
            .map(|n| n.trim().to_owned())
            .collect();
        let mut columns = vec![Vec::new(); names.len()];
        for (i, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != names.len() {
                return Err(format!(
                    "{path}:{}: {} cells, the header has {}",
                    i + 2,
                    cells.len(),
                    names.len()
                )
                .into());
            }
            for (column, cell) in columns.iter_mut().zip(cells) {
                column.push(
                    cell.trim()
                        .parse()
                        .map_err(|_| format!("{path}:{}: `{cell}` is not a number", i + 2))?,
                );
            }
        }
        Ok(Table { names, columns })
    }

    fn column(&self, name: &str) -> Option<&[f64]> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(&self.columns[i])
    }
}

/// One panel: a title, a y label, and (name, values, colour) series.
struct Panel<'a> {
    title: &'a str,
    y_label: &'a str,
    series: Vec<(String, Vec<f64>, RGBColor)>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let input = args.next().unwrap_or_else(|| "headless_drive.csv".into());
    let output = args.next().unwrap_or_else(|| "telemetry.png".into());
    let (panels, (width, height)) = plot(&input, &output)?;
    println!("wrote {output} ({width}×{height} px, {panels} panels from {input})");
    Ok(())
}

/// Width of the chart (px).
pub const WIDTH: u32 = 1200;
/// Height of each panel (px): the chart is this times the number of panels high.
pub const PANEL_HEIGHT: u32 = 260;

/// Plots the CSV `input` into the PNG `output`; returns the number of panels and the image's
/// size in pixels (`WIDTH` × `PANEL_HEIGHT` per panel).
pub fn plot(input: &str, output: &str) -> Result<(usize, (u32, u32)), Box<dyn Error>> {
    register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/fonts/FiraSans-Regular.ttf"),
    )
    .map_err(|_| "the bundled font did not load")?;

    let table = Table::read(input)?;
    let time = table.column("time").ok_or("the CSV has no `time` column")?;
    let get = |name: &str| table.column(name).map(<[f64]>::to_vec);
    let mut panels = Vec::new();
    if let Some(speed) = get("speed") {
        panels.push(Panel {
            title: "speed",
            y_label: "km/h",
            series: vec![(
                "speed".into(),
                speed.iter().map(|v| v * 3.6).collect(),
                BLUE,
            )],
        });
    }
    if let Some(rpm) = get("rpm") {
        let mut series = vec![("engine rpm".into(), rpm, RED)];
        if let Some(gear) = get("gear") {
            series.push((
                "gear × 1000".into(),
                gear.iter().map(|g| g * 1000.0).collect(),
                BLACK,
            ));
        }
        panels.push(Panel {
            title: "engine speed and gear",
            y_label: "rpm",
            series,
        });
    }
    let pedals: Vec<_> = [("throttle", GREEN), ("brake", RED)]
        .into_iter()
        .filter_map(|(n, c)| get(n).map(|v| (n.to_owned(), v, c)))
        .collect();
    if !pedals.is_empty() {
        panels.push(Panel {
            title: "pedals",
            y_label: "0..1",
            series: pedals,
        });
    }
    let palette = [
        BLUE,
        RED,
        GREEN,
        MAGENTA,
        CYAN,
        BLACK,
        RGBColor(200, 120, 0),
    ];
    let slips: Vec<_> = table
        .names
        .iter()
        .filter_map(|n| n.strip_suffix("_slip_ratio").map(|w| (w, n)))
        .enumerate()
        .map(|(i, (wheel, column))| {
            (
                wheel.to_owned(),
                get(column).unwrap_or_default(),
                palette[i % palette.len()],
            )
        })
        .collect();
    if !slips.is_empty() {
        panels.push(Panel {
            title: "wheel slip ratio",
            y_label: "κ",
            series: slips,
        });
    }
    if panels.is_empty() {
        return Err("the CSV has none of speed, rpm, throttle, brake or *_slip_ratio".into());
    }

    let height = PANEL_HEIGHT * panels.len() as u32;
    let root = BitMapBackend::new(output, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let t_end = time.last().copied().unwrap_or(1.0).max(1e-3);
    for (panel, area) in panels.iter().zip(root.split_evenly((panels.len(), 1))) {
        let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
        for (_, values, _) in &panel.series {
            for &v in values.iter().filter(|v| v.is_finite()) {
                low = low.min(v);
                high = high.max(v);
            }
        }
        if !low.is_finite() {
            (low, high) = (0.0, 1.0);
        }
        let margin = 0.05 * (high - low).max(1e-6);
        let mut chart = ChartBuilder::on(&area)
            .caption(panel.title, ("sans-serif", 22))
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t_end, (low - margin)..(high + margin))?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(panel.y_label)
            .label_style(("sans-serif", 14))
            .draw()?;
        for (name, values, color) in &panel.series {
            let color = *color;
            chart
                .draw_series(LineSeries::new(
                    time.iter().copied().zip(values.iter().copied()),
                    color.stroke_width(2),
                ))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 14))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok((panels.len(), (WIDTH, height)))
}
