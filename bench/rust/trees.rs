// Rust reference for bench/trees.ssp: one heap node per `Node`, `Leaf` is no
// allocation; every tree is freed as soon as it is dropped.

enum Tree {
    Leaf,
    Node(Box<(Tree, Tree)>),
}

fn make(d: i64) -> Tree {
    if d == 0 {
        Tree::Node(Box::new((Tree::Leaf, Tree::Leaf)))
    } else {
        Tree::Node(Box::new((make(d - 1), make(d - 1))))
    }
}

fn check(t: &Tree) -> i64 {
    match t {
        Tree::Leaf => 0,
        Tree::Node(n) => 1 + check(&n.0) + check(&n.1),
    }
}

fn main() {
    let min_depth = 4;
    let max_depth = 16;
    let stretch = max_depth + 1;
    println!("stretch tree of depth {stretch}\t check: {}", check(&make(stretch)));
    let long_lived = make(max_depth);
    let mut d = min_depth;
    while d <= max_depth {
        let iterations = 1i64 << (max_depth - d + min_depth);
        let mut sum = 0;
        for _ in 0..iterations {
            sum += check(&make(d));
        }
        println!("{iterations}\t trees of depth {d}\t check: {sum}");
        d += 2;
    }
    println!("long lived tree of depth {max_depth}\t check: {}", check(&long_lived));
}
