#include "cqmgr/core/feedback.hpp"

#include <cmath>

namespace cqmgr::core {

double Feedback::value(int window) const {
    if (window < 1) window = 1;
    switch (kind) {
    case Kind::constant:
        return base;
    case Kind::per_window:
        return base / window;
    case Kind::per_sqrt_window:
        return base / std::sqrt(static_cast<double>(window));
    }
    return base;
}

} // namespace cqmgr::core
