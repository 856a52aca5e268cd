// Rust reference for bench/records.ssp: owned lines, one boxed record per
// line whose region borrows the line, an insertion-ordered map of totals per
// batch, merged into the grand totals.

use std::collections::HashMap;

struct Sale<'a> {
    region: &'a str,
    amount: i64,
}

/// An insertion-ordered map, as Sspur's maps are.
#[derive(Default)]
struct OrderedMap {
    index: HashMap<String, usize>,
    entries: Vec<(String, i64)>,
}

impl OrderedMap {
    fn get_or(&self, k: &str, d: i64) -> i64 {
        self.index.get(k).map_or(d, |&i| self.entries[i].1)
    }
    fn put(&mut self, k: &str, v: i64) {
        match self.index.get(k) {
            Some(&i) => self.entries[i].1 = v,
            None => {
                self.index.insert(k.to_string(), self.entries.len());
                self.entries.push((k.to_string(), v));
            }
        }
    }
}

fn parse(line: &str) -> Box<Sale<'_>> {
    let f: Vec<&str> = line.split(',').collect();
    Box::new(Sale {
        region: f[0],
        amount: f[1].parse().expect("amount"),
    })
}

fn batch(b: i64, n: i64) -> OrderedMap {
    let mut lines: Vec<String> = Vec::new();
    for i in 0..n {
        let k = (i * 7919 + b * 104729) % 1000003;
        lines.push(format!("r{},{}", k % 97, k % 1000));
    }
    let sales: Vec<Box<Sale>> = lines.iter().map(|l| parse(l)).collect();
    sales.iter().fold(OrderedMap::default(), |mut m, s| {
        let v = m.get_or(s.region, 0) + s.amount;
        m.put(s.region, v);
        m
    })
}

fn main() {
    let mut totals = OrderedMap::default();
    for b in 0..25 {
        let m = batch(b, 100000);
        for (k, v) in m.entries.clone() {
            let t = totals.get_or(&k, 0) + v;
            totals.put(&k, t);
        }
    }
    let mut ranked = totals.entries.clone();
    ranked.sort_by(|a, b| a.0.cmp(&b.0));
    ranked.sort_by_key(|e| -e.1);
    let sum: i64 = totals.entries.iter().map(|e| e.1).sum();
    println!("{} regions, grand total {sum}", totals.entries.len());
    for (k, v) in ranked.iter().take(5) {
        println!("{k}: {v}");
    }
}
