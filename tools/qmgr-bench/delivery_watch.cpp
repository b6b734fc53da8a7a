#include "delivery_watch.hpp"

#include "clock.hpp"

#include <cstdlib>

namespace bench {

DeliveryWatch::DeliveryWatch(std::string maillog, std::string tag)
    : tail_(std::move(maillog)), tag_(std::move(tag)) {}

// One stamp for the whole batch of new lines.
void DeliveryWatch::poll() {
    auto lines = tail_.read_new_lines();
    if (lines.empty()) return;
    double now = boot_seconds();
    for (const auto& l : lines)
        account(l, now);
}

// Counts one maillog line: a to=<...> record, or a fatal/panic line.
void DeliveryWatch::account(const std::string& raw, double now) {
    if (raw.find(": to=<") == std::string::npos) {
        if (first_fatal_.empty() && (raw.find("]: fatal: ") != std::string::npos ||
                                     raw.find("]: panic: ") != std::string::npos))
            first_fatal_ = raw;
        return;
    }
    auto line = compat::parse_log_line(raw);
    if (!line || line->queue_id.empty()) return;
    auto d = compat::parse_delivery(line->text);
    if (!d) return;
    if (d->status != "sent") {
        if (d->status == "deferred")
            ++deferred_;
        else if (first_neither_.empty())
            first_neither_ = raw;
        if (not_sent_++ == 0) first_not_sent_ = raw;
        return;
    }
    ++sent_;
    if (first_sent_at_ == 0) first_sent_at_ = now;
    last_sent_at_ = now;
    if (!tag_.empty() && d->to.rfind(tag_, 0) == 0) {
        tagged_delays_.push_back(std::strtod(d->delay.c_str(), nullptr));
        tagged_recipients_.push_back(d->to);
        tagged_seen_at_.push_back(now);
        tagged_last_sent_at_ = now;
    }
}

} // namespace bench
