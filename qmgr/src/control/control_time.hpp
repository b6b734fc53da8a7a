// Times as the control socket's log lines and texts write them.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace cqmgr::qmgr {

// Unix seconds as ISO 8601 in UTC, e.g. 2026-11-24T06:00:00Z: one form for
// every text that names a time, whatever the host's time zone.
inline std::string iso_utc(int64_t t) {
    time_t tt = static_cast<time_t>(t);
    struct tm tm;
    ::gmtime_r(&tt, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace cqmgr::qmgr
