#include "control_dispatch.hpp"

namespace cqmgr::qmgr {

// Queries are the verbs before suspend; each has a slot in size_hints_.
static_assert(static_cast<std::size_t>(control::Verb::suspend) <= 16);

std::string ControlDispatch::answer(std::string_view line, uid_t uid) const {
    control::Parsed p = control::parse_request(line);
    if (!p.ok()) return control::reply_line(control::error_reply(p.error));
    const control::Request& r = *p.request;
    // A reply that cannot be built costs the client its answer, never the
    // daemon its life.
    try {
        if (r.is_query())
            return control::reply_line(queries_.answer(r),
                                       size_hints_[static_cast<std::size_t>(r.verb)]);
        return control::reply_line(commands_.execute(r, uid));
    } catch (const std::exception& e) {
        return control::reply_line(
            control::error_reply(std::string("internal error: ") + e.what()));
    }
}

} // namespace cqmgr::qmgr
