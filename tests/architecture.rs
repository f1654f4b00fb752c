//! The house rules of the source tree, checked on every `cargo test`: no import circle between
//! the modules of `src/` or `sim/src/`, the core's and the browser layer's folders in one order
//! each with every import pointing down (nothing that reads files imports what presents them),
//! the pure core free of clocks and the browser, and every split point of the wasm fallible and
//! documented.
//! See docs/design/architecture.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One source file as a module: its path in the crate (`core::observe::row`) and its text with
/// test-only code left out (a test may reach anywhere).
struct ModuleFile {
    module: Vec<String>,
    code: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The crate-relative module path of a file under `src_root` (`a/mod.rs` is `a`).
fn module_of(src_root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src_root).expect("file under its root");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file without its `#[cfg(test)]` modules, line comments and doc comments.
fn production_code(text: &str) -> String {
    let mut code = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut pending_test_attribute = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(depth) = skip_depth.as_mut() {
            *depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if *depth <= 0 {
                skip_depth = None;
            }
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            pending_test_attribute = true;
            continue;
        }
        if pending_test_attribute {
            pending_test_attribute = false;
            if trimmed.contains('{') {
                let depth = line.matches('{').count() as i32 - line.matches('}').count() as i32;
                if depth > 0 {
                    skip_depth = Some(depth);
                }
            }
            // `mod tests;` and single test-only items are dropped either way.
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn modules_under(src_root: &Path) -> Vec<ModuleFile> {
    let mut files = Vec::new();
    rust_files(src_root, &mut files);
    files
        .iter()
        .filter(|file| {
            let name = file.file_name().expect("name").to_string_lossy();
            name != "tests.rs" && name != "test_support.rs" && name != "test_vectors.rs"
        })
        .map(|file| ModuleFile {
            module: module_of(src_root, file),
            code: production_code(&fs::read_to_string(file).expect("readable source")),
        })
        .collect()
}

/// Every module path a file names through `crate::…`, `super::…` or `self::…` (in `use`
/// declarations and inline paths), resolved to the longest prefix that is a module file.
fn imports(file: &ModuleFile, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let code = &file.code;
    // The module a relative path starts from: a `mod.rs` file *is* its directory's module.
    let here = file.module.clone();
    let mut starts = Vec::new();
    for keyword in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(offset) = code[from..].find(keyword) {
            let at = from + offset;
            from = at + keyword.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            starts.push((at, keyword));
        }
    }
    for (at, keyword) in starts {
        let rest = &code[at + keyword.len()..];
        let mut base: Vec<String> = match keyword {
            "crate::" => Vec::new(),
            "self::" => here.clone(),
            _ => {
                let mut parent = here.clone();
                parent.pop();
                parent
            }
        };
        let mut path = base.clone();
        // Follow further `super::` and identifier segments.
        let mut tail = rest;
        loop {
            if let Some(after) = tail.strip_prefix("super::") {
                base.pop();
                path = base.clone();
                tail = after;
                continue;
            }
            let segment: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if segment.is_empty() {
                break;
            }
            path.push(segment.clone());
            tail = &tail[segment.len()..];
            if let Some(after) = tail.strip_prefix("::") {
                tail = after;
            } else {
                break;
            }
        }
        // `{a, b}` groups after the path name modules or items under it.
        let mut candidates = Vec::new();
        if !tail.starts_with('{') {
            candidates.push(path.clone());
        } else {
            let group: String = tail.chars().take_while(|c| *c != '}').collect();
            for name in group.trim_start_matches('{').split(',') {
                let name = name.split("::").next().unwrap_or_default().trim();
                if !name.is_empty() {
                    let mut with = path.clone();
                    with.push(name.to_owned());
                    candidates.push(with);
                }
            }
        }
        for candidate in candidates {
            let mut prefix = candidate;
            while !prefix.is_empty() && !known.contains(&prefix) {
                prefix.pop();
            }
            if !prefix.is_empty() && prefix != file.module {
                found.insert(prefix);
            }
        }
    }
    found
}

/// The import graph of a crate's `src`, module to modules.
fn import_graph(src_root: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules_under(src_root);
    let known: BTreeSet<Vec<String>> = modules.iter().map(|file| file.module.clone()).collect();
    modules
        .iter()
        .map(|file| (file.module.clone(), imports(file, &known)))
        .collect()
}

/// Every circle of the graph (strongly connected components with more than one module).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively small enough to write out recursively here.
    struct State<'a> {
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a Vec<String>) {
        state.index.insert(node, state.next);
        state.low.insert(node, state.next);
        state.next += 1;
        state.stack.push(node);
        state.on_stack.insert(node);
        let graph = state.graph;
        for target in graph.get(node).into_iter().flatten() {
            let Some((target, _)) = graph.get_key_value(target) else {
                continue;
            };
            if !state.index.contains_key(target) {
                visit(state, target);
                let low = state.low[target].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(target) {
                let low = state.index[target].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.join("::"));
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_import_circle_in_the_app() {
    let graph = import_graph(&root().join("src"));
    assert!(
        graph.len() > 40,
        "the walk found the modules: {}",
        graph.len()
    );
    let found = circles(&graph);
    assert!(found.is_empty(), "import circles in src/: {found:#?}");
}

#[test]
fn no_import_circle_in_the_simulator() {
    let graph = import_graph(&root().join("sim/src"));
    assert!(
        graph.len() > 10,
        "the walk found the modules: {}",
        graph.len()
    );
    let found = circles(&graph);
    assert!(found.is_empty(), "import circles in sim/src/: {found:#?}");
}

/// The core's folders from the bottom up, in pipeline order: each may import only the folders
/// before it. `schema` (the artifact file's plain serde types) sits low, so that every stage
/// that fills a part of the file (`observe`, `load`, `telemetry`) stands below `artifact`,
/// which builds the whole file from them. A new folder is placed here before it is used.
const CORE_FOLDERS: [&str; 17] = [
    "format",
    "python",
    "inference",
    "config",
    "schema",
    "workload",
    "load",
    "plan",
    "stream",
    "observe",
    "telemetry",
    "prompt",
    "artifact",
    "read",
    "slo",
    "live",
    "present",
];

/// The browser layer's folders from the bottom up (src/web/mod.rs): the JS bindings, the
/// platform, the page's state, the measuring thread, the page's side of a run, the components.
const WEB_FOLDERS: [&str; 6] = ["js", "platform", "state", "measure", "run", "ui"];

/// The measuring thread's modules from the bottom up (src/web/measure/mod.rs): the file reader's
/// worker; one `fetch()` and its reads, a run's state, Resource Timing; one request on the wire,
/// its body, one measured request; the measured run's three loops; the stages before it
/// (bodies ahead, rehearsal and dry run, then the warm-up); the scheduler that runs the stages
/// in order, and the worker's entry. A run's setup reads as one pipeline: no stage calls back
/// into one above it.
const MEASURE_MODULES: [&str; 15] = [
    "reading",
    "transport",
    "live_run",
    "resource_timing",
    "send",
    "body",
    "request",
    "slots",
    "open_loop",
    "sessions",
    "prepare",
    "warmup",
    "scheduler",
    "worker",
    "read_bench",
];

/// `core::read`'s modules from the bottom up: the rules and the report's carried files, then a
/// dropped file opened (an artifact, another tool's results, Locust's records), then what opens
/// the files it finds (a `.zip`, a link).
const READ_FOLDERS: [&str; 5] = ["validate", "carried", "opened", "bundle", "link"];

/// Every import under `layer` (e.g. `["core"]`) that runs from one of its folders to a folder
/// above it in `order`, or that names a folder `order` does not place. The layer's root module
/// (`core/mod.rs`, `web/mod.rs`) only declares the folders, and is not a folder of its own.
fn arrows_up(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    layer: &[&str],
    order: &[&str],
) -> Vec<String> {
    let folder_of = |module: &Vec<String>| -> Option<String> {
        (module.len() > layer.len() && module.iter().zip(layer).all(|(a, b)| a == b))
            .then(|| module[layer.len()].clone())
    };
    let layer = layer.join("::");
    let floor = |folder: &str| order.iter().position(|placed| *placed == folder);
    let mut found = Vec::new();
    for (module, targets) in graph {
        let Some(from) = folder_of(module) else {
            continue;
        };
        let Some(from_floor) = floor(&from) else {
            found.push(format!("{layer}::{from} is not placed in the folder order"));
            continue;
        };
        for target in targets {
            let Some(to) = folder_of(target) else {
                continue;
            };
            match floor(&to) {
                Some(to_floor) if to_floor <= from_floor => {}
                Some(_) => found.push(format!(
                    "{} imports {}, a folder above it",
                    module.join("::"),
                    target.join("::")
                )),
                None => found.push(format!(
                    "{} imports {}, which the folder order does not place",
                    module.join("::"),
                    target.join("::")
                )),
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Drawn as folders and the imports between them, every arrow of the core points down.
#[test]
fn the_core_reads_top_to_bottom() {
    let graph = import_graph(&root().join("src"));
    let is_under = |module: &Vec<String>, prefix: &[&str]| {
        module.len() >= prefix.len() && module.iter().zip(prefix).all(|(a, b)| a == b)
    };
    for folder in CORE_FOLDERS {
        assert!(
            graph
                .keys()
                .any(|module| is_under(module, &["core", folder])),
            "the walk found core::{folder}"
        );
    }
    let mut broken = arrows_up(&graph, &["core"], &CORE_FOLDERS);
    for (module, targets) in &graph {
        if is_under(module, &["core"]) && targets.iter().any(|target| is_under(target, &["web"])) {
            broken.push(format!("{} imports the browser layer", module.join("::")));
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the pipeline: {broken:#?}"
    );
}

/// Inside `read` too: opening a file stands above the rules, and below what finds the files.
#[test]
fn the_read_folders_point_down() {
    let graph = import_graph(&root().join("src"));
    let broken = arrows_up(&graph, &["core", "read"], &READ_FOLDERS);
    assert!(
        broken.is_empty(),
        "imports against read's order: {broken:#?}"
    );
}

/// And in the browser layer, folder by folder.
#[test]
fn the_web_folders_point_down() {
    let graph = import_graph(&root().join("src"));
    let broken = arrows_up(&graph, &["web"], &WEB_FOLDERS);
    assert!(
        broken.is_empty(),
        "imports against the web layers: {broken:#?}"
    );
}

/// And on the measuring thread, module by module.
#[test]
fn the_measuring_thread_reads_as_one_pipeline() {
    let graph = import_graph(&root().join("src"));
    for module in MEASURE_MODULES {
        assert!(
            graph.keys().any(|found| found.len() == 3
                && found[..2] == ["web", "measure"]
                && found[2] == module),
            "the walk found web::measure::{module}"
        );
    }
    let broken = arrows_up(&graph, &["web", "measure"], &MEASURE_MODULES);
    assert!(
        broken.is_empty(),
        "imports against the measuring thread's order: {broken:#?}"
    );
}

/// The order checker itself: a planted upward import and an unplaced folder are reported,
/// a downward one is not.
#[test]
fn the_order_checker_finds_upward_arrows() {
    let module = |path: &[&str]| {
        path.iter()
            .map(|part| (*part).to_owned())
            .collect::<Vec<_>>()
    };
    let mut graph = BTreeMap::new();
    graph.insert(
        module(&["core", "observe", "row"]),
        BTreeSet::from([module(&["core", "schema", "rows"])]),
    );
    graph.insert(module(&["core", "schema", "rows"]), BTreeSet::new());
    assert!(arrows_up(&graph, &["core"], &CORE_FOLDERS).is_empty());
    graph.insert(
        module(&["core", "schema", "rows"]),
        BTreeSet::from([module(&["core", "observe", "row"])]),
    );
    graph.insert(module(&["core", "elsewhere"]), BTreeSet::new());
    assert_eq!(
        arrows_up(&graph, &["core"], &CORE_FOLDERS),
        [
            "core::elsewhere is not placed in the folder order",
            "core::schema::rows imports core::observe::row, a folder above it",
        ]
    );
}

/// The browser layer's arrows point down (src/web/mod.rs): `ui` uses `run` and `state`; `run`
/// uses `state`, `measure` and `platform`; `state` imports neither `ui` nor `run`; the measuring
/// thread and the platform know nothing of the page; and nothing imports `ui` but the layer's
/// root, which hands the app to `main`.
#[test]
fn the_web_layers_point_down() {
    let graph = import_graph(&root().join("src"));
    let is_under = |module: &Vec<String>, prefix: &[&str]| {
        module.len() >= prefix.len() && module.iter().zip(prefix).all(|(a, b)| a == b)
    };
    assert!(
        graph
            .keys()
            .any(|module| is_under(module, &["web", "state"])),
        "the walk found web::state"
    );
    let rules: [(&[&str], &[&[&str]]); 5] = [
        (
            &["web", "state"],
            &[&["web", "ui"], &["web", "run"], &["web", "measure"]],
        ),
        (&["web", "run"], &[&["web", "ui"]]),
        (
            &["web", "measure"],
            &[&["web", "ui"], &["web", "run"], &["web", "state"]],
        ),
        (
            &["web", "platform"],
            &[
                &["web", "ui"],
                &["web", "run"],
                &["web", "state"],
                &["web", "measure"],
            ],
        ),
        (
            &["web", "js"],
            &[
                &["web", "ui"],
                &["web", "run"],
                &["web", "state"],
                &["web", "measure"],
            ],
        ),
    ];
    let mut broken = Vec::new();
    for (module, targets) in &graph {
        for target in targets {
            for (layer, forbidden) in rules {
                if is_under(module, layer)
                    && forbidden.iter().any(|prefix| is_under(target, prefix))
                {
                    broken.push(format!(
                        "{} imports {}",
                        module.join("::"),
                        target.join("::")
                    ));
                }
            }
            let outside_ui = !is_under(module, &["web", "ui"]) && module != &["web".to_owned()];
            if outside_ui && is_under(target, &["web", "ui"]) {
                broken.push(format!(
                    "{} imports the components ({})",
                    module.join("::"),
                    target.join("::")
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the web layers: {broken:#?}"
    );
}

#[test]
fn the_core_never_reads_a_clock_or_touches_the_browser() {
    let mut files = Vec::new();
    rust_files(&root().join("src/core"), &mut files);
    assert!(files.len() > 40);
    let forbidden = [
        "web_sys",
        "js_sys",
        "wasm_bindgen",
        "leptos",
        "Instant::now",
        "SystemTime::now",
        "thread::sleep",
    ];
    let mut found = Vec::new();
    for file in files {
        let code = production_code(&fs::read_to_string(&file).expect("readable"));
        for word in forbidden {
            if code.contains(word) {
                found.push(format!("{}: {word}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "the core must stay pure: {found:#?}");
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("sim/src"), &mut files);
    rust_files(&root().join("cli/src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = fs::read_to_string(file).expect("readable").lines().count();
            (lines > 1_000).then(|| format!("{}: {lines} lines", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by what they own: {long:#?}");
}

/// The parts of the split wasm (docs/design/architecture.md, *Parts of the wasm*).
const WASM_PARTS: [&str; 5] = ["results", "run", "measure", "reader", "live_charts"];

/// Every split point of the wasm names one of the documented parts, is `fallible` (a part that
/// cannot be fetched must be an error the page shows, never a panic, which would abort the whole
/// wasm), and is listed by name in the architecture page.
#[test]
fn every_split_point_is_fallible_and_documented() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let doc = fs::read_to_string(root().join("docs/design/architecture.md")).expect("readable");
    let mut found = 0;
    let mut problems = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[wasm_split(") {
            let attribute_and_after = &rest[at..];
            let end = attribute_and_after
                .find(")]")
                .expect("the attribute closes");
            let arguments = &attribute_and_after["#[wasm_split(".len()..end];
            let part = arguments
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            let after = &attribute_and_after[end..];
            let name: String = after[after.find("fn ").expect("a function follows") + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let place = format!("{} `{name}`", file.display());
            if !WASM_PARTS.contains(&part.as_str()) {
                problems.push(format!(
                    "{place}: part `{part}` is not one of {WASM_PARTS:?}"
                ));
            }
            if !arguments
                .split(',')
                .any(|argument| argument.trim() == "fallible")
            {
                problems.push(format!("{place}: not `fallible`"));
            }
            if !doc.contains(&name) {
                problems.push(format!("{place}: not named in docs/design/architecture.md"));
            }
            found += 1;
            rest = &rest[at + end..];
        }
    }
    assert!(
        found >= WASM_PARTS.len(),
        "the walk found {found} split points"
    );
    assert!(problems.is_empty(), "split points: {problems:#?}");
}

/// The checker itself: a circle it is shown is a circle it reports.
#[test]
fn the_circle_finder_finds_circles() {
    let module = |name: &str| vec![name.to_owned()];
    let mut graph = BTreeMap::new();
    graph.insert(module("a"), BTreeSet::from([module("b")]));
    graph.insert(module("b"), BTreeSet::from([module("c")]));
    graph.insert(module("c"), BTreeSet::from([module("a")]));
    graph.insert(module("d"), BTreeSet::from([module("a")]));
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]]
    );
    graph.insert(module("c"), BTreeSet::new());
    assert!(circles(&graph).is_empty());
}

/// And the import reader: `use` groups, `super::`, and inline paths all count.
#[test]
fn imports_are_read_from_use_groups_super_and_inline_paths() {
    let known: BTreeSet<Vec<String>> = [
        vec!["core".to_owned()],
        vec!["core".to_owned(), "a".to_owned()],
        vec!["core".to_owned(), "b".to_owned()],
        vec!["core".to_owned(), "c".to_owned()],
        vec!["core".to_owned(), "d".to_owned()],
    ]
    .into_iter()
    .collect();
    let file = ModuleFile {
        module: vec!["core".to_owned(), "a".to_owned()],
        code: production_code(
            "use crate::core::{b::Thing, c};\nfn f() { super::d::g(); }\n#[cfg(test)]\nmod tests {\n    use crate::core::web;\n}\n",
        ),
    };
    let found = imports(&file, &known);
    let names: Vec<String> = found.iter().map(|module| module.join("::")).collect();
    assert_eq!(names, ["core::b", "core::c", "core::d"]);
}

/// The numbers the per-read callback answers `pump_response` with are written twice, in
/// `transport.js` and in its bindings; they must agree, name by name.
#[test]
fn the_read_verdicts_agree_between_javascript_and_rust() {
    let js = fs::read_to_string(root().join("src/web/js/transport.js")).expect("transport.js");
    let rust = fs::read_to_string(root().join("src/web/js/mod.rs")).expect("js/mod.rs");
    for name in ["KEEP_READING", "READ_TO_THE_END", "STOP_READING"] {
        let js_value = js
            .lines()
            .find_map(|line| line.strip_prefix(&format!("export const {name} = ")))
            .and_then(|rest| rest.strip_suffix(';'))
            .unwrap_or_else(|| panic!("transport.js exports {name}"));
        let rust_value = rust
            .lines()
            .find_map(|line| line.strip_prefix(&format!("pub const {name}: u32 = ")))
            .and_then(|rest| rest.strip_suffix(';'))
            .unwrap_or_else(|| panic!("js/mod.rs defines {name}"));
        assert_eq!(js_value, rust_value, "{name}");
    }
}
