//! `<EChart>`: one component owns one ECharts instance and updates it in place.
//!
//! Options come from the core's pure chart builders as JSON; they are handed to ECharts through
//! `JSON.parse`, so no function or HTML string can travel with them. Tooltips use ECharts'
//! `richText` mode (canvas text), set by the core, so text from an artifact or a server is never
//! parsed as HTML.

use std::sync::atomic::{AtomicU64, Ordering};

use js_sys::{Function, Object, Reflect, JSON};
use leptos::html::Div;
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

use super::clock::measured;
use super::transport::js_text;

static NEXT_CHART_ID: AtomicU64 = AtomicU64::new(1);

/// A handle on an ECharts instance (a JS object).
#[derive(Clone)]
struct EChartsInstance(JsValue);

impl EChartsInstance {
    fn init(element: &web_sys::HtmlElement) -> Result<Self, String> {
        let window = web_sys::window().ok_or("no window")?;
        let echarts = Reflect::get(&window, &"echarts".into())
            .ok()
            .filter(|value| !value.is_undefined())
            .ok_or("ECharts did not load (echarts.min.js is missing from the build)")?;
        let init: Function = Reflect::get(&echarts, &"init".into())
            .map_err(|err| js_text(&err))?
            .dyn_into()
            .map_err(|_| "echarts.init is not a function".to_string())?;
        let options = Object::new();
        let _ = Reflect::set(&options, &"renderer".into(), &"canvas".into());
        let instance = init
            .call3(&echarts, element, &JsValue::NULL, &options)
            .map_err(|err| js_text(&err))?;
        Ok(Self(instance))
    }

    fn call(&self, method: &str, args: &[JsValue]) -> Result<JsValue, String> {
        let function: Function = Reflect::get(&self.0, &method.into())
            .map_err(|err| js_text(&err))?
            .dyn_into()
            .map_err(|_| format!("ECharts instance has no {method}()"))?;
        let args: js_sys::Array = args.iter().collect();
        function.apply(&self.0, &args).map_err(|err| js_text(&err))
    }

    fn set_option(&self, option: &Value) -> Result<(), String> {
        let json = serde_json::to_string(option).map_err(|err| err.to_string())?;
        let parsed = JSON::parse(&json).map_err(|err| js_text(&err))?;
        let settings = Object::new();
        let _ = Reflect::set(&settings, &"notMerge".into(), &JsValue::TRUE);
        let _ = Reflect::set(&settings, &"lazyUpdate".into(), &JsValue::TRUE);
        self.call("setOption", &[parsed, settings.into()])
            .map(|_| ())
    }

    fn png_data_url(&self, dark: bool) -> Result<String, String> {
        let settings = Object::new();
        let _ = Reflect::set(&settings, &"type".into(), &"png".into());
        let _ = Reflect::set(&settings, &"pixelRatio".into(), &JsValue::from_f64(2.0));
        let background = if dark { "#1b1b22" } else { "#ffffff" };
        let _ = Reflect::set(&settings, &"backgroundColor".into(), &background.into());
        self.call("getDataURL", &[settings.into()])?
            .as_string()
            .ok_or_else(|| "ECharts returned no image".to_string())
    }

    fn resize(&self) {
        let _ = self.call("resize", &[]);
    }

    fn dispose(&self) {
        let _ = self.call("dispose", &[]);
    }
}

/// Whether the page is in dark mode (`prefers-color-scheme: dark`).
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|window| {
            window
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
        })
        .is_some_and(|query| query.matches())
}

/// A chart. `option` is an ECharts option built by `crate::core::charts`; when it changes the
/// same instance is updated. `title` names the PNG download.
#[component]
pub fn EChart(
    /// The chart's option JSON.
    #[prop(into)]
    option: Signal<Value>,
    /// Used for the PNG file name and the accessible label.
    #[prop(into)]
    title: String,
    /// The `data-testid` of the chart's container.
    #[prop(into, optional)]
    test_id: Option<String>,
    /// CSS height of the chart, e.g. `"320px"`.
    #[prop(into, default = "320px".to_string())]
    height: String,
) -> impl IntoView {
    let id = format!("chart-{}", NEXT_CHART_ID.fetch_add(1, Ordering::Relaxed));
    let container = NodeRef::<Div>::new();
    let instance = StoredValue::new_local(None::<EChartsInstance>);
    let error = RwSignal::new(None::<String>);

    Effect::new(move |_| {
        let option = option.get();
        let Some(element) = container.get() else {
            return;
        };
        if instance.with_value(Option::is_none) {
            match EChartsInstance::init(&element) {
                Ok(created) => instance.set_value(Some(created)),
                Err(reason) => {
                    error.set(Some(reason));
                    return;
                }
            }
        }
        instance.with_value(|chart| {
            if let Some(chart) = chart {
                if let Err(reason) = measured("strobe:chart-draw", || chart.set_option(&option)) {
                    error.set(Some(format!("the chart could not be drawn: {reason}")));
                }
            }
        });
    });

    let resize = window_event_listener(leptos::ev::resize, move |_| {
        instance.with_value(|chart| {
            if let Some(chart) = chart {
                chart.resize();
            }
        })
    });
    on_cleanup(move || {
        resize.remove();
        instance.with_value(|chart| {
            if let Some(chart) = chart {
                chart.dispose();
            }
        });
    });

    let file_stem: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let save_png = move |_| {
        let result = instance.with_value(|chart| match chart {
            Some(chart) => chart.png_data_url(prefers_dark()),
            None => Err("the chart is not ready".to_string()),
        });
        match result.and_then(|url| super::files::download_url(&format!("{file_stem}.png"), &url)) {
            Ok(()) => error.set(None),
            Err(reason) => error.set(Some(reason)),
        }
    };

    view! {
        <figure class="chart" data-testid=test_id>
            <div class="chart-canvas" id=id node_ref=container style:height=height aria-label=title.clone() role="img"></div>
            <figcaption class="chart-caption">
                <span>{title}</span>
                <button type="button" class="small" on:click=save_png>"PNG"</button>
            </figcaption>
            {move || error.get().map(|reason| view! { <p class="error-box">{reason}</p> })}
        </figure>
    }
}
