//! `latest.svg`: a horizontal bar chart of the Oxok/Linux ratios on a log
//! scale, one bar per workload and mode, drawn from 1× (green: Oxok needs
//! less, red: more). Rows without a ratio say which side is missing.

use super::report::format_ratio;
use super::results::{Results, Row};

const WIDTH: f64 = 960.0;
const LABEL_X: f64 = 16.0;
const CHART_X0: f64 = 330.0;
const CHART_X1: f64 = 880.0;
const TOP: f64 = 86.0;
const ROW: f64 = 24.0;
const BAR: f64 = 14.0;

/// The chart of a run.
pub(crate) fn chart(r: &Results) -> String {
    let s = &r.settings;
    let modes: Vec<&str> = s.modes.iter().map(|m| m.name()).collect();
    let subtitle = format!(
        "{} · {} · {} round(s) · mode {} · {}",
        s.timestamp,
        if s.quick { "quick" } else { "full" },
        s.rounds,
        modes.join("+"),
        s.qemu_version
    );
    render(&r.rows(), &subtitle)
}

/// How a chart reads: its title, which way is better, the legend.
pub(crate) struct Style {
    pub title: &'static str,
    /// Whether a ratio above 1× is good for Oxok (throughputs); otherwise
    /// below 1× is (times, memory).
    pub higher_is_better: bool,
    pub good: &'static str,
    pub bad: &'static str,
}

/// The style of `cargo xtask bench`'s chart: costs, lower is better.
const COSTS: Style = Style {
    title: "Oxok / Linux (ratio of medians, log scale; lower is better for Oxok)",
    higher_is_better: false,
    good: "Oxok needs less time or memory than Linux",
    bad: "Oxok needs more",
};

/// Draws `rows` with a subtitle line.
pub(crate) fn render(rows: &[Row], subtitle: &str) -> String {
    render_styled(rows, subtitle, &COSTS)
}

/// Draws `rows` with a subtitle line in `style`.
pub(crate) fn render_styled(rows: &[Row], subtitle: &str, style: &Style) -> String {
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).filter(|r| *r > 0.0).collect();
    let (lo, hi) = decades(&ratios);
    let x = |r: f64| CHART_X0 + (r.log10() - lo as f64) / (hi - lo) as f64 * (CHART_X1 - CHART_X0);
    let height = TOP + ROW * rows.len() as f64 + 56.0;
    let bottom = TOP + ROW * rows.len() as f64;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LABEL_X}\" y=\"26\" font-size=\"17\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{LABEL_X}\" y=\"46\" fill=\"#555\">{}</text>\n",
        escape(style.title),
        escape(subtitle)
    );
    // Row stripes first, so the grid and bars are drawn over them.
    for i in (0..rows.len()).step_by(2) {
        o.push_str(&format!(
            "<rect x=\"8\" y=\"{:.1}\" width=\"{:.1}\" height=\"{ROW}\" fill=\"#f4f4f4\"/>\n",
            TOP + ROW * i as f64,
            WIDTH - 16.0
        ));
    }
    // Decade grid with labels above the chart, and faint 2× and 5× lines.
    for d in lo..=hi {
        let base = 10f64.powi(d);
        let gx = x(base);
        let stroke = if d == 0 { "#333\" stroke-width=\"1.5" } else { "#bbb" };
        o.push_str(&format!(
            "<line x1=\"{gx:.1}\" y1=\"{:.1}\" x2=\"{gx:.1}\" y2=\"{bottom:.1}\" stroke=\"{stroke}\"/>\n\
             <text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
            TOP - 12.0,
            TOP - 18.0,
            escape(&format!("{}×", trim_float(base)))
        ));
        if d < hi {
            for m in [2.0, 5.0] {
                let mx = x(base * m);
                o.push_str(&format!(
                    "<line x1=\"{mx:.1}\" y1=\"{:.1}\" x2=\"{mx:.1}\" y2=\"{bottom:.1}\" stroke=\"#eee\"/>\n",
                    TOP - 6.0
                ));
            }
        }
    }
    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let mid = y + ROW / 2.0 + 4.5;
        let label = if rows.iter().any(|r| r.mode != row.mode) {
            format!("{} ({})", row.workload, row.mode.name())
        } else {
            row.workload.clone()
        };
        o.push_str(&format!("<text x=\"{LABEL_X}\" y=\"{mid:.1}\">{}</text>\n", escape(&label)));
        let one = x(1.0);
        match row.ratio.filter(|r| *r > 0.0) {
            Some(r) => {
                let (a, b) = if r < 1.0 { (x(r), one) } else { (one, x(r)) };
                let good = if style.higher_is_better { r >= 1.0 } else { r < 1.0 };
                let color = if good { "#2e7d32" } else { "#c62828" };
                o.push_str(&format!(
                    "<rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BAR}\" fill=\"{color}\"/>\n",
                    y + (ROW - BAR) / 2.0,
                    (b - a).max(1.0)
                ));
                let (tx, anchor) = if r < 1.0 { (a - 4.0, "end") } else { (b + 4.0, "start") };
                o.push_str(&format!(
                    "<text x=\"{tx:.1}\" y=\"{mid:.1}\" text-anchor=\"{anchor}\">{}</text>\n",
                    escape(&format_ratio(r))
                ));
            }
            None => {
                let missing = match (row.oxok.is_some(), row.linux.is_some()) {
                    (false, false) => "missing on both sides",
                    (false, true) => "Oxok: missing",
                    (true, false) => "Linux: missing",
                    (true, true) => "no ratio",
                };
                o.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{mid:.1}\" fill=\"#888\" font-style=\"italic\">{missing}</text>\n",
                    one + 6.0
                ));
            }
        }
    }
    o.push_str(&format!(
        "<rect x=\"{LABEL_X}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#2e7d32\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n\
         <rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#c62828\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n</svg>\n",
        bottom + 22.0,
        LABEL_X + 18.0,
        bottom + 32.0,
        escape(style.good),
        LABEL_X + 340.0,
        bottom + 22.0,
        LABEL_X + 358.0,
        bottom + 32.0,
        escape(style.bad),
    ));
    o
}

