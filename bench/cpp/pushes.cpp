// C++ reference for bench/pushes.ssp: a growing vector<int64_t>; the lines
// appended straight into one string, each piece formatted into a temporary
// string first.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main() {
    int64_t total = 0, bytes = 0;
    for (int64_t r = 0; r < 160; r++) {
        std::vector<int64_t> xs;
        for (int64_t i = 0; i < 100000; i++) xs.push_back(i * r % 1009);
        std::string text;
        for (int64_t i = 0; i < 20000; i++) {
            std::string piece = std::to_string(r) + ":" + std::to_string(xs[i * 5]);
            if (i > 0) text.push_back('\n');
            text += piece;
        }
        std::string row;
        for (int64_t i = 0; i < 5000; i++) {
            std::string piece = "<" + std::to_string(i + r) + ">";
            row += piece;
        }
        int64_t sum = 0;
        for (int64_t x : xs) sum += x;
        total += sum + (int64_t)row.size();
        bytes += (int64_t)text.size();
    }
    std::printf("total %lld\n", (long long)total);
    std::printf("text bytes %lld\n", (long long)bytes);
}
