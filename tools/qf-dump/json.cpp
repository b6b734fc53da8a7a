#include "json.hpp"

#include <string>

namespace qfdump {

Json json_bytes(std::string_view bytes) {
    std::string utf8;
    utf8.reserve(bytes.size());
    for (unsigned char c : bytes) {
        if (c < 0x80) {
            utf8.push_back(static_cast<char>(c));
        } else {
            utf8.push_back(static_cast<char>(0xC0 | (c >> 6)));
            utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
    }
    return utf8;
}

void print_json(std::ostream& out, const Json& doc) {
    out << doc.dump(-1, ' ', /*ensure_ascii=*/true) << "\n";
}

} // namespace qfdump