/// The decades `(lo, hi)` (powers of ten) the axis spans: all ratios and 1×,
/// at least 0.1×–10×.
fn decades(ratios: &[f64]) -> (i32, i32) {
    let min = ratios.iter().copied().fold(1.0, f64::min);
    let max = ratios.iter().copied().fold(1.0, f64::max);
    let lo = (min.log10() + 1e-9).floor().min(-1.0) as i32;
    let hi = (max.log10() - 1e-9).ceil().max(1.0) as i32;
    (lo, hi)
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::options::Mode;
    use super::super::stats::{Summary, ratio};
    use super::*;

    fn row(w: &str, o: Option<f64>, l: Option<f64>) -> Row {
        let (oxok, linux) = (o.and_then(|v| Summary::of(&[v])), l.and_then(|v| Summary::of(&[v])));
        Row { workload: w.into(), unit: "cycles".into(), mode: Mode::Wall, oxok, linux, ratio: ratio(oxok, linux) }
    }

    #[test]
    fn axis_spans_every_ratio() {
        assert_eq!(decades(&[]), (-1, 1));
        assert_eq!(decades(&[0.5, 2.0]), (-1, 1));
        assert_eq!(decades(&[0.05, 250.0]), (-2, 3));
        assert_eq!(decades(&[10.0]), (-1, 1));
    }

    #[test]
    fn draws_bars_and_missing_rows() {
        let rows = [
            row("null_call", Some(100.0), Some(400.0)),
            row("fork_exit_wait", Some(3e6), Some(1e6)),
            row("appel_trap", None, Some(5.0)),
        ];
        let svg = render(&rows, "a <test> & more");
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("a &lt;test&gt; &amp; more"));
        assert!(svg.contains(">0.250×<") && svg.contains(">3.00×<"));
        assert!(svg.contains("Oxok: missing"));
        assert_eq!(svg.matches("fill=\"#2e7d32\"").count(), 2, "one green bar + legend");
        assert_eq!(svg.matches("fill=\"#c62828\"").count(), 2, "one red bar + legend");
        assert!(svg.contains(">0.1×<") && svg.contains(">10×<"));
        // Balanced tags: every opened element is closed or self-closing.
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }
}
