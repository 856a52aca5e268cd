// Rust reference for bench/binarytrees.ssp: one box per `Node` holding both
// children, `Tip` is no allocation; every tree is dropped (freed) as soon as
// it is checked.

enum Tree {
    Tip,
    Node(Box<(Tree, Tree)>),
}

fn make(d: i64) -> Tree {
    if d > 0 {
        Tree::Node(Box::new((make(d - 1), make(d - 1))))
    } else {
        Tree::Node(Box::new((Tree::Tip, Tree::Tip)))
    }
}

fn check(t: &Tree) -> i64 {
    match t {
        Tree::Tip => 0,
        Tree::Node(n) => check(&n.0) + check(&n.1) + 1,
    }
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(18);
    let min_depth = 4;
    let max_depth = n.max(min_depth + 2);
    let stretch = max_depth + 1;
    println!("stretch tree of depth {stretch}\t check: {}", check(&make(stretch)));
    let long = make(max_depth);
    let mut d = min_depth;
    while d <= max_depth {
        let count = 1i64 << (max_depth - d + min_depth);
        let mut sum = 0;
        for _ in 0..count {
            sum += check(&make(d));
        }
        println!("{count}\t trees of depth {d}\t check: {sum}");
        d += 2;
    }
    println!("long lived tree of depth {max_depth}\t check: {}", check(&long));
}
