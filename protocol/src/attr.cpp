#include "cqmgr/protocol/attr.hpp"

#include "cqmgr/protocol/base64.hpp"

#include <charconv>
#include <limits>

namespace cqmgr::protocol {

std::optional<std::string_view> AttrList::get(std::string_view name, int nth) const {
    for (const auto& a : attrs) {
        if (a.name == name && nth-- == 0) return std::string_view(a.value);
    }
    return std::nullopt;
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
        s += a.name;
    }
    return s.empty() ? "(empty list)" : s;
}

namespace {
// Appends `s` up to (not including) its first NUL, then a NUL.
void put_cstring(std::string& buf, std::string_view s) {
    auto nul = s.find('\0');
    if (nul != std::string_view::npos) s = s.substr(0, nul);
    buf.append(s);
    buf.push_back('\0');
}
} // namespace

AttrWriter& AttrWriter::str(std::string_view name, std::string_view value) {
    put_cstring(buf_, name);
    put_cstring(buf_, value);
    return *this;
}

AttrWriter& AttrWriter::num(std::string_view name, int64_t value) {
    put_cstring(buf_, name);
    put_cstring(buf_, std::to_string(static_cast<uint32_t>(value)));
    return *this;
}

AttrWriter& AttrWriter::lnum(std::string_view name, int64_t value) {
    put_cstring(buf_, name);
    put_cstring(buf_, std::to_string(static_cast<uint64_t>(value)));
    return *this;
}

AttrWriter& AttrWriter::data(std::string_view name, std::string_view bytes) {
    put_cstring(buf_, name);
    put_cstring(buf_, base64_encode(bytes));
    return *this;
}

AttrWriter& AttrWriter::end() {
    buf_.push_back('\0');
    return *this;
}

AttrParser::Status AttrParser::parse(std::string_view& input, AttrList& out) {
    if (!error_.empty()) return Status::error;
    while (!input.empty()) {
        auto nul = input.find('\0');
        std::string_view chunk = input.substr(0, nul);
        std::string& target = in_value_ ? value_ : name_;
        size_t limit = in_value_ ? limits_.max_value : limits_.max_name;
        if (target.size() + chunk.size() > limit) {
            error_ = std::string("attribute ") + (in_value_ ? "value" : "name") +
                     " longer than " + std::to_string(limit) + " bytes";
            return Status::error;
        }
        target.append(chunk);
        if (nul == std::string_view::npos) {
            in_list_ = true;
            input.remove_prefix(input.size());
            return Status::need_more;
        }
        input.remove_prefix(nul + 1);
        if (!in_value_) {
            if (name_.empty()) {
                // An empty name ends the list.
                out = std::move(current_);
                current_ = AttrList{};
                in_list_ = false;
                return Status::list;
            }
            in_list_ = true;
            // Hash delimiters carry no value of their own.
            if (name_ == "{" || name_ == "}") {
                name_.clear();
                continue;
            }
            in_value_ = true;
        } else {
            if (current_.attrs.size() >= limits_.max_attrs) {
                error_ = "more than " + std::to_string(limits_.max_attrs) + " attributes in one list";
                return Status::error;
            }
            current_.attrs.push_back(Attr{std::move(name_), std::move(value_)});
            name_.clear();
            value_.clear();
            in_value_ = false;
        }
    }
    return Status::need_more;
}

std::optional<AttrList> decode_one(std::string_view bytes, std::string* error) {
    AttrParser p;
    AttrList out;
    auto st = p.parse(bytes, out);
    if (st == AttrParser::Status::list && bytes.empty()) return out;
    if (error) {
        if (st == AttrParser::Status::error) *error = p.error();
        else if (st == AttrParser::Status::need_more) *error = "truncated attribute list";
        else *error = "trailing bytes after attribute list";
    }
    return std::nullopt;
}

namespace {
// Parses all of `text` as an unsigned decimal no larger than `max`.
std::optional<uint64_t> parse_unsigned(std::string_view text, uint64_t max) {
    // sscanf("%u") skips leading white space and accepts a sign; senders never
    // use either, so we accept plain digits only.
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
