//! ioscope: argv → subcommand. Nothing else lives here.

mod fio;
mod peak;
mod quick;
mod signals;
mod status;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("quick") => quick::main(&args[1..]),
        Some("peak") => peak::main(&args[1..]),
        _ => fio::main(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ioscope: {e:#}");
            ExitCode::from(1)
        }
    }
}
