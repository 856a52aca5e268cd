// C++ reference for bench/churn.ssp: the same vectors and strings per
// iteration, each freed at the end of its iteration.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

static std::vector<int64_t> row(int64_t i, int64_t n) {
    std::vector<int64_t> range;
    range.reserve(n);
    for (int64_t j = 0; j < n; j++) range.push_back(j);
    std::vector<int64_t> out;
    out.reserve(n);
    for (int64_t j : range) out.push_back((i * 31 + j * 17) % 1000);
    return out;
}

static std::string label(int64_t i, int64_t total) {
    return "row " + std::to_string(i) + ": total " + std::to_string(total);
}

int main() {
    int64_t checksum = 0;
    size_t longest = 0;
    for (int64_t i = 0; i < 800000; i++) {
        std::vector<int64_t> xs = row(i, 64);
        std::vector<int64_t> evens;
        for (int64_t x : xs)
            if (x % 2 == 0) evens.push_back(x);
        int64_t total = 0;
        for (int64_t x : evens) total += x;
        std::string text = label(i, total);
        checksum = (checksum + total + (int64_t)text.size()) % 1000000007;
        if (text.size() > longest) longest = text.size();
    }
    std::printf("checksum %lld\n", (long long)checksum);
    std::printf("longest label %zu\n", longest);
}
