//! Parses the files named on the command line and prints their diagnostics
//! (`--dump` also prints the AST): a debugging aid for the grammar.

fn main() {
    let mut dump = false;
    for arg in std::env::args().skip(1) {
        if arg == "--dump" {
            dump = true;
            continue;
        }
        let text = match std::fs::read_to_string(&arg) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{arg}: {e}");
                continue;
            }
        };
        let started = std::time::Instant::now();
        let (file, diags) = syntax::parse(&text);
        if std::env::var_os("SSPUR_PARSE_TIME").is_some() {
            let parsed = started.elapsed();
            let started = std::time::Instant::now();
            let tokens = syntax::lex(&text).len();
            eprintln!(
                "{arg}: {} bytes parsed in {parsed:?}; lexing alone: {tokens} tokens in {:?}",
                text.len(),
                started.elapsed()
            );
        }
        if dump {
            print!("{}", syntax::dump::dump(&file));
        }
        for d in &diags {
            let line = text[..d.span.start as usize].matches('\n').count() + 1;
            println!(
                "{arg}:{line}: {} (@{}..{})",
                d.message, d.span.start, d.span.end
            );
            for (span, text) in &d.labels {
                println!("  label @{}..{}: {text}", span.start, span.end);
            }
            for note in &d.notes {
                println!("  note: {note}");
            }
        }
        if diags.is_empty() {
            println!("{arg}: ok, {} items", file.items.len());
        }
    }
}
