#include "cqmgr/protocol/attr_parser.hpp"

#include "cqmgr/protocol/base64.hpp"

namespace cqmgr::protocol {

namespace {
// Longest base64 text that decodes to at most `n` bytes.
size_t encoded_limit(size_t n) {
    return (n + 2) / 3 * 4;
}

// Shows a name in an error message without flooding it.
std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s.substr(0, 64)) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > 64) out += "...";
    return out + "\"";
}
} // namespace

AttrParser::AttrParser(AttrFormat format, AttrLimits limits) : format_(format), limits_(limits) {}

void AttrParser::reset() {
    current_ = AttrList{};
    depth_ = 0;
    count_ = 0;
    name_.clear();
    value_.clear();
    in_value_ = false;
    in_list_ = false;
    error_.clear();
}

AttrParser::Status AttrParser::fail(std::string why) {
    error_ = std::move(why);
    if (error_.empty()) error_ = "malformed attribute list";
    return Status::error;
}

std::vector<Attr>& AttrParser::container() {
    std::vector<Attr>* c = &current_.attrs;
    for (size_t d = 0; d < depth_; ++d)
        c = &c->back().table;
    return *c;
}

bool AttrParser::take(std::string& target, std::string_view chunk, size_t limit, const char* what) {
    if (format_ == AttrFormat::base64) limit = encoded_limit(limit);
    if (target.size() + chunk.size() > limit) {
        error_ = std::string("expected an attribute ") + what + " of at most " +
                 std::to_string(limit) + " bytes" +
                 (format_ == AttrFormat::base64 ? " of base64" : "") + ", got a longer one";
        return false;
    }
    target.append(chunk);
    return true;
}

AttrParser::Status AttrParser::parse(std::string_view& input, AttrList& out) {
    if (!error_.empty()) return Status::error;
    return format_ == AttrFormat::null ? scan_null(input, out) : scan_line(input, out);
}

AttrParser::Status AttrParser::scan_null(std::string_view& input, AttrList& out) {
    while (!input.empty()) {
        in_list_ = true;
        auto nul = input.find('\0');
        std::string_view chunk = input.substr(0, nul);
        bool ok = in_value_ ? take(value_, chunk, limits_.max_value, "value")
                            : take(name_, chunk, limits_.max_name, "name");
        if (!ok) return Status::error;
        if (nul == std::string_view::npos) {
            input.remove_prefix(input.size());
            return Status::need_more;
        }
        input.remove_prefix(nul + 1);
        if (!in_value_ && !name_.empty() && name_ != "{" && name_ != "}") {
            in_value_ = true;
            continue;
        }
        // The list terminator and the table delimiters carry no value.
        Status st = on_record(in_value_, out);
        if (st != Status::need_more) return st;
    }
    return Status::need_more;
}

AttrParser::Status AttrParser::scan_line(std::string_view& input, AttrList& out) {
    const std::string_view stops = format_ == AttrFormat::plain ? "=\n" : ":\n";
    while (!input.empty()) {
        in_list_ = true;
        // A plain value may contain '='; a base64 value never contains ':'.
        size_t pos = (in_value_ && format_ == AttrFormat::plain) ? input.find('\n')
                                                                 : input.find_first_of(stops);
        std::string_view chunk = input.substr(0, pos);
        bool ok = in_value_ ? take(value_, chunk, limits_.max_value, "value")
                            : take(name_, chunk, limits_.max_name, "name");
        if (!ok) return Status::error;
        if (pos == std::string_view::npos) {
            input.remove_prefix(input.size());
            return Status::need_more;
        }
        char c = input[pos];
        input.remove_prefix(pos + 1);
        if (c == '\n') {
            Status st = end_line(out);
            if (st != Status::need_more) return st;
        } else if (!in_value_) {
            in_value_ = true;
        } else {
            return fail("expected a newline after the base64 value of " + quoted(name_) +
                        ", got ':'");
        }
    }
    return Status::need_more;
}

