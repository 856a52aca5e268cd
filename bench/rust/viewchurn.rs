// Rust reference for bench/viewchurn.ssp: each round collects the filtered
// Vec, formats a borrowed slice of its first 1000 elements, and drops both.

fn main() {
    let arg = |i: usize, default: i64| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().unwrap())
    };
    let (n, len) = (arg(1, 2000), arg(2, 200_000));
    let xs: Vec<i64> = (0..len).map(|i| (i * 7919) % 100003).collect();
    let mut total = 0;
    for r in 0..n {
        let ys: Vec<i64> = xs.iter().copied().filter(|x| x % 3 != r % 3).collect();
        let shown = format!("{:?}", &ys[..ys.len().min(1000)]);
        total += ys.len() + shown.len();
    }
    println!("{total}");
}
