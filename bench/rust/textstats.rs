// Rust reference for bench/textstats.ssp: the same five passes, as iterator
// chains over borrowed slices of the text.

use std::io::Read;

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).unwrap();
    let lines = text.lines().count();
    let words = text.split_ascii_whitespace().count();
    let chars = text.chars().count();
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
    let letters: usize = text
        .split_ascii_whitespace()
        .map(|w| w.chars().count())
        .sum();
    println!("{lines} lines, {words} words, {chars} characters");
    println!("longest line: {longest} characters");
    println!(
        "average word length: {} characters",
        letters as f64 / words as f64
    );
}
