//! The `ioscope` binary: everything is in the library (`crates/cli/src/lib.rs`).

fn main() -> std::process::ExitCode {
    ioscope::main()
}
