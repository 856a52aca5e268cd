// Rust reference for bench/pushes.ssp: a growing Vec<i64>; the pushed-then-
// joined lines built directly into one String (as Sspur's push-then-join
// does), each piece formatted into a temporary String first.

fn main() {
    let mut total: i64 = 0;
    let mut bytes: i64 = 0;
    for r in 0..160i64 {
        let mut xs: Vec<i64> = Vec::new();
        for i in 0..100000i64 {
            xs.push(i * r % 1009);
        }
        let mut text = String::new();
        for i in 0..20000usize {
            let piece = format!("{r}:{}", xs[i * 5]);
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&piece);
        }
        let mut row = String::new();
        for i in 0..5000 {
            let piece = format!("<{}>", i + r);
            row.push_str(&piece);
        }
        let width = row.len() as i64;
        total += xs.iter().sum::<i64>() + width;
        bytes += text.len() as i64;
    }
    println!("total {total}");
    println!("text bytes {bytes}");
}
