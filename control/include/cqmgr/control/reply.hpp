// The JSON replies' common parts: every reply is one nlohmann::json object
// on one line, with "ok" and, when it is false, "error".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cqmgr::control {

// Replies keep their keys in the order they were added ("ok" first), which
// is what a human reading `cqmgrctl --json` expects.
using Json = nlohmann::ordered_json;

// {"ok":false,"error":text}
Json error_reply(std::string_view text);

// An empty object with room for `members` members: the large replies hold
// thousands of small objects, and growing each member list one step at a
// time made most of their cost in allocations.
Json object_with_room(std::size_t members);

// The object as one reply line: compact JSON and a newline.  Bytes that are
// not valid UTF-8 (an agent's reason text, a recipient address) are
// replaced with U+FFFD rather than failing the reply.
std::string reply_line(const Json& reply);
// The same, with room reserved for `size_hint` bytes and a bit, and
// `size_hint` set to this line's size: a poller asks the same question
// again and again, and its answers are about as long as the last one.
std::string reply_line(const Json& reply, std::size_t& size_hint);

} // namespace cqmgr::control
