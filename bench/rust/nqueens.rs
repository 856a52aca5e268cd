// Rust reference for bench/nqueens.ssp: partial solutions share their
// tails, so they are `Rc` linked lists; each column's solutions are a `Vec`.

use std::rc::Rc;

enum Sol {
    Nil,
    Cons(i64, Rc<Sol>),
}

fn safe(queen: i64, diag: i64, xs: &Sol) -> bool {
    match xs {
        Sol::Cons(q, qs) => {
            queen != *q && queen != q + diag && queen != q - diag && safe(queen, diag + 1, qs)
        }
        Sol::Nil => true,
    }
}

fn find_solutions(n: i64, queen: i64) -> Vec<Rc<Sol>> {
    if queen == 0 {
        return vec![Rc::new(Sol::Nil)];
    }
    let mut acc = Vec::new();
    for xs in find_solutions(n, queen - 1) {
        for q in (1..=n).rev() {
            if safe(q, 1, &xs) {
                acc.push(Rc::new(Sol::Cons(q, xs.clone())));
            }
        }
    }
    acc
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(13);
    println!("{}", find_solutions(n, n).len());
}
