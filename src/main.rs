//! The `skinbind` command. Everything it does is in the library (`skinbind::cli`).

fn main() -> std::process::ExitCode {
    skinbind::cli::main()
}
