#include "cqmgr/control/reply.hpp"

namespace cqmgr::control {

namespace {
template <class J> std::string line_of(const J& reply) {
    std::string s = reply.dump(-1, ' ', false, J::error_handler_t::replace);
    s += '\n';
    return s;
}
} // namespace

Json error_reply(std::string_view text) {
    Json j;
    j["ok"] = false;
    j["error"] = std::string(text);
    return j;
}

std::string reply_line(const Json& reply) {
    return line_of(reply);
}

std::string reply_line(const nlohmann::json& reply) {
    return line_of(reply);
}

} // namespace cqmgr::control
