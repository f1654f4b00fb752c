//! The browser entry point: install the panic hook and mount the app. Built by trunk for wasm32.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(strobe::web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "strobe's app runs in the browser: build it with `trunk build` (see README.md). \
         For artifacts on the command line use `cargo run -p strobe-artifact -- --help`."
    );
    std::process::exit(2);
}
