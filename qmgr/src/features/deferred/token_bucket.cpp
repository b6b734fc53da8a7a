#include "token_bucket.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

void TokenBucket::refill(int64_t now_us) {
    // A clock that went back gives nothing and moves the reference back,
    // so that no tokens are owed later for time that did not pass.
    if (now_us > last_us_)
        tokens_ = std::min(burst_, tokens_ + rate_ * static_cast<double>(now_us - last_us_) / 1e6);
    last_us_ = now_us;
}

bool TokenBucket::ready(int64_t now_us) {
    refill(now_us);
    return tokens_ >= 1.0;
}

bool TokenBucket::take(int64_t now_us) {
    if (!ready(now_us)) return false;
    tokens_ -= 1.0;
    return true;
}

bool TokenBucket::full(int64_t now_us) {
    refill(now_us);
    return tokens_ >= burst_;
}

} // namespace cqmgr::qmgr
