//! Prints the syntax tree and errors of a PTX file: `cargo run -p ptxeq-syntax --example dump -- FILE`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump FILE.ptx");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    print!("{}", ptxeq_syntax::parse(&text).debug_tree());
}
