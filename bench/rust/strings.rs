// Rust reference for bench/strings.ssp: each word is built as an owned
// string and appended to the text (Sspur's push-then-join never builds the
// list), then the text is lower-cased into a second string, split into
// borrowed words, counted into an insertion-ordered map and ranked by two
// stable sorts of a copied entry list.

use std::collections::HashMap;

const SYLLABLES: [&str; 10] = ["Ka", "lo", "Mi", "ra", "Tu", "ne", "so", "Vi", "da", "Pe"];

fn word(seed: i64) -> String {
    let a = SYLLABLES[(seed % 10) as usize];
    let b = SYLLABLES[((seed / 10) % 10) as usize];
    let c = SYLLABLES[((seed / 100) % 10) as usize];
    let ab = [a, b].concat();
    if seed % 3 == 0 {
        ab
    } else {
        [ab.as_str(), c].concat()
    }
}

/// `counts`: a map in first-occurrence order.
fn counts<'a>(words: &[&'a str]) -> Vec<(&'a str, i64)> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut entries: Vec<(&str, i64)> = Vec::new();
    for w in words {
        match index.get(w) {
            Some(&i) => entries[i].1 += 1,
            None => {
                index.insert(w, entries.len());
                entries.push((w, 1));
            }
        }
    }
    entries
}

fn round(r: i64, n: i64) -> String {
    let mut seed = 42 + r;
    let mut text = String::new();
    for i in 0..n {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        let w = word((seed / 65536) % 1000);
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&w);
    }
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_ascii_whitespace().collect();
    let counts = counts(&words);
    let mut by_word = counts.clone();
    by_word.sort_by_key(|e| e.0);
    let mut ranked = by_word.clone();
    ranked.sort_by_key(|e| -e.1);
    let long: Vec<(&str, i64)> = ranked.iter().copied().filter(|e| e.0.len() == 6).collect();
    let top = ranked[0];
    format!(
        "round {r}: {} bytes, {} words, {} distinct, {} of six letters, top {} {}",
        text.len(),
        words.len(),
        counts.len(),
        long.len(),
        top.0,
        top.1
    )
}

fn main() {
    for r in 0..6 {
        println!("{}", round(r, 500000));
    }
}
