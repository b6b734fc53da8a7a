#include "cqmgr/conf/config_error.hpp"

namespace cqmgr::conf {

namespace {
// Builds the what() text: "where: detail (postfix text)" with empty parts left out.
std::string describe(const std::string& where, const std::string& text, const std::string& detail) {
    std::string out = where.empty() ? std::string() : where + ": ";
    if (detail.empty() || detail == text) return out + text;
    return out + detail + " (" + text + ")";
}
} // namespace

ConfigError::ConfigError(std::string where, std::string postfix_text, std::string detail,
                         std::string warning)
    : std::runtime_error(describe(where, postfix_text, detail)), where_(std::move(where)),
      postfix_text_(std::move(postfix_text)), detail_(std::move(detail)),
      warning_(std::move(warning)) {}

} // namespace cqmgr::conf
