// Minimal JSON output helpers for qf-dump.
#pragma once

#include <string>
#include <string_view>

namespace qfdump {

// A JSON string literal for arbitrary bytes: printable ASCII as is, the
// rest as \n, \t, \" ... or \u00XX, so every byte b maps to code point U+00bb
// (valid JSON for any input, and reversible).
std::string json_string(std::string_view bytes);

} // namespace qfdump
