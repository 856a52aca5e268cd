// Rust reference for bench/churn.ssp: the same lists and strings per
// iteration (the range list, the mapped row, the filtered evens, the label),
// each dropped at the end of its iteration.

fn row(i: i64, n: i64) -> Vec<i64> {
    let range: Vec<i64> = (0..n).collect();
    range.iter().map(|j| (i * 31 + j * 17) % 1000).collect()
}

fn label(i: i64, total: i64) -> String {
    format!("row {i}: total {total}")
}

fn main() {
    let mut checksum: i64 = 0;
    let mut longest = 0;
    for i in 0..800000 {
        let xs = row(i, 64);
        let evens: Vec<i64> = xs.iter().copied().filter(|x| x % 2 == 0).collect();
        let total: i64 = evens.iter().sum();
        let text = label(i, total);
        checksum = (checksum + total + text.len() as i64) % 1000000007;
        if text.len() > longest {
            longest = text.len();
        }
    }
    println!("checksum {checksum}");
    println!("longest label {longest}");
}
