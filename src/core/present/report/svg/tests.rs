//! Tests of the SVG drawing: ticks and labels, shapes, gaps, and hostile text kept as text.

use super::*;

#[test]
fn steps_ticks_and_labels_read_as_people_write_them() {
    assert_eq!(nice_step(10_000.0), 2_000.0);
    assert_eq!(nice_step(0.9), 0.2);
    assert_eq!(nice_step(0.0), 1.0);
    assert_eq!(tick_label(12_000.0, 2_000.0), "12,000");
    assert_eq!(tick_label(0.4, 0.2), "0.4");
    assert_eq!(tick_label(-0.0, 1.0), "0");
    assert_eq!(round_value(1234.5678), 1234.6);
    assert_eq!(round_value(0.000123456), 0.00012346);
}

#[test]
fn a_line_a_bar_and_a_hostile_name_are_drawn_as_shapes_and_text() {
    let option = json!({
        "xAxis": {"type": "value", "name": "TTFT (ms)"},
        "yAxis": {"type": "value", "name": "Requests", "min": 0},
        "series": [
            {"type": "line", "name": "<img src=x onerror=alert(1)>",
             "data": [[1.0, 2.0], "-", [3.0, 4.0], {"value": [5.0, 6.0], "name": "c=<b>"}],
             "label": {"show": true},
             "lineStyle": {"color": "red\" onload=\"x"},
             "markLine": {"data": [{"xAxis": 2.5, "name": "p50 <script>"}]}},
            {"type": "bar", "name": "bars", "data": [[1.0, 1.0], [2.0, 3.0]]}
        ]
    });
    let chart = chart_svg(&option).expect("drawn");
    assert!(!chart.svg.contains("<img"), "{}", chart.svg);
    assert!(!chart.svg.contains("<script"));
    assert!(!chart.svg.contains("<b>"));
    assert!(chart.svg.contains("c=&lt;b&gt;"));
    assert!(
        !chart.svg.contains("onload"),
        "a colour that is no colour is dropped"
    );
    assert_eq!(chart.legend[0].0, "<img src=x onerror=alert(1)>");
    let first = &chart.hover["s"][0];
    assert_eq!(first["d"], json!([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(first["l"], json!(["", "", "c=<b>"]));
    // A gap breaks the line: two moves.
    let line = chart
        .svg
        .split("<path")
        .find(|p| p.contains("stroke-linejoin"))
        .expect("line");
    assert_eq!(line.matches('M').count(), 2, "{line}");
}

#[test]
fn an_option_without_series_is_not_drawn() {
    assert_eq!(chart_svg(&json!({"title": [{"text": "No data"}]})), None);
}
