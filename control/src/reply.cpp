#include "cqmgr/control/reply.hpp"

namespace cqmgr::control {

namespace {

// What dump() does (compact, invalid UTF-8 replaced), into a string with
// room for `reserve` bytes. A `queues` reply with 1,000 destinations is
// ~260 kB; growing it by doubling copied it ten times, and each large
// reallocation made the allocator consolidate the small chunks the reply's
// own tree had left behind.
std::string line_of(const Json& reply, std::size_t reserve) {
    std::string s;
    s.reserve(reserve);
    nlohmann::detail::serializer<Json> out(nlohmann::detail::output_adapter<char>(s), ' ',
                                           Json::error_handler_t::replace);
    out.dump(reply, false, false, 0);
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

Json object_with_room(std::size_t members) {
    Json j = Json::object();
    j.get_ref<Json::object_t&>().reserve(members);
    return j;
}

std::string reply_line(const Json& reply) {
    return line_of(reply, 0);
}

std::string reply_line(const Json& reply, std::size_t& size_hint) {
    std::string s = line_of(reply, size_hint + size_hint / 8);
    size_hint = s.size();
    return s;
}

} // namespace cqmgr::control
