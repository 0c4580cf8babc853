//! The interactive form of a panel: an Apache ECharts option (JSON) that the page's
//! script (`assets/charts.js`) hands to ECharts, embedded in the page. The same panels
//! are drawn as SVG by plotters for papers and mail; here they gain hover values, zoom,
//! series toggling and log/linear axes.
//!
//! Why ECharts: one well-kept library (Apache-2.0, the ASF's) covers every chart the
//! reports draw — lines on log axes, grouped bars, heatmaps with a colour scale — with
//! a legend that scrolls instead of overflowing and labels that hide rather than
//! overlap, and it needs no network: the whole library is inlined in the page.

use crate::lines::format_num;
use crate::style::{self, Rgb};
use crate::{Bars, Heatmap, Lines, Panel, XScale};
use serde_json::{json, Value};

/// The ECharts option of a panel, with `subtitle` under its title.
pub fn option(panel: &Panel, subtitle: &str) -> Value {
    let mut v = match panel {
        Panel::Lines(l) => lines(l),
        Panel::Bars(b) => bars(b),
        Panel::Heatmap(h) => heatmap(h),
    };
    v["title"]["subtext"] = Value::from(subtitle);
    v
}

fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Line styles beyond the palette's eight colours, so that series 9 and 17 differ
/// from series 1.
const DASHES: [&str; 3] = ["solid", "dashed", "dotted"];

fn title(text: &str) -> Value {
    json!({"text": text, "left": "center", "textStyle": {"fontSize": 15}, "subtextStyle": {"fontSize": 12}})
}

/// What every chart shares: title, legend that scrolls, tooltip, zoom tools, a grid
/// that keeps its axis labels inside.
fn frame(text: &str, trigger: &str) -> Value {
    json!({
        "title": title(text),
        "animation": false,
        "legend": {"type": "scroll", "bottom": 0},
        "tooltip": {"trigger": trigger, "confine": true},
        "toolbox": {"orient": "vertical", "right": 0, "top": 70, "feature": {"dataZoom": {}, "restore": {}, "saveAsImage": {}}},
        "grid": {"left": 20, "right": 40, "top": 70, "bottom": 60, "containLabel": true},
    })
}

fn lines(l: &Lines) -> Value {
    let mut v = frame(&l.title, "axis");
    let names: Vec<Value> = l.x_names.iter().map(|(x, n)| json!([x, n])).collect();
    v["ioscope"] = json!({"kind": "lines", "xLog": l.x_scale == XScale::Log2, "xNames": names});
    let (lo, hi) = match l.x_names.is_empty() {
        true => x_extent(l),
        // Categories: a margin at both ends keeps the first and last dots clear of the axes.
        false => (json!(-0.7), json!(l.x_names.len() as f64 - 0.3)),
    };
    v["xAxis"] = json!({
        "type": if l.x_scale == XScale::Log2 { "log" } else { "value" },
        "logBase": 2,
        "name": l.x_label, "nameLocation": "middle", "nameGap": 28,
        "min": lo, "max": hi,
        // The ends' labels inside the grid: the first clear of the y axis's "0".
        "axisLabel": {"hideOverlap": true, "alignMinLabel": "left", "alignMaxLabel": "right"},
    });
    if !l.x_names.is_empty() {
        // Ticks and labels at the categories only (ECharts counts ticks from the axis's min).
        let at: Vec<f64> = l.x_names.iter().map(|n| n.0).collect();
        v["xAxis"]["axisLabel"]["customValues"] = json!(at);
        v["xAxis"]["axisTick"] = json!({"customValues": at});
        v["xAxis"]["splitLine"] = json!({"show": false});
        // Many names turn on end: a name's box across the axis shrinks with the angle
        // (about 50 px at 60 degrees for a 75 px name, the height of a line at 90),
        // so that a chart half the page wide keeps them apart, whatever width the y
        // axis's labels take.
        let n = l.x_names.len();
        if n > 6 {
            let (rotate, gap, bottom) = if n > 10 { (90, 95, 115) } else { (60, 80, 100) };
            v["xAxis"]["axisLabel"]["rotate"] = json!(rotate);
            v["xAxis"]["nameGap"] = json!(gap);
            v["grid"]["bottom"] = json!(bottom);
        }
    }
    if l.x_scale == XScale::Log2 {
        // A tick per power of two (ECharts' default skips to every tenth).
        v["xAxis"]["interval"] = json!(1);
    }
    v["yAxis"] = json!({"type": if l.y_log { "log" } else { "value" }, "logBase": 10, "name": l.y_label,
        "nameLocation": "end", "nameTextStyle": {"align": "left"}, "axisLabel": {"hideOverlap": true}});
    if !l.x_names.is_empty() {
        // The y axis at the left edge, not through the first category (x = 0).
        v["yAxis"]["axisLine"] = json!({"onZero": false});
    }
    // A log axis has no place for 0 or below.
    let keep = |y: f64| y.is_finite() && (!l.y_log || y > 0.0);
    let mut series: Vec<Value> = l
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let colour = hex(s.color.unwrap_or_else(|| style::series(i)));
            json!({
                "name": s.name, "type": if s.line { "line" } else { "scatter" },
                "data": s.points.iter().filter(|p| keep(p.1)).map(|&(x, y)| [x, y]).collect::<Vec<_>>(),
                "showSymbol": s.dots, "symbolSize": 6, "sampling": "lttb",
                "color": colour,
                "lineStyle": {"type": if s.dashed { "dashed" } else { DASHES[(i / style::PALETTE.len()) % DASHES.len()] }},
            })
        })
        .collect();
    let failed: Vec<[f64; 2]> = l
        .series
        .iter()
        .flat_map(|s| s.failed.iter().map(|&x| [x, 0.0]))
        .collect();
    if !failed.is_empty() {
        series.push(
            json!({"name": "failed", "type": "scatter", "symbol": "diamond", "symbolSize": 10,
            "color": hex(style::FAILED), "data": failed, "tooltip": {"show": false}}),
        );
    }
    if !l.labels.is_empty() {
        let data: Vec<Value> = l
            .labels
            .iter()
            .map(|p| json!({"value": [p.x, p.y], "name": p.text}))
            .collect();
        series.push(json!({
            "name": "marked points", "type": "scatter", "symbol": "circle", "symbolSize": 9,
            "itemStyle": {"color": "rgba(0,0,0,0)", "borderColor": "#333", "borderWidth": 1.5},
            "label": {"show": false, "formatter": "{b}", "position": "top", "fontSize": 11},
            "emphasis": {"label": {"show": true}},
            "labelLayout": {"hideOverlap": true},
            "data": data,
        }));
    }
    for b in &l.bands {
        series.push(json!({
            "name": b.name, "type": "line", "data": [], "color": hex(b.color),
            "markArea": {"silent": true, "itemStyle": {"color": hex(b.color), "opacity": 0.18},
                "data": [[{"coord": [b.x.0, b.y.0]}, {"coord": [b.x.1, b.y.1]}]]},
        }));
    }
    v["series"] = Value::from(series);
    v
}

