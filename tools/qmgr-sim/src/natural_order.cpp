#include "natural_order.hpp"

#include <cctype>

namespace cqmgr::sim {

namespace {

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// The run of digits of `s` from `i` on (which it advances).
std::string_view digits(std::string_view s, size_t& i) {
    size_t start = i;
    while (i < s.size() && is_digit(s[i]))
        ++i;
    return s.substr(start, i - start);
}

// -1, 0 or 1 as the number `a` is less than, equal to or greater than `b`,
// for digit strings of any length (no overflow).
int compare_numbers(std::string_view a, std::string_view b) {
    auto strip = [](std::string_view s) {
        size_t z = 0;
        while (z + 1 < s.size() && s[z] == '0')
            ++z;
        return s.substr(z);
    };
    auto x = strip(a), y = strip(b);
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    int c = x.compare(y);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

} // namespace

bool natural_less(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (is_digit(a[i]) && is_digit(b[j])) {
            auto x = digits(a, i), y = digits(b, j);
            if (int c = compare_numbers(x, y); c != 0) return c < 0;
            if (x.size() != y.size()) return x.size() > y.size(); // "007" before "7"
            continue;
        }
        if (a[i] != b[j])
            return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i, ++j;
    }
    return a.size() - i < b.size() - j;
}

} // namespace cqmgr::sim
