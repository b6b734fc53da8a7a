#include "cqmgr/protocol/attr_writer.hpp"

#include "cqmgr/protocol/base64.hpp"

namespace cqmgr::protocol {

namespace {
// Returns `s` up to (not including) its first NUL, as a C string would end.
std::string_view c_string(std::string_view s) {
    auto nul = s.find('\0');
    return nul == std::string_view::npos ? s : s.substr(0, nul);
}
} // namespace

void AttrWriter::put(std::string_view name, std::string_view value, bool keep_nul) {
    name = c_string(name);
    switch (format_) {
    case AttrFormat::null:
        buf_.append(name).push_back('\0');
        buf_.append(c_string(value)).push_back('\0');
        break;
    case AttrFormat::plain:
        buf_.append(name).push_back('=');
        buf_.append(c_string(value)).push_back('\n');
        break;
    case AttrFormat::base64:
        base64_append(buf_, name);
        buf_.push_back(':');
        base64_append(buf_, keep_nul ? value : c_string(value));
        buf_.push_back('\n');
        break;
    }
}

void AttrWriter::put_delimiter(std::string_view which) {
    switch (format_) {
    case AttrFormat::null:
        buf_.append(which).push_back('\0');
        break;
    case AttrFormat::plain:
        // attr_print_plain writes sizeof("{") bytes, so the NUL goes out too.
        buf_.append(which).push_back('\0');
        buf_.push_back('\n');
        break;
    case AttrFormat::base64:
        base64_append(buf_, which);
        buf_.push_back('\n');
        break;
    }
}

AttrWriter& AttrWriter::str(std::string_view name, std::string_view value) {
    put(name, value, false);
    return *this;
}

AttrWriter& AttrWriter::num(std::string_view name, int64_t value) {
    put(name, std::to_string(static_cast<uint32_t>(value)), false);
    return *this;
}

AttrWriter& AttrWriter::lnum(std::string_view name, int64_t value) {
    put(name, std::to_string(static_cast<uint64_t>(value)), false);
    return *this;
}

AttrWriter& AttrWriter::data(std::string_view name, std::string_view bytes) {
    // base64 of the raw bytes in every format; in the base64 format that is
    // the only encoding (attr_print64 does not encode data twice).
    if (format_ == AttrFormat::base64)
        put(name, bytes, true);
    else
        put(name, base64_encode(bytes), false);
    return *this;
}

AttrWriter& AttrWriter::table(const std::vector<std::pair<std::string, std::string>>& entries) {
    put_delimiter("{");
    for (const auto& [k, v] : entries)
        put(k, v, false);
    put_delimiter("}");
    return *this;
}

AttrWriter& AttrWriter::attrs(const AttrList& list) {
    for (const auto& a : list.attrs) {
        if (a.is_table) {
            put_delimiter("{");
            attrs(AttrList{a.table});
            put_delimiter("}");
        } else {
            put(a.name, a.value, true);
        }
    }
    return *this;
}

AttrWriter& AttrWriter::end() {
    buf_.push_back(format_ == AttrFormat::null ? '\0' : '\n');
    return *this;
}

std::string encode_list(const AttrList& list, AttrFormat format) {
    AttrWriter w(format);
    w.attrs(list).end();
    return w.take();
}

} // namespace cqmgr::protocol
