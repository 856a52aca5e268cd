// Rust reference for bench/deriv.ssp: the derivatives share subterms (`f`
// appears both in `mul(f, ..)` and in `d(x, f)`), so the Rust way is an
// `Rc` per node; `d` and `count` borrow, the smart constructors take their
// arguments by value and return one of them unchanged where they can.

use std::rc::Rc;

enum Expr {
    Val(i64),
    Var(String),
    Add(E, E),
    Mul(E, E),
    Pow(E, E),
    Ln(E),
}

type E = Rc<Expr>;

use Expr::*;

fn val(n: i64) -> E {
    Rc::new(Val(n))
}

fn pown(a: i64, b: i64) -> i64 {
    let mut r = 1i64;
    for _ in 0..b {
        r = r.wrapping_mul(a);
    }
    r
}

fn add(n0: E, m0: E) -> E {
    if let (Val(n), Val(m)) = (&*n0, &*m0) {
        return val(n.wrapping_add(*m));
    }
    if matches!(*n0, Val(0)) {
        return m0;
    }
    if matches!(*m0, Val(0)) {
        return n0;
    }
    if let Val(n) = *m0 {
        return add(val(n), n0);
    }
    if let (Val(n), Add(a, f)) = (&*n0, &*m0) {
        if let Val(m) = **a {
            return add(val(n.wrapping_add(m)), f.clone());
        }
    }
    if let Add(a, g) = &*m0 {
        if let Val(n) = **a {
            return add(val(n), add(n0, g.clone()));
        }
    }
    if let Add(f, g) = &*n0 {
        return add(f.clone(), add(g.clone(), m0));
    }
    Rc::new(Add(n0, m0))
}

fn mul(n0: E, m0: E) -> E {
    if let (Val(n), Val(m)) = (&*n0, &*m0) {
        return val(n.wrapping_mul(*m));
    }
    if matches!(*n0, Val(0)) || matches!(*m0, Val(0)) {
        return val(0);
    }
    if matches!(*n0, Val(1)) {
        return m0;
    }
    if matches!(*m0, Val(1)) {
        return n0;
    }
    if let Val(n) = *m0 {
        return mul(val(n), n0);
    }
    if let (Val(n), Mul(a, f)) = (&*n0, &*m0) {
        if let Val(m) = **a {
            return mul(val(n.wrapping_mul(m)), f.clone());
        }
    }
    if let Mul(a, g) = &*m0 {
        if let Val(n) = **a {
            return mul(val(n), mul(n0, g.clone()));
        }
    }
    if let Mul(f, g) = &*n0 {
        return mul(f.clone(), mul(g.clone(), m0));
    }
    Rc::new(Mul(n0, m0))
}

fn powr(m0: E, n0: E) -> E {
    if let (Val(m), Val(n)) = (&*m0, &*n0) {
        return val(pown(*m, *n));
    }
    if matches!(*n0, Val(0)) {
        return val(1);
    }
    if matches!(*n0, Val(1)) {
        return m0;
    }
    if matches!(*m0, Val(0)) {
        return val(0);
    }
    Rc::new(Pow(m0, n0))
}

fn ln(n: E) -> E {
    if matches!(*n, Val(1)) {
        return val(0);
    }
    Rc::new(Ln(n))
}

fn d(x: &str, e: &E) -> E {
    match &**e {
        Val(_) => val(0),
        Var(y) => val(if x == y { 1 } else { 0 }),
        Add(f, g) => add(d(x, f), d(x, g)),
        Mul(f, g) => add(mul(f.clone(), d(x, g)), mul(g.clone(), d(x, f))),
        Pow(f, g) => mul(
            powr(f.clone(), g.clone()),
            add(
                mul(mul(g.clone(), d(x, f)), powr(f.clone(), val(-1))),
                mul(ln(f.clone()), d(x, g)),
            ),
        ),
        Ln(f) => mul(d(x, f), powr(f.clone(), val(-1))),
    }
}

fn count(e: &E) -> i64 {
    match &**e {
        Val(_) | Var(_) => 1,
        Add(f, g) | Mul(f, g) | Pow(f, g) => count(f) + count(g),
        Ln(f) => count(f),
    }
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(10);
    let x = || Rc::new(Var("x".to_string()));
    let mut f = powr(x(), x());
    for i in 0..n {
        f = d("x", &f);
        println!("{} count: {}", i + 1, count(&f));
    }
    println!("done");
}