/// x fitted to the data: the axis ends at the last point, not at the next round number.
fn x_extent(l: &Lines) -> (Value, Value) {
    let xs = l
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0).chain(s.failed.iter().copied()))
        .chain(l.bands.iter().flat_map(|b| [b.x.0, b.x.1]))
        .filter(|x| x.is_finite() && (l.x_scale == XScale::Linear || *x > 0.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if lo > hi {
        return (Value::Null, Value::Null);
    }
    if l.x_scale == XScale::Log2 {
        // Whole powers of two at the ends: the labels between are 2, 4, 8 …, not 5,079.04.
        return (
            json!(lo.log2().floor().exp2()),
            json!(hi.log2().ceil().exp2()),
        );
    }
    (json!(lo), json!(hi))
}

fn bars(b: &Bars) -> Value {
    let mut v = frame(&b.title, "axis");
    let n = b.categories.len();
    v["ioscope"] = json!({"kind": "bars"});
    v["xAxis"] = json!({
        "type": "category", "data": b.categories,
        "axisLabel": {"interval": 0, "rotate": match n { 0..=6 => 0, 7..=10 => 30, _ => 60 }, "hideOverlap": true},
    });
    v["yAxis"] = json!({"type": "value", "name": b.y_label, "nameTextStyle": {"align": "left"}, "axisLabel": {"hideOverlap": true}});
    let series: Vec<Value> = b
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let data: Vec<Value> = s
                .values
                .iter()
                .enumerate()
                .map(|(c, val)| match s.colors.get(c).copied().flatten() {
                    Some(col) => json!({"value": val, "itemStyle": {"color": hex(col)}}),
                    None => json!(val),
                })
                .collect();
            let whiskers: Vec<Value> = s
                .whiskers
                .iter()
                .enumerate()
                .filter_map(|(c, w)| w.map(|(lo, hi)| json!([c, lo, hi])))
                .collect();
            json!({"name": s.name, "type": "bar", "data": data, "color": hex(style::series(i)),
                "ioscopeWhiskers": whiskers})
        })
        .collect();
    v["series"] = Value::from(series);
    v
}

