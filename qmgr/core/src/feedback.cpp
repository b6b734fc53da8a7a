#include "cqmgr/core/feedback.hpp"

#include <climits>
#include <cmath>
#include <cstdio>

namespace cqmgr::core {

double Feedback::value(int window) const {
    if (window < 1) window = 1;
    switch (kind) {
    case Kind::constant: return base;
    case Kind::per_window: return base / window;
    case Kind::per_sqrt_window: return base / std::sqrt(static_cast<double>(window));
    }
    return base;
}

std::optional<Feedback> parse_feedback(std::string_view text, bool allow_sqrt) {
    // Same grammar as Postfix: a number, optionally "/" and a number or the
    // name of the window dependence, with nothing after it.
    std::string s(text);
    double num = 0;
    char slash[2] = {0, 0};
    char denom[32] = {0};
    char junk = 0;
    int n = std::sscanf(s.c_str(), "%lf %1[/] %30s%c", &num, slash, denom, &junk);
    Feedback fb;
    if (n == 1) {
        fb.base = num;
    } else if (n == 3) {
        std::string_view d(denom);
        if (d == "concurrency") {
            fb.kind = Feedback::Kind::per_window;
            fb.base = num;
        } else if (d == "sqrt_concurrency" && allow_sqrt) {
            fb.kind = Feedback::Kind::per_sqrt_window;
            fb.base = num;
        } else {
            double dv = 0;
            char j2 = 0;
            if (num < 0 || num > INT_MAX || std::sscanf(denom, "%lf%c", &dv, &j2) != 1 ||
                dv < 1.0 / INT_MAX || dv > INT_MAX)
                return std::nullopt;
            fb.base = num / dv;
        }
    } else {
        return std::nullopt;
    }
    if (!(fb.base >= 0 && fb.base <= 1)) return std::nullopt;
    return fb;
}

} // namespace cqmgr::core
