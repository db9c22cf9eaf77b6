//! The `skinbind` command. Everything it does is in the library (`skinbind::cli`).

/// mimalloc, as rerun's viewer uses: a bind makes and drops some 250 bytes a vertex of short-lived buffers, which
/// the system allocator hands back to the kernel and then faults in again page by page on the next bind or
/// stage; mimalloc keeps and reuses them (docs/binding.md, "Speed").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    skinbind::cli::main()
}
