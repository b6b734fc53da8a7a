#include "cqmgr/protocol/attr_list.hpp"

#include <charconv>
#include <limits>

namespace cqmgr::protocol {

const char* format_name(AttrFormat f) {
    switch (f) {
    case AttrFormat::null:
        return "null";
    case AttrFormat::plain:
        return "plain";
    case AttrFormat::base64:
        return "base64";
    }
    return "unknown";
}

std::optional<std::string_view> AttrList::get(std::string_view name, int nth) const {
    for (const auto& a : attrs) {
        if (!a.is_table && a.name == name && nth-- == 0) return std::string_view(a.value);
    }
    return std::nullopt;
}

const Attr* AttrList::table(int nth) const {
    for (const auto& a : attrs) {
        if (a.is_table && nth-- == 0) return &a;
    }
    return nullptr;
}

bool AttrList::names_are(std::initializer_list<std::string_view> names) const {
    if (names.size() != attrs.size()) return false;
    size_t i = 0;
    for (auto n : names) {
        if (attrs[i++].name != n) return false;
    }
    return true;
}

std::string AttrList::describe_names() const {
    std::string s;
    for (const auto& a : attrs) {
        if (!s.empty()) s += ", ";
        if (a.is_table) {
            AttrList inner{a.table};
            s += "{" + (a.table.empty() ? std::string() : inner.describe_names()) + "}";
        } else {
            s += a.name;
        }
    }
    return s.empty() ? "(empty list)" : s;
}

namespace {
// Parses all of `text` as an unsigned decimal no larger than `max`.
std::optional<uint64_t> parse_unsigned(std::string_view text, uint64_t max) {
    if (text.empty()) return std::nullopt;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v > max) return std::nullopt;
    return v;
}
} // namespace

std::optional<int32_t> parse_int(std::string_view text) {
    auto v = parse_unsigned(text, std::numeric_limits<uint32_t>::max());
    if (!v) return std::nullopt;
    return static_cast<int32_t>(static_cast<uint32_t>(*v));
}

std::optional<int64_t> parse_long(std::string_view text) {
    auto v = parse_unsigned(text, std::numeric_limits<uint64_t>::max());
    if (!v) return std::nullopt;
    return static_cast<int64_t>(*v);
}

} // namespace cqmgr::protocol
