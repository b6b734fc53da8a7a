#include "scan.hpp"

#include "log.hpp"
#include "probes.hpp"

namespace cqmgr::qmgr {

void Scan::request(int flags) {
    if (running_) flags_ |= flags & (scan_flag::all | scan_flag::flush);
    // A partial pass does not see every name: what A asks for ("every file
    // now, whatever its time") needs a complete one.
    if (running_ && partial_ && (flags & scan_flag::all)) restart_later();
    nflags_ |= flags;
    if (!running_ && (flags & scan_flag::start)) {
        nflags_ &= ~scan_flag::start;
        begin();
    }
}

std::optional<std::string> Scan::next() {
    if (running_) {
        if (auto id = scanner_.next()) return id;
        running_ = false;
        ++passes_ended_;
        CQMGR_PROBE_SCAN_END(queue_.c_str());
        if (!(nflags_ & scan_flag::start)) log::debug("done " + queue_ + " queue scan");
    }
    if (!running_ && (nflags_ & scan_flag::start)) {
        begin();
        return scanner_.next();
    }
    return std::nullopt;
}

void Scan::restart_later() {
    if (running_) CQMGR_PROBE_SCAN_END(queue_.c_str());
    running_ = false;
    nflags_ |= flags_ | scan_flag::start;
}

void Scan::begin() {
    log::debug(std::string("qmgr_scan_start: ") + (nflags_ & scan_flag::start ? "re" : "") +
               "start " + queue_ + " queue scan");
    flags_ = nflags_ & ~scan_flag::start;
    nflags_ = 0;
    running_ = true;
    ++passes_begun_;
    CQMGR_PROBE_SCAN_START(queue_.c_str());
    partial_ = watch_ && !(flags_ & (scan_flag::full | scan_flag::all));
    using Listing = queuefile::QueueScanner::Listing;
    scanner_.start(queue_, watch_ ? &stamps_ : nullptr,
                   partial_ ? Listing::changed : Listing::every);
}

} // namespace cqmgr::qmgr
