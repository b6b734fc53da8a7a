#include "warning_limiter.hpp"

namespace cqmgr::qmgr {

std::optional<std::string> WarningLimiter::filter(const std::string& kind, const std::string& text,
                                                  int64_t now) {
    auto [it, fresh] = kinds_.try_emplace(kind);
    Kind& k = it->second;
    if (!fresh && now < k.last_logged + interval_) {
        ++k.left_out;
        return std::nullopt;
    }
    std::string out = text;
    if (k.left_out > 0)
        out += " (" + std::to_string(k.left_out) + " more like this in the last " +
               std::to_string(now - k.last_logged) + " s)";
    k.last_logged = now;
    k.left_out = 0;
    return out;
}

} // namespace cqmgr::qmgr
