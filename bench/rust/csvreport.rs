// Rust reference for bench/csvreport.ssp: the records borrow their fields
// from the input (`&str`), are collected into a Vec and folded into
// HashMaps, whose entries are sorted for the report.

use std::collections::HashMap;
use std::io::Read;

struct Sale<'a> {
    date: &'a str,
    region: &'a str,
    product: &'a str,
    quantity: i64,
    cents: i64,
}

fn parse(line: &str) -> Sale<'_> {
    let mut f = line.split(',');
    let mut next = || f.next().unwrap();
    Sale {
        date: next(),
        region: next(),
        product: next(),
        quantity: next().parse().unwrap(),
        cents: next().parse().unwrap(),
    }
}

/// The `n` largest entries, largest first, ties by key.
fn top<'a>(m: &HashMap<&'a str, i64>, n: usize) -> Vec<(&'a str, i64)> {
    let mut v: Vec<(&str, i64)> = m.iter().map(|(k, v)| (*k, *v)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.truncate(n);
    v
}

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).unwrap();
    let sales: Vec<Sale> = text.lines().skip(1).map(parse).collect();
    let mut revenue: HashMap<&str, i64> = HashMap::new();
    for s in &sales {
        *revenue.entry(s.region).or_insert(0) += s.quantity * s.cents;
    }
    let mut units: HashMap<&str, i64> = HashMap::new();
    for s in &sales {
        *units.entry(s.product).or_insert(0) += s.quantity;
    }
    let mut monthly: HashMap<&str, i64> = HashMap::new();
    for s in &sales {
        *monthly.entry(&s.date[..7]).or_insert(0) += s.quantity * s.cents;
    }
    println!(
        "{} sales, {} regions, {} products",
        sales.len(),
        revenue.len(),
        units.len()
    );
    for (k, v) in top(&revenue, 5) {
        println!("region {k}: {v}");
    }
    for (k, v) in top(&units, 5) {
        println!("product {k}: {v} units");
    }
    let mut months: Vec<(&str, i64)> = monthly.into_iter().collect();
    months.sort_unstable();
    for (k, v) in months {
        println!("month {k}: {v}");
    }
}
