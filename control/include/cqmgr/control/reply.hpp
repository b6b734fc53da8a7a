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

// The object as one reply line: compact JSON and a newline.  Bytes that are
// not valid UTF-8 (an agent's reason text, a recipient address) are
// replaced with U+FFFD rather than failing the reply.
std::string reply_line(const Json& reply);
std::string reply_line(const nlohmann::json& reply);

} // namespace cqmgr::control
