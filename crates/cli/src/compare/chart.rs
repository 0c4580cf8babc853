//! The comparison as a picture: per job and direction, a bar per metric of B's change
//! against A in percent, its 95% interval as a whisker, coloured by verdict; and the
//! same with the tables in one HTML page.

use super::inputs::Row;
use super::output;
use ioscope_analysis::Verdict;
use ioscope_plot::html::Page;
use ioscope_plot::{rgb, BarSeries, Bars, Figure, Panel, Rgb};

/// Verdict colours: green better, red worse, amber not enough repetitions, grey no change.
fn colour(v: Verdict) -> Rgb {
    match v {
        Verdict::Better => rgb(0, 158, 115),
        Verdict::Worse => rgb(213, 94, 0),
        Verdict::NotEnough => rgb(230, 159, 0),
        Verdict::NoChange => rgb(150, 150, 150),
    }
}

/// One panel per job and direction, in row order.
pub fn figure(rows: &[Row]) -> Figure {
    let mut groups: Vec<(String, &'static str, Vec<&Row>)> = Vec::new();
    for r in rows {
        let label = r.job.label();
        match groups
            .iter_mut()
            .find(|(j, d, _)| *j == label && *d == r.dir)
        {
            Some(g) => g.2.push(r),
            None => groups.push((label, r.dir, vec![r])),
        }
    }
    let panels = groups
        .into_iter()
        .map(|(job, dir, rows)| {
            let mut s = BarSeries::new("B vs A", rows.iter().map(|r| r.cmp.delta_pct).collect());
            s.whiskers = rows.iter().map(|r| r.cmp.ci_pct).collect();
            s.colors = rows.iter().map(|r| Some(colour(r.cmp.verdict))).collect();
            Panel::Bars(Bars {
                title: format!("{job} {dir}: B against A (95% interval; green better, red worse)"),
                y_label: "change, %".into(),
                categories: rows.iter().map(|r| r.metric.to_string()).collect(),
                series: vec![s],
            })
        })
        .collect();
    Figure::new(panels)
}

/// A self-contained page: what was compared, what differs, the table and the chart.
pub fn html(head: &[String], rows: &[Row], notes: &[String], fig: &Figure) -> String {
    let mut p = Page::new("ioscope compare");
    if let Some((first, rest)) = head.split_first() {
        p.para(first);
        if !rest.is_empty() {
            p.heading("Differences besides the results");
            p.pre(&rest.join("\n"));
        }
    }
    p.heading("Results");
    let cells: Vec<Vec<String>> = rows.iter().map(|r| output::cells(r).to_vec()).collect();
    p.table(&output::HEADER, &cells);
    if !notes.is_empty() {
        p.pre(&notes.join("\n"));
    }
    let sub = head.first().map_or("", String::as_str);
    p.figure(
        fig,
        sub,
        "Change of B against A per metric; whiskers: 95% interval of the change",
    );
    p.render()
}
