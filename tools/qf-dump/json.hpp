// JSON output for qf-dump, with nlohmann::json.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

namespace qfdump {

// Objects keep their keys in the order they are set (file order of the
// fields), not sorted.
using Json = nlohmann::ordered_json;

// Queue file bytes as a JSON string. They need not be UTF-8, which
// nlohmann::json requires of its strings, so each byte b becomes the code
// point U+00bb (Latin-1): valid JSON for any input, and reversible.
Json json_bytes(std::string_view bytes);

// Writes one JSON document and a newline; everything outside printable
// ASCII is escaped (\u00XX), as qf-dump's readers expect.
void print_json(std::ostream& out, const Json& doc);

} // namespace qfdump
