#include "cqmgr/control/framing.hpp"

namespace cqmgr::control {

void LineFramer::append(std::string_view bytes) {
    if (too_long_) return;
    // Drop what was handed out already before the buffer grows, so that it
    // stays within about two reads of the limit.
    if (start_ > 0 && start_ == buf_.size()) {
        buf_.clear();
        start_ = 0;
    } else if (start_ >= limit_) {
        buf_.erase(0, start_);
        start_ = 0;
    }
    buf_.append(bytes);
}

LineFramer::Status LineFramer::next(std::string& line) {
    if (too_long_) return Status::too_long;
    size_t nl = buf_.find('\n', start_ + scanned_);
    if (nl == std::string::npos) {
        scanned_ = buf_.size() - start_;
        if (scanned_ >= limit_) too_long_ = true;
        return too_long_ ? Status::too_long : Status::need_more;
    }
    // The line with its newline must fit in the limit.
    if (nl - start_ + 1 > limit_) {
        too_long_ = true;
        return Status::too_long;
    }
    size_t end = nl;
    if (end > start_ && buf_[end - 1] == '\r') --end;
    line.assign(buf_, start_, end - start_);
    start_ = nl + 1;
    scanned_ = 0;
    return Status::line;
}

} // namespace cqmgr::control