fn heatmap(h: &Heatmap) -> Value {
    let mut v = frame(&h.title, "item");
    v["ioscope"] = json!({"kind": "heatmap", "logColour": h.log_colour});
    let mut data = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (yi, row) in h.values.iter().enumerate() {
        for (xi, val) in row.iter().enumerate() {
            if let Some(x) = val.filter(|x| x.is_finite()) {
                lo = lo.min(x);
                hi = hi.max(x);
                data.push(json!([xi, yi, x, format_num(x)]));
            }
        }
    }
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    }
    // The colour looks at dimension 4: the value itself, or its log on a log scale.
    for d in &mut data {
        let c = h.colour_value(d[2].as_f64().unwrap_or(0.0), hi);
        if let Some(a) = d.as_array_mut() {
            a.push(json!(c));
        }
    }
    let (clo, chi) = h.colour_range(lo, hi);
    v["legend"] = json!({"show": false});
    // Room under the x axis's name for the colour scale and its end values.
    v["grid"]["bottom"] = json!(100);
    v["xAxis"] = json!({"type": "category", "data": h.xs, "name": h.x_label, "nameLocation": "middle",
        "nameGap": 28, "splitArea": {"show": true}, "axisLabel": {"hideOverlap": true}});
    v["yAxis"] = json!({"type": "category", "data": h.ys, "name": h.y_label, "nameTextStyle": {"align": "left"},
        "splitArea": {"show": true}, "axisLabel": {"hideOverlap": true}});
    v["visualMap"] = json!({
        "min": clo, "max": chi, "dimension": 4, "calculable": true, "orient": "horizontal", "left": "center", "bottom": 0,
        "inRange": {"color": ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]},
    });
    v["series"] = json!([{
        "name": h.title, "type": "heatmap", "data": data,
        "label": {"show": h.labelled(), "formatter": "{@[3]}", "fontSize": 11},
        "labelLayout": {"hideOverlap": true},
        "emphasis": {"itemStyle": {"borderColor": "#000", "borderWidth": 1}},
    }]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BarSeries, LineSeries, PointLabel};

    #[test]
    fn lines_fit_x_to_the_data_and_keep_every_series() {
        let l = Lines {
            title: "IOPS".into(),
            x_label: "iodepth".into(),
            y_label: "IOPS".into(),
            x_scale: XScale::Log2,
            y_log: false,
            x_names: Vec::new(),
            series: (0..20)
                .map(|i| LineSeries::new(format!("s{i}"), vec![(1.0, 1.0), (64.0, i as f64)]))
                .collect(),
            labels: vec![PointLabel {
                x: 64.0,
                y: 3.0,
                text: "best".into(),
            }],
            bands: vec![],
        };
        let o = option(&Panel::Lines(l), "bs=4k");
        assert_eq!(o["xAxis"]["max"], json!(64.0));
        assert_eq!(o["xAxis"]["type"], "log");
        assert_eq!(o["title"]["subtext"], "bs=4k");
        let s = o["series"].as_array().unwrap();
        assert_eq!(s.len(), 21);
        assert_eq!(s[9]["lineStyle"]["type"], "dashed");
        assert_eq!(s[20]["data"][0]["name"], "best");
    }

    #[test]
    fn log_y_leaves_out_what_it_cannot_place_and_categories_get_their_ticks() {
        let mut dots = LineSeries::new("A", vec![(0.0, 0.0), (1.0, 10.0)]);
        dots.line = false;
        let mut ideal = LineSeries::new("ideal", vec![(0.0, 5.0), (1.0, 5.0)]);
        ideal.dashed = true;
        let l = Lines {
            title: "t".into(),
            x_label: "metric".into(),
            y_label: "us".into(),
            x_scale: XScale::Linear,
            y_log: true,
            x_names: vec![(0.0, "p50".into()), (1.0, "p99".into())],
            series: vec![dots, ideal],
            labels: vec![],
            bands: vec![],
        };
        let o = option(&Panel::Lines(l), "");
        assert_eq!(o["yAxis"]["type"], "log");
        assert_eq!(o["series"][1]["lineStyle"]["type"], "dashed");
        assert_eq!(o["series"][0]["type"], "scatter");
        assert_eq!(o["series"][0]["data"], json!([[1.0, 10.0]]));
        assert_eq!(o["xAxis"]["axisLabel"]["customValues"], json!([0.0, 1.0]));
        assert_eq!(o["ioscope"]["xNames"][1], json!([1.0, "p99"]));
    }

    #[test]
    fn bars_carry_whiskers_and_heatmaps_their_cells() {
        let mut s = BarSeries::new("A", vec![Some(1.0), None]);
        s.whiskers = vec![Some((0.5, 1.5)), None];
        let b = Bars {
            title: "t".into(),
            y_label: "y".into(),
            categories: vec!["a".into(), "b".into()],
            series: vec![s],
        };
        let o = option(&Panel::Bars(b), "");
        assert_eq!(o["series"][0]["ioscopeWhiskers"], json!([[0, 0.5, 1.5]]));
        assert_eq!(o["series"][0]["data"][1], Value::Null);
        let h = Heatmap {
            title: "h".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            xs: vec!["1".into(), "2".into()],
            ys: vec!["1".into()],
            values: vec![vec![Some(3.0), None]],
            log_colour: false,
        };
        let o = option(&Panel::Heatmap(h), "");
        assert_eq!(o["series"][0]["data"], json!([[0, 0, 3.0, "3", 3.0]]));
    }
}
