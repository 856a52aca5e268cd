// Rust reference for bench/wordfreq.ssp: the lower-cased text is one
// string, the words are borrowed slices of it counted in a HashMap, and the
// entries are sorted by count, then word.

use std::collections::HashMap;
use std::io::Read;

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).unwrap();
    let lower = text.to_ascii_lowercase();
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for w in lower.split_ascii_whitespace() {
        *counts.entry(w).or_insert(0) += 1;
    }
    let mut ranked: Vec<(&str, i64)> = counts.iter().map(|(w, c)| (*w, *c)).collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total: i64 = counts.values().sum();
    println!("{total} words, {} distinct", counts.len());
    for (w, c) in ranked.iter().take(20) {
        println!("{w} {c}");
    }
}
