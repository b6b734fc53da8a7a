// Standard base64 (RFC 4648 alphabet with '=' padding), as Postfix uses for
// "data" attributes such as the delivery request's `time`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::protocol {

// Encodes bytes as padded base64.
std::string base64_encode(std::string_view bytes);

// Appends the padded base64 of `bytes` to `out`, which must not hold them.
void base64_append(std::string& out, std::string_view bytes);

// Decodes padded base64; nullopt on any character or padding error.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace cqmgr::protocol
