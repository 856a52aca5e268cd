// Rust reference for bench/persist.ssp: the same persistent red-black tree
// (Okasaki's insertion), one `Rc` node per `T(..)`, versions kept in a
// `Vec`; a node is freed when the last version sharing it goes.

use std::rc::Rc;

#[derive(Clone, Copy, PartialEq)]
enum Color {
    Red,
    Black,
}

#[derive(Clone)]
enum Tree {
    E,
    T(Rc<Node>),
}

struct Node {
    c: Color,
    l: Tree,
    k: i64,
    r: Tree,
}

use Color::*;

fn t(c: Color, l: Tree, k: i64, r: Tree) -> Tree {
    Tree::T(Rc::new(Node { c, l, k, r }))
}

fn red(t: &Tree) -> Option<&Node> {
    match t {
        Tree::T(n) if n.c == Red => Some(n),
        _ => None,
    }
}

fn balance(c: Color, l: Tree, k: i64, r: Tree) -> Tree {
    if c == Black {
        if let Some(ln) = red(&l) {
            if let Some(ll) = red(&ln.l) {
                return t(Red, t(Black, ll.l.clone(), ll.k, ll.r.clone()), ln.k, t(Black, ln.r.clone(), k, r));
            }
            if let Some(lr) = red(&ln.r) {
                return t(Red, t(Black, ln.l.clone(), ln.k, lr.l.clone()), lr.k, t(Black, lr.r.clone(), k, r));
            }
        }
        if let Some(rn) = red(&r) {
            if let Some(rl) = red(&rn.l) {
                return t(Red, t(Black, l, k, rl.l.clone()), rl.k, t(Black, rl.r.clone(), rn.k, rn.r.clone()));
            }
            if let Some(rr) = red(&rn.r) {
                return t(Red, t(Black, l, k, rn.l.clone()), rn.k, t(Black, rr.l.clone(), rr.k, rr.r.clone()));
            }
        }
    }
    t(c, l, k, r)
}

fn ins(tr: &Tree, v: i64) -> Tree {
    match tr {
        Tree::E => t(Red, Tree::E, v, Tree::E),
        Tree::T(n) => {
            if v < n.k {
                balance(n.c, ins(&n.l, v), n.k, n.r.clone())
            } else if v > n.k {
                balance(n.c, n.l.clone(), n.k, ins(&n.r, v))
            } else {
                tr.clone()
            }
        }
    }
}

fn insert(tr: &Tree, v: i64) -> Tree {
    match ins(tr, v) {
        Tree::T(n) => t(Black, n.l.clone(), n.k, n.r.clone()),
        Tree::E => Tree::E,
    }
}

fn member(tr: &Tree, v: i64) -> bool {
    match tr {
        Tree::E => false,
        Tree::T(n) => {
            if v < n.k {
                member(&n.l, v)
            } else if v > n.k {
                member(&n.r, v)
            } else {
                true
            }
        }
    }
}

fn size(tr: &Tree) -> i64 {
    match tr {
        Tree::E => 0,
        Tree::T(n) => size(&n.l) + 1 + size(&n.r),
    }
}

fn next(x: i64) -> i64 {
    (x * 1103515245 + 12345) % 2147483648
}

fn main() {
    let n = 300000;
    let every = 30000;
    let mut tr = Tree::E;
    let mut versions = Vec::new();
    let mut x = 12345;
    for i in 0..n {
        x = next(x);
        tr = insert(&tr, x);
        if (i + 1) % every == 0 {
            versions.push(tr.clone());
        }
    }
    let mut total = 0;
    let mut hits = 0;
    for v in &versions {
        total += size(v);
        let mut y = 12345;
        for _ in 0..30000 {
            y = next(y);
            if member(v, y) {
                hits += 1;
            }
        }
    }
    println!("versions {}, nodes {total}, hits {hits}", versions.len());
}
