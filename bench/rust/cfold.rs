// Rust reference for bench/cfold.ssp: one `Box` per `Add`/`Mul` node, the
// transformations take their trees by value (`*b` moves a child out of its
// box, whose memory the allocator hands to the next `Box::new`); `eval`
// borrows. Re-association builds right spines half a million nodes long
// and the functions recurse along them, so the work runs on a thread with
// a 512 MB stack, as `sspur run` runs programs.

enum Expr {
    // The variable number is never read, as in the original.
    #[allow(dead_code)]
    Var(i64),
    Val(i64),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
}

use Expr::*;

fn mk_expr(n: i64, v: i64) -> Expr {
    if n == 0 {
        if v == 0 {
            Var(1)
        } else {
            Val(v)
        }
    } else {
        Add(
            Box::new(mk_expr(n - 1, v + 1)),
            Box::new(mk_expr(n - 1, (v - 1).max(0))),
        )
    }
}

fn append_add(e0: Expr, e3: Expr) -> Expr {
    match e0 {
        Add(e1, e2) => Add(e1, Box::new(append_add(*e2, e3))),
        e0 => Add(Box::new(e0), Box::new(e3)),
    }
}

fn append_mul(e0: Expr, e3: Expr) -> Expr {
    match e0 {
        Mul(e1, e2) => Mul(e1, Box::new(append_mul(*e2, e3))),
        e0 => Mul(Box::new(e0), Box::new(e3)),
    }
}

fn reassoc(e: Expr) -> Expr {
    match e {
        Add(e1, e2) => append_add(reassoc(*e1), reassoc(*e2)),
        Mul(e1, e2) => append_mul(reassoc(*e1), reassoc(*e2)),
        e => e,
    }
}

fn cfold(e: Expr) -> Expr {
    match e {
        Add(e1, e2) => match (cfold(*e1), cfold(*e2)) {
            (Val(a), Val(b)) => Val(a.wrapping_add(b)),
            (Val(a), Add(f, b)) if matches!(*b, Val(_)) => {
                let Val(b) = *b else { unreachable!() };
                Add(Box::new(Val(a.wrapping_add(b))), f)
            }
            (Val(a), Add(b, f)) if matches!(*b, Val(_)) => {
                let Val(b) = *b else { unreachable!() };
                Add(Box::new(Val(a.wrapping_add(b))), f)
            }
            (g1, g2) => Add(Box::new(g1), Box::new(g2)),
        },
        Mul(e1, e2) => match (cfold(*e1), cfold(*e2)) {
            (Val(a), Val(b)) => Val(a.wrapping_mul(b)),
            (Val(a), Mul(f, b)) if matches!(*b, Val(_)) => {
                let Val(b) = *b else { unreachable!() };
                Mul(Box::new(Val(a.wrapping_mul(b))), f)
            }
            (Val(a), Mul(b, f)) if matches!(*b, Val(_)) => {
                let Val(b) = *b else { unreachable!() };
                Mul(Box::new(Val(a.wrapping_mul(b))), f)
            }
            (g1, g2) => Mul(Box::new(g1), Box::new(g2)),
        },
        e => e,
    }
}

fn eval(e: &Expr) -> i64 {
    match e {
        Var(_) => 0,
        Val(v) => *v,
        Add(l, r) => eval(l).wrapping_add(eval(r)),
        Mul(l, r) => eval(l).wrapping_mul(eval(r)),
    }
}

fn run() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(19);
    let e = mk_expr(n, 1);
    let v1 = eval(&e);
    let v2 = eval(&cfold(reassoc(e)));
    println!("{v1}");
    println!("{v2}");
}

fn main() {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}