AttrParser::Status AttrParser::end_line(AttrList& out) {
    if (format_ == AttrFormat::base64) {
        auto name = base64_decode(name_);
        if (!name) return fail("expected a base64 attribute name, got " + quoted(name_));
        name_ = std::move(*name);
        if (in_value_) {
            auto value = base64_decode(value_);
            if (!value)
                return fail("expected a base64 value for " + quoted(name_) + ", got " +
                            quoted(value_));
            value_ = std::move(*value);
        }
        // The encoded-length check in take() allows up to two bytes more than
        // the limit once decoded; the decoded lengths are what the limits mean.
        if (name_.size() > limits_.max_name)
            return fail("expected an attribute name of at most " +
                        std::to_string(limits_.max_name) + " bytes, got " +
                        std::to_string(name_.size()) + " once decoded");
        if (value_.size() > limits_.max_value)
            return fail("expected an attribute value of at most " +
                        std::to_string(limits_.max_value) + " bytes for " + quoted(name_) +
                        ", got " + std::to_string(value_.size()) + " once decoded");
        // A decoded name is a C string to Postfix; a NUL inside cannot be meant.
        if (name_.find('\0') != std::string::npos)
            return fail("expected an attribute name without NUL, got " + quoted(name_));
    } else {
        // attr_print_plain sends the table delimiters with their C string NUL.
        if (!in_value_ &&
            (name_ == std::string_view("{\0", 2) || name_ == std::string_view("}\0", 2)))
            name_.pop_back();
        if (name_.find('\0') != std::string::npos)
            return fail("expected an attribute name without NUL, got " + quoted(name_));
        if (value_.find('\0') != std::string::npos)
            return fail("expected a value without NUL for " + quoted(name_));
    }
    return on_record(in_value_, out);
}

AttrParser::Status AttrParser::on_record(bool has_value, AttrList& out) {
    if (!has_value) {
        if (name_.empty()) {
            if (depth_ > 0) return fail("expected '}' to close the table, got the end of the list");
            out = std::move(current_);
            current_ = AttrList{};
            count_ = 0;
            in_list_ = false;
            return Status::list;
        }
        if (name_ == "{") {
            if (depth_ >= limits_.max_depth)
                return fail("expected tables nested at most " + std::to_string(limits_.max_depth) +
                            " deep, got a deeper '{'");
            if (count_ >= limits_.max_attrs)
                return fail("expected at most " + std::to_string(limits_.max_attrs) +
                            " attributes in one list, got more");
            container().push_back(Attr::make_table());
            ++depth_;
            ++count_;
            name_.clear();
            return Status::need_more;
        }
        if (name_ == "}") {
            if (depth_ == 0) return fail("expected '{' before '}', got a lone '}'");
            --depth_;
            name_.clear();
            return Status::need_more;
        }
        return fail(std::string("expected name") + (format_ == AttrFormat::plain ? '=' : ':') +
                    "value, got " + quoted(name_) + " without a value");
    }
    if (name_.empty()) return fail("expected an attribute name, got an empty one with a value");
    if (count_ >= limits_.max_attrs)
        return fail("expected at most " + std::to_string(limits_.max_attrs) +
                    " attributes in one list, got more");
    auto& c = container();
    if (depth_ > 0 && c.size() >= limits_.max_table_entries)
        return fail("expected at most " + std::to_string(limits_.max_table_entries) +
                    " entries in one table, got more");
    c.emplace_back(std::move(name_), std::move(value_));
    ++count_;
    name_.clear();
    value_.clear();
    in_value_ = false;
    return Status::need_more;
}

Result<AttrList, ProtocolError> decode_one(std::string_view bytes, AttrFormat format,
                                           AttrLimits limits) {
    using Kind = ProtocolError::Kind;
    AttrParser p(format, limits);
    AttrList out;
    auto st = p.parse(bytes, out);
    if (st == AttrParser::Status::list && bytes.empty()) return out;
    if (st == AttrParser::Status::error) return Failure{ProtocolError{Kind::malformed, p.error()}};
    if (st == AttrParser::Status::need_more)
        return Failure{ProtocolError{Kind::truncated,
                                     "expected a complete attribute list, got a truncated one"}};
    return Failure{
        ProtocolError{Kind::trailing, "expected one attribute list, got trailing bytes after it"}};
}

} // namespace cqmgr::protocol
