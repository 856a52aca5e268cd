// C++ reference for bench/trees.ssp: one heap node per Node (new/delete),
// Leaf is a null pointer; every tree is deleted as soon as it is checked.
#include <cstdint>
#include <cstdio>

struct Node {
    Node* l;
    Node* r;
};

static Node* make(int d) {
    if (d == 0) return new Node{nullptr, nullptr};
    Node* l = make(d - 1);
    Node* r = make(d - 1);
    return new Node{l, r};
}

static int64_t check(const Node* t) {
    if (!t) return 0;
    return 1 + check(t->l) + check(t->r);
}

static void destroy(Node* t) {
    if (!t) return;
    destroy(t->l);
    destroy(t->r);
    delete t;
}

int main() {
    const int min_depth = 4, max_depth = 16, stretch = max_depth + 1;
    Node* s = make(stretch);
    std::printf("stretch tree of depth %d\t check: %lld\n", stretch, (long long)check(s));
    destroy(s);
    Node* long_lived = make(max_depth);
    for (int d = min_depth; d <= max_depth; d += 2) {
        int64_t iterations = int64_t(1) << (max_depth - d + min_depth);
        int64_t sum = 0;
        for (int64_t i = 0; i < iterations; i++) {
            Node* t = make(d);
            sum += check(t);
            destroy(t);
        }
        std::printf("%lld\t trees of depth %d\t check: %lld\n", (long long)iterations, d, (long long)sum);
    }
    std::printf("long lived tree of depth %d\t check: %lld\n", max_depth, (long long)check(long_lived));
    destroy(long_lived);
}
