//! The browser entry point, built by trunk for wasm32: on a page, mount the app; in a worker
//! the page starts (the same wasm, with no window), read a workload file or serve
//! measurements, as the worker's name says (each from a part of the wasm the worker fetches as
//! it starts).

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    if web_sys::window().is_some() {
        leptos::mount::mount_to_body(strobe::web::App);
    } else if strobe::web::is_reader() {
        wasm_bindgen_futures::spawn_local(strobe::web::serve_reading());
    } else {
        wasm_bindgen_futures::spawn_local(strobe::web::serve_measurements());
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "strobe's app runs in the browser: build it with `trunk build` (see README.md). \
         For artifacts on the command line use `cargo run -p strobe-artifact -- --help`."
    );
    std::process::exit(2);
}
