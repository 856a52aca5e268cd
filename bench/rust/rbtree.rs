// Rust reference for bench/rbtree.ssp, written as an in-place Rust
// programmer writes it: `Option<Box<Node>>` moved by value, so insertion
// takes the path's boxes apart and reuses them (`take()` the child, rebuild
// in the same box); balancing re-links boxes and allocates only the new leaf.

#[derive(Clone, Copy, PartialEq)]
enum Color {
    Red,
    Black,
}

use Color::{Black, Red};

struct Node {
    color: Color,
    left: Tree,
    key: i64,
    val: bool,
    right: Tree,
}

type Tree = Option<Box<Node>>;

fn is_red(t: &Tree) -> bool {
    matches!(t, Some(n) if n.color == Red)
}

/// `l` is the red result of inserting into the left child of the black
/// node `n` (whose left child has been taken).
fn balance_left(mut l: Box<Node>, mut n: Box<Node>) -> Box<Node> {
    if is_red(&l.left) {
        let mut ll = l.left.take().unwrap();
        ll.color = Black;
        n.left = l.right.take();
        n.color = Black;
        l.left = Some(ll);
        l.right = Some(n);
        l.color = Red;
        l
    } else if is_red(&l.right) {
        let mut lr = l.right.take().unwrap();
        l.right = lr.left.take();
        l.color = Black;
        n.left = lr.right.take();
        n.color = Black;
        lr.left = Some(l);
        lr.right = Some(n);
        lr.color = Red;
        lr
    } else {
        l.color = Red;
        n.left = Some(l);
        n.color = Black;
        n
    }
}

/// `r` is the red result of inserting into the right child of the black
/// node `n` (whose right child has been taken).
fn balance_right(mut n: Box<Node>, mut r: Box<Node>) -> Box<Node> {
    if is_red(&r.left) {
        let mut rl = r.left.take().unwrap();
        n.right = rl.left.take();
        n.color = Black;
        r.left = rl.right.take();
        r.color = Black;
        rl.left = Some(n);
        rl.right = Some(r);
        rl.color = Red;
        rl
    } else if is_red(&r.right) {
        let mut rr = r.right.take().unwrap();
        rr.color = Black;
        n.right = r.left.take();
        n.color = Black;
        r.left = Some(n);
        r.right = Some(rr);
        r.color = Red;
        r
    } else {
        r.color = Red;
        n.right = Some(r);
        n.color = Black;
        n
    }
}

fn ins(t: Tree, k: i64, v: bool) -> Box<Node> {
    let Some(mut n) = t else {
        return Box::new(Node {
            color: Red,
            left: None,
            key: k,
            val: v,
            right: None,
        });
    };
    if k == n.key {
        n.val = v;
        return n;
    }
    if n.color == Red {
        if k < n.key {
            n.left = Some(ins(n.left.take(), k, v));
        } else {
            n.right = Some(ins(n.right.take(), k, v));
        }
        return n;
    }
    if k < n.key {
        if is_red(&n.left) {
            let l = ins(n.left.take(), k, v);
            balance_left(l, n)
        } else {
            n.left = Some(ins(n.left.take(), k, v));
            n
        }
    } else if is_red(&n.right) {
        let r = ins(n.right.take(), k, v);
        balance_right(n, r)
    } else {
        n.right = Some(ins(n.right.take(), k, v));
        n
    }
}

fn insert(t: Tree, k: i64, v: bool) -> Tree {
    if is_red(&t) {
        let mut n = ins(t, k, v);
        n.color = Black;
        Some(n)
    } else {
        Some(ins(t, k, v))
    }
}

fn fold<B>(t: &Tree, b: B, f: &impl Fn(i64, bool, B) -> B) -> B {
    match t {
        None => b,
        Some(n) => {
            let b = fold(&n.left, b, f);
            fold(&n.right, f(n.key, n.val, b), f)
        }
    }
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(4_200_000);
    let mut m: Tree = None;
    for i in (0..n).rev() {
        m = insert(m, i, i % 10 == 0);
    }
    println!("{}", fold(&m, 0i64, &|_, v, r| if v { r + 1 } else { r }));
}
