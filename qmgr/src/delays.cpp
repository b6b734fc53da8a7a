#include "delays.hpp"

#include <cmath>
#include <cstdio>
#include <sys/time.h>

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
        while (out.back() == '0') out.pop_back();
        if (out.back() == '.') out.pop_back();
    }
    return out;
}

std::string delay_text(int64_t arrival_sec, int64_t arrival_usec, const protocol::TimeVal& active) {
    timeval now;
    ::gettimeofday(&now, nullptr);
    auto secs = [](int64_t s, int64_t us) { return static_cast<double>(s) + us / 1e6; };
    double t = secs(now.tv_sec, now.tv_usec);
    double in = secs(arrival_sec, arrival_usec);
    double act = secs(active.sec, active.usec);
    return "delay=" + format_seconds(t - in) + ", delays=" + format_seconds(act - in) + "/" +
           format_seconds(t - act) + "/0/0";
}

} // namespace cqmgr::qmgr
