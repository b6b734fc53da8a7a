#include "status_line.hpp"

#include "address.hpp"

#include <cmath>
#include <cstdio>
#include <strings.h>

namespace cqmgr::qmgr {

std::string format_seconds(double s) {
    if (s < 0) s = 0;
    int decimals = s >= 10 ? 0 : s >= 1 ? 1 : 2;
    double scale = std::pow(10.0, decimals);
    double v = std::floor(s * scale + 0.5) / scale;
    if (decimals == 1 && v >= 10) decimals = 0; // rounding crossed a boundary
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string out = buf;
    if (out.find('.') != std::string::npos) {
        while (out.back() == '0')
            out.pop_back();
        if (out.back() == '.') out.pop_back();
    }
    return out;
}

std::string delay_text(const protocol::TimeVal& arrival, const protocol::TimeVal& active,
                       const protocol::TimeVal& now) {
    auto secs = [](const protocol::TimeVal& tv) {
        return static_cast<double>(tv.sec) + tv.usec / 1e6;
    };
    double t = secs(now), in = secs(arrival), act = secs(active);
    return "delay=" + format_seconds(t - in) + ", delays=" + format_seconds(act - in) + "/" +
           format_seconds(t - act) + "/0/0";
}

std::string log_address(std::string_view addr, bool internal_form) {
    return internal_form ? std::string(addr) : quote_local(addr);
}

std::string status_line(const StatusLine& s, const queuefile::Recipient& r,
                        const queuefile::Envelope& env, const protocol::TimeVal& active,
                        const protocol::TimeVal& now) {
    std::string line(s.queue_id);
    std::string_view address = r.address(), orig = r.orig_rcpt();
    line += ": to=<" + log_address(address, s.internal_form) + ">";
    // The original recipient is shown only where it differs (in any case).
    bool same = orig.size() == address.size() &&
                ::strncasecmp(orig.data(), address.data(), address.size()) == 0;
    if (!orig.empty() && !same) line += ", orig_to=<" + log_address(orig, s.internal_form) + ">";
    line += ", relay=none, " + delay_text({env.arrival_sec, env.arrival_usec}, active, now);
    line += ", dsn=" + std::string(s.dsn) + ", status=" + std::string(s.status) + " (" +
            std::string(s.text) + ")";
    return line;
}

} // namespace cqmgr::qmgr
